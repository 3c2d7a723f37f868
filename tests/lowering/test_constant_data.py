"""Weights at scale: constants reach the code as data, never as LLVM IR text. The
JIT reads the arrays where they are; an exported library holds their bytes and
maps them from its file when loaded; the compile cache keeps no copy and binds
the module's own arrays on a hit (lowering/codegen/constant_data.py)."""

from __future__ import annotations

import ctypes
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import tvmlite
from tvmlite.dsl import relax
from tvmlite.dsl.relax_mutator import ExprMutator
from tvmlite.lowering.codegen import elf_object
from tvmlite.lowering.codegen.constant_data import ConstantData
from tvmlite.lowering.codegen.link import find_compiler
from tvmlite.lowering.codegen.target import host_triple
from tvmlite.lowering.passes import LegalizeOps
from tvmlite.lowering.transform import Pass

N = 256  # a 256 KiB weight: far larger than any IR text of this module
TEXT = f"""
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, {N}), dtype="float32"), w: R.Tensor(({N}, {N}), dtype="float32"), b: R.Tensor(({N},), dtype="float32")) -> R.Tensor((1, {N}), dtype="float32"):
        R.func_attr({{"num_input": 1}})
        with R.dataflow():
            y = R.matmul(x, w)
            z = R.add(y, b)
            R.output(z)
        return z
"""
RNG = np.random.default_rng(1)
W = RNG.standard_normal((N, N)).astype("float32")
B = RNG.standard_normal(N).astype("float32")
X = RNG.standard_normal((1, N)).astype("float32")


def _module() -> tvmlite.IRModule:
    return tvmlite.parse(TEXT)


def _expected(w: np.ndarray = W) -> np.ndarray:
    return X @ w + B


def test_weights_are_not_in_the_llvm_ir():
    ex = tvmlite.build(_module(), params={"w": W, "b": B})
    text = ex.llvm_ir()
    # As IR text the weight would take several times its bytes (a float
    # constant prints as `float 0x3FD61E4F80000000`, 24 characters for 4 bytes).
    assert len(text) < W.nbytes / 2
    assert "@tvmlite_const_data.0 = external" in text and "[262144 x i8]" in text
    np.testing.assert_allclose(ex["main"](X), _expected(), rtol=1e-4, atol=1e-4)


def test_the_jit_reads_the_arrays_in_place():
    """No copy: what the array holds when the code runs is what the code reads."""
    w = W.copy()
    ex = tvmlite.build(_module(), params={"w": w, "b": B})
    np.testing.assert_allclose(ex["main"](X), _expected(w), rtol=1e-4, atol=1e-4)
    w[:, 0] += 1.0  # (docs/constants.md: arrays must not change; here it shows the sharing)
    np.testing.assert_allclose(ex["main"](X), _expected(w), rtol=1e-4, atol=1e-4)


def test_weights_from_a_mapped_file(tmp_path):
    from tvmlite.array_file import save_arrays

    save_arrays(tmp_path / "w.npz", {"w": W, "b": B})
    ex = tvmlite.build(_module(), params=tmp_path / "w.npz")
    np.testing.assert_allclose(ex["main"](X), _expected(), rtol=1e-4, atol=1e-4)


def _mapped_read_only(lib_path: Path, size: int) -> bool:
    """Whether this process maps `size` bytes or more of `lib_path` read-only
    (the weights, mapped from the file rather than copied)."""
    real = str(lib_path.resolve())
    total = 0
    for line in Path("/proc/self/maps").read_text().splitlines():
        parts = line.split()
        if len(parts) >= 6 and parts[5] == real and parts[1].startswith("r--"):
            start, end = (int(v, 16) for v in parts[0].split("-"))
            total += end - start
    return total >= size


def test_an_exported_library_holds_and_maps_its_weights(tmp_path):
    ex = tvmlite.build(_module(), params={"w": W, "b": B})
    path = tmp_path / "linear.so"
    ex.export_library(path)
    assert path.stat().st_size > W.nbytes
    script = textwrap.dedent(f"""
        import numpy as np, tvmlite, sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_constant_data import X, _mapped_read_only
        lib = tvmlite.load_module({str(path)!r})
        print(_mapped_read_only(__import__("pathlib").Path({str(path)!r}), {W.nbytes}))
        np.save({str(tmp_path / "out.npy")!r}, lib["main"](X))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"
    np.testing.assert_allclose(np.load(tmp_path / "out.npy"), _expected(), rtol=1e-4, atol=1e-4)


def test_the_cache_keeps_no_copy_and_binds_the_modules_arrays(cache_dir, tmp_path):
    first = tvmlite.build(_module(), params={"w": W, "b": B})
    assert "cache" not in first.timings
    (entry,) = cache_dir.glob("*.so")
    assert entry.stat().st_size < W.nbytes / 2  # the weights are not in it
    assert entry.with_suffix(".json").stat().st_size < W.nbytes / 2
    w = W.copy()
    hit = tvmlite.build(_module(), params={"w": w, "b": B})
    assert "cache" in hit.timings
    np.testing.assert_allclose(hit["main"](X), _expected(), rtol=1e-4, atol=1e-4)
    w[:, 0] += 1.0  # the hit reads this build's own array
    np.testing.assert_allclose(hit["main"](X), _expected(w), rtol=1e-4, atol=1e-4)
    w[:, 0] -= 1.0
    other = W.copy()
    other[0, 0] += 1.0
    assert "cache" not in tvmlite.build(_module(), params={"w": other, "b": B}).timings
    # exported from the hit: a self-contained library, under any prefix
    for name, prefix in (("net.so", None), ("same.so", "tvmlite_")):
        hit.export_library(tmp_path / name, prefix=prefix)
        lib = tvmlite.load_module(tmp_path / name)
        assert lib.manifest["constants"] == [
            {"nbytes": W.nbytes, "embedded": True},
            {"nbytes": B.nbytes, "embedded": True},
        ]
        np.testing.assert_allclose(lib["main"](X), _expected(), rtol=1e-4, atol=1e-4)
    with pytest.raises(tvmlite.TVMLiteError, match="constants are not in it"):
        tvmlite.load_module(entry)


def test_data_objects_link_into_libraries(tmp_path):
    """An object of data and absolute symbols, linked by the C compiler."""
    arrays = (np.arange(10, dtype="float32"), np.array([True, False]), np.arange(7, dtype="int16"))
    data = ConstantData(arrays=arrays)
    data.write_object(tmp_path / "d.o", host_triple(), [True, False, True])
    (tmp_path / "g.c").write_text(
        'extern const char a[] __asm__("tvmlite_const_data.0");\n'
        'extern const char b[] __asm__("tvmlite_const_data.1");\n'
        'extern const char c[] __asm__("tvmlite_const_data.2");\n'
        "const void* get(int k) { return k == 0 ? (const void*)a : k == 1 ? (const void*)b : c; }\n"
    )
    lib = tmp_path / "l.so"
    cmd = [*find_compiler(), "-shared", "-fPIC", "-o", str(lib), str(tmp_path / "g.c")]
    done = subprocess.run([*cmd, str(tmp_path / "d.o")], capture_output=True, text=True)
    assert done.returncode == 0 and "executable stack" not in done.stderr, done.stderr
    dll = ctypes.CDLL(str(lib))
    dll.get.restype = ctypes.c_void_p
    first = (ctypes.c_float * 10).from_address(dll.get(0))
    np.testing.assert_array_equal(np.ctypeslib.as_array(first), arrays[0])
    assert dll.get(0) % elf_object.ALIGN == 0
    assert dll.get(1) is None  # kept apart: absolute 0 until bound
    third = (ctypes.c_int16 * 7).from_address(dll.get(2))
    np.testing.assert_array_equal(np.ctypeslib.as_array(third), arrays[2])


def test_objects_are_for_known_machines(tmp_path):
    with pytest.raises(tvmlite.TVMLiteError, match="cannot write an ELF object for sparc-sun"):
        ConstantData(arrays=(np.zeros(2),)).write_object(
            tmp_path / "d.o", "sparc-sun-solaris", [True]
        )


@dataclass(frozen=True)
class _DoubleWeights(Pass):
    """Every tensor constant replaced by one of twice its values: what a pass that
    folds weights at build time makes (constants the module does not have)."""

    name: str = "DoubleWeights"

    def run(self, mod: tvmlite.IRModule) -> tvmlite.IRModule:
        class Double(ExprMutator):
            def visit_Constant(self, e: relax.Constant) -> relax.Expr:
                return relax.Constant(e.data * 2) if e.data.ndim else e

        functions = {
            k: Double().visit_expr(f) if isinstance(f, relax.Function) else f
            for k, f in mod.functions.items()
        }
        return mod.with_functions(functions)


def test_constants_a_build_makes_are_in_the_cached_library(cache_dir, tmp_path):
    pipeline = [_DoubleWeights(), LegalizeOps()]
    first = tvmlite.build(_module(), pipeline=pipeline, params={"w": W, "b": B})
    assert "cache" not in first.timings
    np.testing.assert_allclose(first["main"](X), X @ (2 * W) + 2 * B, rtol=1e-4, atol=1e-3)
    (entry,) = cache_dir.glob("*.so")
    assert entry.stat().st_size > W.nbytes  # the doubled weight is in it
    hit = tvmlite.build(_module(), pipeline=pipeline, params={"w": W, "b": B})
    assert "cache" in hit.timings
    assert [c["embedded"] for c in hit.manifest["constants"]] == [True, True]
    np.testing.assert_allclose(hit["main"](X), X @ (2 * W) + 2 * B, rtol=1e-4, atol=1e-3)
    hit.export_library(tmp_path / "doubled.so")
    lib = tvmlite.load_module(tmp_path / "doubled.so")
    np.testing.assert_allclose(lib["main"](X), X @ (2 * W) + 2 * B, rtol=1e-4, atol=1e-3)

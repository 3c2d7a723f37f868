"""Exported libraries: a C program against the header, `load_module` in a fresh
process, packed functions bound at load time, the native fast call path, and the
one protocol of built, cached and loaded modules."""

from __future__ import annotations

import gc
import json
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tvmlite

ADD = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 3), "float32"), y: R.Tensor((3,), "float32")) -> R.Tensor(("n", 3), "float32"):
        z = R.add(x, y)
        return z

    @R.function
    def pair(x: R.Tensor((2,), "int64")) -> R.Tuple(R.Tensor((2,), "int64"), R.Tensor((2,), "int64")):
        a = R.add(x, x)
        b = R.multiply(x, x)
        return (a, b)
"""
PACKED = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((3,), "float32")) -> R.Tensor((3,), "float32"):
        y = R.call_pure_packed("test.export.twice", x, sinfo_args=R.Tensor((3,), "float32"))
        return y
"""
C_PROGRAM = r"""
#include <stdio.h>
#include "add.h"

int main(void) {
  float xs[6] = {1, 2, 3, 4, 5, 6}, ys[3] = {10, 20, 30};
  int64_t xshape[2] = {2, 3}, yshape[1] = {3};
  DLTensor x = {xs, {1, 0}, 2, {kDLFloat, 32, 1}, xshape, NULL, 0};
  DLTensor y = {ys, {1, 0}, 1, {kDLFloat, 32, 1}, yshape, NULL, 0};
  DLTensor* args[2] = {&x, &y};
  DLManagedTensorVersioned* out[1];
  char err[256];
  if (add_entry_main(args, 2, out, 1, err, sizeof err) != TVMLITE_OK) {
    fprintf(stderr, "%s\n", err);
    return 1;
  }
  const float* z = (const float*)out[0]->dl_tensor.data;
  for (int i = 0; i < 6; ++i) printf("%g\n", z[i]);
  out[0]->deleter(out[0]);
  yshape[0] = 4;  /* a wrong shape: a status and a message, never a crash */
  int32_t status = add_entry_main(args, 2, out, 1, err, sizeof err);
  printf("status %d: %s\n", status, err);
  return 0;
}
"""


@pytest.fixture(scope="module")
def add_lib(tmp_path_factory):
    path = tmp_path_factory.mktemp("export") / "add.so"
    tvmlite.build(tvmlite.parse(ADD), cache=False).export_library(path)
    return path


def test_header_declares_entries_and_dlpack(add_lib):
    header = add_lib.with_suffix(".h").read_text()
    for text in (
        "typedef struct DLManagedTensorVersioned",
        "int32_t add_entry_main(",
        "int32_t add_entry_pair(",
        "x: float32 (n, 3)",
        "TVMLITE_ERR_ARGUMENT",
    ):
        assert text in header


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
def test_c_program_links_and_runs(add_lib):
    source = add_lib.parent / "main.c"
    source.write_text(C_PROGRAM)
    exe = add_lib.parent / "main"
    subprocess.run(
        ["cc", "-o", str(exe), str(source), "-I", str(add_lib.parent), str(add_lib),
         f"-Wl,-rpath,{add_lib.parent}"],
        check=True,
    )  # fmt: skip
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    lines = out.splitlines()
    np.testing.assert_allclose([float(v) for v in lines[:6]], [11, 22, 33, 14, 25, 36])
    assert lines[6].startswith("status 1: main: parameter 'y'") and "(3,)" in lines[6]


def test_load_module_in_a_fresh_process(add_lib):
    script = textwrap.dedent(f"""
        import numpy as np, tvmlite, sys
        lib = tvmlite.load_module({str(add_lib)!r})
        z = lib["main"](np.ones((2, 3), "float32"), np.arange(3, dtype="float32"))
        a, b = lib["pair"](np.array([2, 3]))
        try:
            lib["main"](np.ones((2, 4), "float32"), np.arange(3, dtype="float32"))
        except tvmlite.TVMLiteError as err:
            message = str(err)
        print(z.tolist(), a.tolist(), b.tolist(), message, sep="|")
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True).stdout.strip()  # fmt: skip
    z, a, b, message = out.split("|")
    assert json.loads(z) == [[1.0, 2.0, 3.0]] * 2
    assert (json.loads(a), json.loads(b)) == ([4, 6], [4, 9])
    assert message.startswith("main: parameter 'x': expected shape (n, 3)") and "(2, 4)" in message


def test_loaded_and_built_agree_and_check_alike(add_lib):
    built = tvmlite.build(tvmlite.parse(ADD), cache=False)
    lib = tvmlite.load_module(add_lib)
    x, y = np.random.rand(5, 3).astype("float32"), np.random.rand(3).astype("float32")
    np.testing.assert_array_equal(lib["main"](x, y), built["main"](x, y))
    for bad in [(x,), (x, y.astype("float64")), (x[:, :2], y), (x.T, y), ([1, 2], y)]:
        with pytest.raises(tvmlite.TVMLiteError) as a:
            built["main"](*bad)
        with pytest.raises(tvmlite.TVMLiteError) as b:
            lib["main"](*bad)
        assert str(a.value) == str(b.value)
    assert lib.functions == ["main", "pair"]


def test_packed_function_is_bound_at_load_time(tmp_path):
    path = tmp_path / "packed.so"
    tvmlite.build(tvmlite.parse(PACKED), cache=False).export_library(path)
    with pytest.raises(tvmlite.TVMLiteError, match="test.export.twice"):
        tvmlite.load_module(path)
    tvmlite.register_func("test.export.twice", lambda x: x * 2, override=True)
    try:
        lib = tvmlite.load_module(path)
        np.testing.assert_array_equal(lib["main"](np.ones(3, "float32")), [2, 2, 2])
    finally:
        from tvmlite.runtime.registry import remove_global_func

        remove_global_func("test.export.twice")


class _Sub(np.ndarray):
    pass


def test_fast_path_results_own_their_memory():
    ex = tvmlite.build(tvmlite.parse(ADD), cache=False)
    f = ex["main"]
    x, y = np.ones((2, 3), "float32"), np.full(3, 2, "float32")
    first = f(x, y)
    assert f._fast is not None  # the native wrapper serves plain arrays
    a, b = ex["pair"](np.array([1, 2]))
    assert (a.tolist(), b.tolist()) == ([2, 4], [1, 4])
    # Subclasses and non-native byte order take the Python path, same results.
    np.testing.assert_array_equal(f(x.view(_Sub), y), first)
    with pytest.raises(tvmlite.TVMLiteError, match="dtype"):
        f(x.astype(">f4"), y)
    del ex, f
    gc.collect()
    first += 1  # writable, still valid after the executable is gone
    assert first.sum() == 24


def test_fresh_library_path_is_reloaded(tmp_path):
    path = tmp_path / "m.so"
    tvmlite.build(tvmlite.parse(ADD), cache=False).export_library(path)
    assert "pair" in tvmlite.load_module(path)
    other = ADD.replace("def pair", "def other")
    os.unlink(path)
    tvmlite.build(tvmlite.parse(other), cache=False).export_library(path)
    assert "other" in tvmlite.load_module(path)


def test_missing_compiler_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    ex = tvmlite.build(tvmlite.parse(ADD), cache=False)
    with pytest.raises(tvmlite.TVMLiteError, match="C compiler"):
        ex.export_library(tmp_path / "x.so")


def test_built_cached_and_loaded_modules_share_one_protocol(cache_dir, tmp_path):
    """What `build()` returns (an Executable over the JIT's code), what the
    compile cache hands back and what `load_module()` returns (a Library over a
    mapped file) are one CompiledModule: they look up, call, refuse and export
    alike."""
    from tvmlite.runtime import CompiledModule, Executable, Library

    mod = tvmlite.parse(
        ADD.replace("@R.function\n    def pair", "@R.function(private=True)\n    def pair")
    )
    # "minimal" keeps the unreachable private `pair` (the default build's dead code
    # elimination drops it), so the module has one to refuse.
    built = tvmlite.build(mod, pipeline="minimal", cache=False)
    tvmlite.build(mod, pipeline="minimal")  # stores the entry the next build loads
    found = {
        "built": built,
        "cached": tvmlite.build(mod, pipeline="minimal"),
        "loaded": tvmlite.load_module(built.export_library(tmp_path / "m.so")),
    }
    assert isinstance(found["built"], Executable)
    assert isinstance(found["cached"], Executable) and "cache" in found["cached"].timings
    assert isinstance(found["loaded"], Library)
    x, y = np.arange(6, dtype="float32").reshape(2, 3), np.array([1, 2, 3], "float32")
    for how, m in found.items():
        assert isinstance(m, CompiledModule), how
        assert m.functions == ["main"] == list(m) and "main" in m and "pair" not in m, how
        np.testing.assert_array_equal(m["main"](x, y), x + y)
        with pytest.raises(tvmlite.TVMLiteError, match="'pair' is private"):
            m["pair"]
        with pytest.raises(tvmlite.TVMLiteError, match="'nope' does not exist.*public: main"):
            m["nope"]
        again = tvmlite.load_module(m.export_library(tmp_path / f"{how}.so"))
        np.testing.assert_array_equal(again["main"](x, y), x + y)
    # The JIT's code and the cache's listing show their LLVM IR; a bare file keeps none.
    for how in ("built", "cached"):
        assert "tvmlite_entry_main" in found[how].llvm_ir()
    with pytest.raises(tvmlite.TVMLiteError, match="keeps no LLVM IR"):
        found["loaded"].llvm_ir()

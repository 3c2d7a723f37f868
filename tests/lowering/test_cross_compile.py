# ruff: noqa: E501  (TVMScript texts)
"""Cross-compilation: a build for `-mtriple=aarch64-linux-gnu` on any host emits
AArch64 objects, assembly and IR with llvmlite alone, refuses to run here with
an error naming the triple, and links a self-contained AArch64 library with
the cross compiler (Debian's gcc-aarch64-linux-gnu), which qemu-user runs: its
results are checked against NumPy."""

from __future__ import annotations

import platform
import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
from llvmlite import ir

import tvmlite
from tvmlite.cli import main as tvms
from tvmlite.lowering.codegen.jit import JitModule
from tvmlite.lowering.codegen.objects import emit_object
from tvmlite.lowering.codegen.target import MachineOptions
from tvmlite.lowering.target import Target
from tvmlite.runtime.executable import CrossExecutable

TRIPLE = "aarch64-linux-gnu"
ARM = f"llvm -mtriple={TRIPLE}"
EM_AARCH64, EM_X86_64 = 183, 62
CROSS_CC = shutil.which(f"{TRIPLE}-gcc")
QEMU = shutil.which("qemu-aarch64") or shutil.which("qemu-aarch64-static")
SYSROOT = Path(f"/usr/{TRIPLE}")

MODEL = """
@I.ir_module
class Module:
    @R.function
    def main(a: R.Tensor((8, 48), "float32"), w: R.Tensor((48, 40), "float32"), x: R.Tensor((5, 100), "float32")):
        with R.dataflow():
            mm = R.nn.relu(R.matmul(a, w))
            sm = R.nn.softmax(x, axis=-1)
            gv = (mm, sm)
            R.output(gv)
        return gv
"""


def inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    return {
        "a": rng.standard_normal((8, 48)).astype("float32"),
        "w": rng.standard_normal((48, 40)).astype("float32"),
        "x": rng.standard_normal((5, 100)).astype("float32"),
    }


def expected(a: np.ndarray, w: np.ndarray, x: np.ndarray) -> list[np.ndarray]:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return [np.maximum(a @ w, 0), e / e.sum(axis=-1, keepdims=True)]


def elf_machine(data: bytes) -> tuple[int, int]:
    """(e_type, e_machine) of a little-endian 64-bit ELF file's bytes."""
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1
    return struct.unpack_from("<HH", data, 16)


@pytest.fixture(scope="module")
def arm_build() -> CrossExecutable:
    ex = tvmlite.build(tvmlite.parse(MODEL), target=ARM, pipeline="default", cache=False)
    assert isinstance(ex, CrossExecutable)
    return ex


def test_objects_ir_and_assembly_are_aarch64(arm_build: CrossExecutable) -> None:
    assert f'target triple = "{TRIPLE}"' in arm_build.llvm_ir()
    asm = arm_build.assembly()
    assert "fmla" in asm and ".4s" in asm  # NEON multiply-adds, four float32 lanes
    for unit in arm_build.image.units:
        assert elf_machine(unit.obj) == (1, EM_AARCH64)  # ET_REL
    machine = Target(ARM).machine_options()
    assert elf_machine(emit_object(arm_build.llvm_ir(), machine)) == (1, EM_AARCH64)


def test_cross_build_refuses_to_run_here(arm_build: CrossExecutable) -> None:
    assert arm_build.functions == ["main"] and TRIPLE in repr(arm_build)
    for attempt in (
        lambda: arm_build["main"],
        lambda: arm_build.time_evaluator("main"),
        lambda: arm_build.profile("main"),
    ):
        with pytest.raises(tvmlite.TVMLiteError, match=f"cannot run code compiled for {TRIPLE}"):
            attempt()
    with pytest.raises(tvmlite.TVMLiteError, match="'mian' does not exist.*did you mean 'main'"):
        arm_build["mian"]


def test_the_jit_refuses_a_foreign_triple() -> None:
    with pytest.raises(tvmlite.TVMLiteError, match=f"compiled for {TRIPLE} in this process"):
        JitModule(ir.Module(name="empty"), machine=MachineOptions(triple=TRIPLE))


def test_host_builds_stay_native() -> None:
    ex = tvmlite.build(tvmlite.parse(MODEL), pipeline="default", cache=False)
    assert not isinstance(ex, CrossExecutable)
    args = inputs()
    for got, want in zip(ex["main"](*args.values()), expected(**args), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_cli_emits_aarch64_objects_and_assembly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "model.tvms"
    source.write_text(MODEL)
    out = tmp_path / "model.o"
    assert (
        tvms(["build", str(source), "-o", str(out), "--target", ARM, "--pipeline", "default"]) == 0
    )
    assert elf_machine(out.read_bytes()) == (1, EM_AARCH64)
    capsys.readouterr()
    assert tvms(["build", str(source), "-o", "-", "--emit", "asm", "--target", ARM]) == 0
    assert "fmla" in capsys.readouterr().out


def test_cross_library_is_linked_by_the_cross_compiler(
    arm_build: CrossExecutable, tmp_path: Path
) -> None:
    """With aarch64-linux-gnu-gcc: an AArch64 shared library; without: an error
    naming the compiler to install (never the host's compiler)."""
    out = tmp_path / "model.so"
    if CROSS_CC is None:
        with pytest.raises(tvmlite.TVMLiteError, match=f"no C compiler for {TRIPLE}.*gcc-{TRIPLE}"):
            arm_build.export_library(out)
        return
    arm_build.export_library(out)
    assert elf_machine(out.read_bytes()) == (3, EM_AARCH64)  # ET_DYN
    assert "model_entry_main" in out.with_suffix(".h").read_text()


DRIVER = r"""
#include <stdio.h>
#include "model.h"

static float a[8 * 48] = {%(a)s}, w[48 * 40] = {%(w)s}, x[5 * 100] = {%(x)s};

int main(void) {
  int64_t as[2] = {8, 48}, ws[2] = {48, 40}, xs[2] = {5, 100};
  DLTensor ta = {a, {1, 0}, 2, {kDLFloat, 32, 1}, as, NULL, 0};
  DLTensor tw = {w, {1, 0}, 2, {kDLFloat, 32, 1}, ws, NULL, 0};
  DLTensor tx = {x, {1, 0}, 2, {kDLFloat, 32, 1}, xs, NULL, 0};
  DLTensor* args[3] = {&ta, &tw, &tx};
  DLManagedTensorVersioned* out[2];
  char err[256];
  if (model_entry_main(args, 3, out, 2, err, sizeof err) != TVMLITE_OK) {
    fprintf(stderr, "%%s\n", err);
    return 1;
  }
  for (int k = 0; k < 2; ++k) {
    const DLTensor* t = &out[k]->dl_tensor;
    int64_t n = t->shape[0] * t->shape[1];
    for (int64_t i = 0; i < n; ++i) printf("%%.9g\n", ((const float*)t->data)[i]);
    out[k]->deleter(out[k]);
  }
  return 0;
}
"""


@pytest.mark.skipif(
    CROSS_CC is None or QEMU is None or not SYSROOT.is_dir(),
    reason=f"needs {TRIPLE}-gcc and qemu-aarch64 (Debian: gcc-{TRIPLE} qemu-user; .ci/run installs them where apt works)",
)
def test_aarch64_library_computes_under_qemu(arm_build: CrossExecutable, tmp_path: Path) -> None:
    assert CROSS_CC is not None and QEMU is not None
    library = arm_build.export_library(tmp_path / "model.so")
    args = inputs()
    values = {k: ", ".join(f"{v:.9g}f" for v in a.ravel()) for k, a in args.items()}
    (tmp_path / "main.c").write_text(DRIVER % values)
    binary = tmp_path / "main"
    subprocess.run(
        [CROSS_CC, "-O1", "-I", str(tmp_path), str(tmp_path / "main.c"), str(library),
         "-Wl,-rpath,$ORIGIN", "-o", str(binary)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    assert elf_machine(binary.read_bytes())[1] == EM_AARCH64
    done = subprocess.run(
        [QEMU, "-L", str(SYSROOT), str(binary)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    got = np.array(done.stdout.split(), dtype="float32")
    want = expected(**args)
    np.testing.assert_allclose(
        got[: want[0].size].reshape(want[0].shape), want[0], rtol=1e-4, atol=1e-4
    )
    np.testing.assert_allclose(
        got[want[0].size :].reshape(want[1].shape), want[1], rtol=1e-4, atol=1e-5
    )


def test_host_is_not_cross(tmp_path: Path) -> None:
    """The host's own triple, spelled out, is a native build."""
    from tvmlite.lowering.codegen.target import host_triple

    ex = tvmlite.build(tvmlite.parse(MODEL), target=f"llvm -mtriple={host_triple()}", cache=False)
    assert not isinstance(ex, CrossExecutable)
    assert platform.machine() in host_triple() or platform.machine() == "arm64"


def test_loading_a_library_for_another_machine_is_refused(tmp_path: Path) -> None:
    """Checked from the file's bytes, before anything is mapped."""
    path = tmp_path / "model.so"
    tvmlite.build(tvmlite.parse(MODEL), cache=False).export_library(path)
    data = bytearray(path.read_bytes())
    other = EM_X86_64 if elf_machine(bytes(data))[1] == EM_AARCH64 else EM_AARCH64
    struct.pack_into("<H", data, 18, other)
    path.write_bytes(bytes(data))
    name = {EM_AARCH64: "aarch64", EM_X86_64: "x86_64"}[other]
    with pytest.raises(
        tvmlite.TVMLiteError, match=f"model.so: a library for {name}, and this process runs on"
    ):
        tvmlite.load_module(path)

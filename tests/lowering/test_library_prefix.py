"""Linkable libraries: every symbol an exported library exports starts with its
prefix (by default from the file name) and nothing else is exported, so two
libraries with functions of the same name link into one C program and each
call reaches its own code; the prefix survives loading, copying and the
compile cache."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import tvmlite
from tvmlite.runtime.elf import SharedObject

BINARY = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((3,), "float32"), y: R.Tensor((3,), "float32")) -> R.Tensor((3,), "float32"):
        z = R.{op}(x, y)
        return z
"""
TWO_LIBRARIES = r"""
#include <stdio.h>
#include "add.h"
#include "libmul.h"

static int run(const char* what, int32_t (*entry)(DLTensor* const*, int32_t,
               DLManagedTensorVersioned**, int32_t, char*, int64_t)) {
  float xs[3] = {1, 2, 3}, ys[3] = {10, 20, 30};
  int64_t shape[1] = {3};
  DLTensor x = {xs, {1, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0};
  DLTensor y = {ys, {1, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0};
  DLTensor* args[2] = {&x, &y};
  DLManagedTensorVersioned* out[1];
  char err[256];
  if (entry(args, 2, out, 1, err, sizeof err) != TVMLITE_OK) {
    fprintf(stderr, "%s\n", err);
    return 1;
  }
  const float* z = (const float*)out[0]->dl_tensor.data;
  printf("%s %g %g %g\n", what, z[0], z[1], z[2]);
  out[0]->deleter(out[0]);
  return 0;
}

int main(void) {
  int64_t shape[1] = {2};
  DLManagedTensorVersioned* t = mul_alloc_tensor(1, shape, kDLFloat | 32 << 8 | 1 << 16);
  printf("alloc %d\n", t != NULL && add_missing_packed() == NULL);
  t->deleter(t);
  return run("add", add_entry_main) || run("mul", mul_entry_main);
}
"""


def export(op: str, path: Path, **kwargs) -> Path:
    ex = tvmlite.build(tvmlite.parse(BINARY.replace("{op}", op)), cache=False)
    return ex.export_library(path, **kwargs)


def exported(path: Path) -> set[str]:
    return set(SharedObject(path.read_bytes(), path).symbols)


@pytest.fixture(scope="module")
def two(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("two")
    return export("add", folder / "add.so"), export("multiply", folder / "libmul.so")


def test_every_exported_symbol_carries_the_prefix(two):
    add, mul = two
    assert {s for s in exported(add) if not s.startswith("add_")} == set()
    assert {s for s in exported(mul) if not s.startswith("mul_")} == set()
    assert {"add_entry_main", "add_manifest", "add_alloc_tensor", "add_bind_packed"} <= exported(
        add
    )
    header = mul.with_suffix(".h").read_text()
    assert "int32_t mul_entry_main(" in header and "mul_alloc_tensor(" in header
    assert "tvmlite_entry" not in header


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
def test_two_libraries_link_into_one_c_program(two):
    add, mul = two
    folder = add.parent
    (folder / "main.c").write_text(TWO_LIBRARIES)
    cmd = ["cc", "-Wall", "-Werror", "-o", str(folder / "main"), str(folder / "main.c"),
           "-I", str(folder), str(add), str(mul), f"-Wl,-rpath,{folder}"]  # fmt: skip
    subprocess.run(cmd, check=True, capture_output=True)
    out = subprocess.run([str(folder / "main")], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["alloc 1", "add 11 22 33", "mul 10 40 90"]


def test_both_load_into_one_process(two):
    add, mul = (tvmlite.load_module(p) for p in two)
    x, y = np.array([1, 2, 3], "float32"), np.array([10, 20, 30], "float32")
    np.testing.assert_array_equal(add["main"](x, y), x + y)
    np.testing.assert_array_equal(mul["main"](x, y), x * y)
    assert (add.prefix, mul.prefix) == ("add_", "mul_")


def test_an_explicit_prefix_and_a_copy_keep_it(tmp_path):
    lib = tvmlite.load_module(export("add", tmp_path / "a.so", prefix="net"))
    assert "netentry_main" in exported(tmp_path / "a.so")
    copy = lib.export_library(tmp_path / "b.so")  # a bare file is copied, prefix and all
    assert tvmlite.load_module(copy).prefix == "net"
    assert "int32_t netentry_main(" in copy.with_suffix(".h").read_text()
    with pytest.raises(tvmlite.TVMLiteError, match="start with 'net'.*cannot be relinked"):
        lib.export_library(tmp_path / "c.so", prefix="other_")


@pytest.mark.parametrize("bad", ["1x", "a-b", "", "é", 3])
def test_a_prefix_that_is_no_c_identifier_is_refused(tmp_path, bad):
    ex = tvmlite.build(tvmlite.parse(BINARY.replace("{op}", "add")), cache=False)
    with pytest.raises(tvmlite.TVMLiteError, match=r"prefix=.* is not the start of a C identifier"):
        ex.export_library(tmp_path / "x.so", prefix=bad)
    assert not (tmp_path / "x.so").exists()


def test_a_cached_library_is_linked_again_for_its_prefix(cache_dir, tmp_path):
    mod = tvmlite.parse(BINARY.replace("{op}", "subtract"))
    tvmlite.build(mod)  # stores the entry
    cached = tvmlite.build(mod)
    assert "cache" in cached.timings and cached.prefix == "tvmlite_"
    lib = tvmlite.load_module(cached.export_library(tmp_path / "sub.so"))
    assert lib.prefix == "sub_" and "sub_entry_main" in exported(tmp_path / "sub.so")
    x = np.array([5, 5, 5], "float32")
    np.testing.assert_array_equal(lib["main"](x, x), [0, 0, 0])

"""`load_module` checks a library from its bytes before mapping it (mapping runs
its constructors): not a tvmlite library, a manifest binding an entry to a
symbol that is not the library's own entry (libc's `abort`), malformed
manifests and files are refused, and the library's constructor never runs."""

from __future__ import annotations

import json

import numpy as np
import pytest

import tvmlite
from tvmlite.runtime.manifest import ABI_VERSION

SIGNATURE = {"params": [], "ret": {"kind": "tensor", "dtype": "float32", "ndim": 1, "shape": [4]}}


def manifest(symbol: str = "tvmlite_entry_main", **extra) -> str:
    info = {"symbol": symbol, "params": [], "num_outputs": 1, "signature": SIGNATURE}
    return json.dumps({"abi": ABI_VERSION, "functions": {"main": info}, "packed": [], **extra})


def with_record(index: str) -> str:
    """The manifest with function `main` served by the shared wrapper's record `index`."""
    return manifest().replace('"num_outputs": 1', f'"num_outputs": 1, "fastcall_record": {index}')


def test_library_without_manifest_is_refused_unmapped(planted_library):
    lib, marker = planted_library(None)
    with pytest.raises(tvmlite.TVMLiteError, match="not a tvmlite library.*tvmlite_manifest"):
        tvmlite.load_module(lib)
    assert not marker.exists()  # its constructor never ran


def test_entry_bound_to_abort_is_refused_unmapped(planted_library):
    lib, marker = planted_library(manifest(symbol="abort"))
    with pytest.raises(tvmlite.TVMLiteError, match="binds function 'main' to 'abort'"):
        tvmlite.load_module(lib)
    assert not marker.exists()


@pytest.mark.parametrize(
    "text, message",
    [
        (manifest().replace('"main"', '"other"', 1), "binds function 'other'"),  # not its entry
        ("{not json", "not valid JSON"),
        (json.dumps({"abi": 99, "functions": {}}), "library ABI 99"),
        (manifest(packed=["x.y"]), "does not define the table"),
        (manifest(packed="x.y"), "not a list of names"),
        (manifest().replace('"params": []', '"params": [["x"]]', 2), "signature of 'main'"),
        (with_record('"x"'), "fast-call record of 'main' is 'x', not an index"),
        (with_record("-1"), "fast-call record of 'main' is -1"),
        (with_record("0"), "does not define the function tvmlite_fastcall$"),  # the shared one
    ],
)
def test_bad_manifest_is_refused_unmapped(planted_library, text, message):
    lib, marker = planted_library(text)
    with pytest.raises(tvmlite.TVMLiteError, match=message):
        tvmlite.load_module(lib)
    assert not marker.exists()


def test_entry_the_library_does_not_define_is_refused(planted_library):
    text = manifest().replace("tvmlite_entry_main", "tvmlite_entry_f").replace('"main"', '"f"')
    lib, marker = planted_library(text)
    with pytest.raises(tvmlite.TVMLiteError, match="does not define the function tvmlite_entry_f"):
        tvmlite.load_module(lib)
    assert not marker.exists()


@pytest.mark.parametrize("content", [b"", b"not a library", b"\x7fELF\x02\x01\x01", None])
def test_non_libraries_are_refused(tmp_path, content):
    path = tmp_path / "x.so"
    if content is None:  # a real library cut short
        ex = tvmlite.build(tvmlite.parse(ADD), cache=False)
        ex.export_library(path)
        path.write_bytes(path.read_bytes()[:200])
    else:
        path.write_bytes(content)
    with pytest.raises(tvmlite.TVMLiteError, match="not a tvmlite library"):
        tvmlite.load_module(path)


def test_valid_manifest_reaches_the_loader(planted_library):
    """The checks refuse only what is wrong: a well-formed manifest naming the
    library's own entry is mapped (its constructor runs, as the docs warn)."""
    lib, marker = planted_library(manifest())
    loaded = tvmlite.load_module(lib)
    assert marker.exists() and loaded.functions == ["main"]


ADD = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        z = R.add(x, x)
        return z
"""


def test_real_library_still_loads(tmp_path):
    path = tmp_path / "add.so"
    tvmlite.build(tvmlite.parse(ADD), cache=False).export_library(path)
    x = np.arange(4, dtype="float32")
    assert tvmlite.load_module(path)["main"](x).tolist() == [0, 2, 4, 6]

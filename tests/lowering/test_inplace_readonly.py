"""A graph function's parameter that an in-place call writes must get a writable
tensor: a read-only NumPy array (a read-only memory map segfaulted before), a
DLPack tensor flagged read-only or a legacy capsule (NumPy imports those
read-only) is refused, naming the parameter, by the native wrapper and the
Python path alike, in a loaded library too; other parameters take read-only
tensors as before."""

from __future__ import annotations

import numpy as np
import pytest
from test_fastcall_capsules import READ_ONLY, Exporter, LegacyExporter
from test_inplace import FORMS, X, Y, build, module

import tvmlite
from tvmlite.lowering.codegen.memory_plan import written_params

IN_PLACE_X = (
    "a = x\n"
    "z = R.call_tir_inplace(Module.add_into, (a, y), inplace_indices=[0], "
    'out_sinfo=R.Tensor((4,), "float32"))\nreturn z'
)
MESSAGE = "main: parameter 'x': the array is read-only, but the function writes it"


def read_only(array: np.ndarray) -> np.ndarray:
    view = array.copy()
    view.flags.writeable = False
    return view


@pytest.mark.parametrize("form", FORMS)
def test_read_only_tensors_for_a_written_parameter_are_refused(form: str) -> None:
    ex = build(module(IN_PLACE_X, form=form), form)
    main = ex["main"]
    for bad in (read_only(X), Exporter(X.copy(), flags=READ_ONLY), LegacyExporter(X.copy())):
        with pytest.raises(tvmlite.TVMLiteError, match=MESSAGE):
            main(bad, Y)
    x = X.copy()
    np.testing.assert_array_equal(main(x, read_only(Y)), X + Y)  # y is only read
    np.testing.assert_array_equal(x, X + Y)
    p = Exporter(X.copy())
    np.testing.assert_array_equal(main(p, Y), X + Y)  # a writable versioned tensor
    np.testing.assert_array_equal(p.array, X + Y)
    assert main._fast is not None


def test_a_read_only_memory_map_is_refused(tmp_path) -> None:
    path = tmp_path / "x.npy"
    np.save(path, X)
    mapped = np.load(path, mmap_mode="r")
    ex = build(module(IN_PLACE_X), "optimized")
    with pytest.raises(tvmlite.TVMLiteError, match=MESSAGE):
        ex["main"](mapped, Y)
    loaded = tvmlite.load_module(ex.export_library(tmp_path / "m.so"))
    with pytest.raises(tvmlite.TVMLiteError, match=MESSAGE):
        loaded["main"](mapped, Y)
    np.testing.assert_array_equal(np.load(path), X)


def test_torch_tensors_are_written_in_place() -> None:
    torch = pytest.importorskip("torch", reason="torch is not installed (an optional test extra)")
    ex = build(module(IN_PLACE_X), "optimized")
    x = torch.from_numpy(X.copy())
    ex["main"](x, Y)  # serves torch
    ex["main"](x, torch.from_numpy(Y))
    np.testing.assert_array_equal(x.numpy(), X + 2 * Y)


def test_written_parameters_are_found_through_aliases_and_branches() -> None:
    branch = (
        "if R.const(True):\n"
        "    b = R.call_tir_inplace(Module.add_into, (y, x), inplace_indices=[0], "
        'out_sinfo=R.Tensor((4,), "float32"))\n'
        "    r = b\nelse:\n    r = x\nreturn r"
    )
    fresh = 'z = R.call_tir(Module.add, (x, y), out_sinfo=R.Tensor((4,), "float32"))\nreturn z'
    found = {
        text: written_params(tvmlite.lower(module(text))["main"])
        for text in (IN_PLACE_X, branch, fresh)
    }
    assert found == {IN_PLACE_X: {0}, branch: {1}, fresh: set()}

"""Constants in text: `metadata["KEY"][i]` references resolved from a table given
to the parse (a mapping shaped like TVM's, or a constants file), numbered on
printing as TVM numbers them, and `save` / `parse_file` writing and reading the
text with its constants file. Files of arrays are read by mapping them."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import pytest

import tvmlite
from tvmlite.array_file import load_arrays, save_arrays
from tvmlite.dsl import relax
from tvmlite.dsl.metadata import sidecar_path

MODELS = Path(__file__).resolve().parents[2] / "examples"  # conv_bn.*: examples/make_conv_bn.py
HEADER = "# from tvm.script import ir as I\n# from tvm.script import relax as R\n\n"
FOOTER = "\n# Metadata omitted. Use show_meta=True in script() method to show it.\n"
# As TVM 0.27 prints a module whose main adds a constant twice and another once.
TEXT = (
    HEADER
    + """@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((3,), dtype="float32")) -> R.Tensor((3,), dtype="float32"):
        gv: R.Tensor((3,), dtype="float32") = R.add(x, metadata["ir.GenericConst"][0])
        gv1: R.Tensor((3,), dtype="float32") = R.multiply(gv, metadata["ir.GenericConst"][1])
        gv2: R.Tensor((3,), dtype="float32") = R.add(gv1, metadata["ir.GenericConst"][0])
        return gv2
"""
    + FOOTER
)
ONES = np.ones(3, "float32")


def _root(array: np.ndarray) -> object:
    while isinstance(array, np.ndarray):
        array = array.base
    return array


def _error(text: str, **kwargs) -> tvmlite.ParseError:
    with pytest.raises(tvmlite.ParseError) as info:
        tvmlite.parse(text, "m.tvms", **kwargs)
    return info.value


# ---------------------------------------------------------------- array files


ARRAYS = {
    "ir.GenericConst/0": np.arange(7, dtype="float32"),
    "w": np.arange(15, dtype="int64").reshape(3, 5),
    "mask": np.array([True, False, True]),
    "scalar": np.array(2.5),
    "fortran": np.asfortranarray(np.arange(12.0).reshape(3, 4)),
    "empty": np.zeros((0, 3), "float16"),
}


def test_saved_arrays_are_mapped_aligned_and_read_by_numpy(tmp_path):
    path = tmp_path / "a.npz"
    save_arrays(path, ARRAYS)
    back = load_arrays(path)
    assert list(back) == list(ARRAYS)
    for name, array in ARRAYS.items():
        got = back[name]
        assert got.dtype == array.dtype and got.shape == array.shape
        np.testing.assert_array_equal(got, array)
        assert not got.flags.writeable
        assert isinstance(_root(got), memoryview), f"{name} was copied, not mapped"
        assert got.ctypes.data % 64 == 0
    with np.load(path) as numpy_view:  # an ordinary .npz for NumPy
        for name, array in ARRAYS.items():
            np.testing.assert_array_equal(numpy_view[name], array)
    assert zipfile.ZipFile(path).testzip() is None  # every CRC right


@pytest.mark.parametrize("save", [np.savez, np.savez_compressed])
def test_files_numpy_wrote_are_read(tmp_path, save):
    path = tmp_path / "n.npz"
    save(path, **ARRAYS)
    back = load_arrays(path)
    for name, array in ARRAYS.items():
        np.testing.assert_array_equal(back[name], array)
        assert back[name].ctypes.data % back[name].dtype.alignment == 0


def test_bad_array_files_are_clear_errors(tmp_path):
    text = tmp_path / "t.npz"
    text.write_text("not a zip")
    with pytest.raises(tvmlite.TVMLiteError, match="is not an .npz file"):
        load_arrays(text, "constants file")
    with pytest.raises(tvmlite.TVMLiteError, match="cannot read the parameter file"):
        load_arrays(tmp_path / "missing.npz", "parameter file")
    objects = tmp_path / "o.npz"
    np.savez(objects, x=np.array([{"a": 1}], dtype=object))
    with pytest.raises(tvmlite.TVMLiteError, match="Python objects"):
        load_arrays(objects)
    other = tmp_path / "z.npz"
    with zipfile.ZipFile(other, "w") as z:
        z.writestr("notes.txt", "hello")
    with pytest.raises(tvmlite.TVMLiteError, match="'notes.txt', which is not an array"):
        load_arrays(other)


# ---------------------------------------------------------------- parse and print


def test_references_read_the_table_and_print_as_tvm_numbers_them():
    first, second = np.array([1, 2, 3], "float32"), np.array([4, 5, 6], "float32")
    mod = tvmlite.parse(TEXT, constants={"ir.GenericConst": [first, second]})
    assert mod.script() == TEXT
    calls = [b.value for b in mod["main"].body.blocks[0].bindings]
    assert calls[0].args[1] is calls[2].args[1]  # one entry, one constant
    assert calls[0].args[1].data is first  # held, not copied
    x = np.array([1, 1, 1], "float32")
    np.testing.assert_array_equal(tvmlite.build(mod)["main"](x), (x + first) * second + first)


def test_two_constants_of_equal_values_are_two_entries():
    """TVM's printer numbers constant objects, not values."""
    mod = tvmlite.parse(TEXT, constants={"ir.GenericConst": [ONES, ONES.copy()]})
    assert mod.script() == TEXT
    calls = [b.value for b in mod["main"].body.blocks[0].bindings]
    assert calls[0].args[1] == calls[1].args[1] and calls[0].args[1] is not calls[1].args[1]


def test_constant_equality_and_hash_follow_the_values():
    a, b = relax.Constant(np.arange(4.0)), relax.Constant(np.arange(4.0))
    assert a == b and hash(a) == hash(b)
    assert a != relax.Constant(np.arange(4.0).astype("float32"))
    assert a != relax.Constant(np.arange(4.0).reshape(2, 2))
    assert a != relax.Constant(np.arange(1.0, 5.0))
    assert tvmlite.structural_hash(a) == tvmlite.structural_hash(b)


def test_the_metadata_key_says_the_text_is_tvm_027():
    """A Relax-only text has no other sign of its dialect: 0.27's key keeps it 0.27."""
    mod = tvmlite.parse(TEXT, constants={"ir.GenericConst": [ONES, ONES]})
    assert mod.dialect == "tvm-0.27"
    assert 'metadata["relax.expr.Constant"][0]' in mod.script(dialect="classic")


def test_save_and_parse_file_round_trip(tmp_path):
    values = [np.linspace(0, 1, 3, dtype="float32"), np.array([2, 3, 4], "float32")]
    mod = tvmlite.parse(TEXT, constants={"ir.GenericConst": values})
    path = tmp_path / "model.tvms"
    mod.save(path)
    assert path.read_text() == TEXT
    assert sidecar_path(path) == tmp_path / "model.constants.npz"
    back = tvmlite.parse_file(path)
    tvmlite.assert_structural_equal(back, mod)
    assert back.script() == TEXT
    saved = load_arrays(sidecar_path(path))
    assert list(saved) == ["ir.GenericConst/0", "ir.GenericConst/1"]
    for k, value in enumerate(values):
        np.testing.assert_array_equal(saved[f"ir.GenericConst/{k}"], value)
        assert saved[f"ir.GenericConst/{k}"].dtype == value.dtype
    # the file given explicitly wins over the one beside the text
    other = tmp_path / "other.npz"
    np.savez(other, **{"ir.GenericConst/0": values[1], "ir.GenericConst/1": values[0]})
    swapped = tvmlite.parse_file(path, constants=other)
    assert not tvmlite.structural_equal(swapped, mod)


def test_a_module_without_constants_saves_no_file(tmp_path):
    mod = tvmlite.parse(
        TEXT.replace('metadata["ir.GenericConst"][1]', "x").replace(
            'metadata["ir.GenericConst"][0]', "x"
        )
    )
    mod.save(tmp_path / "plain.tvms")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plain.tvms"]
    assert "Metadata omitted" not in (tmp_path / "plain.tvms").read_text()


def test_tvm_printed_model_with_its_constants_file():
    """conv_bn.tvms is TVM's print of a PyTorch conv + BatchNorm (make_conv_bn.py);
    its constants file was made by the recipe of docs/constants.md."""
    path = MODELS / "conv_bn.tvms"
    mod = tvmlite.parse_file(path)
    assert mod.script() == path.read_text() + "\n"  # TVM's text has no final newline
    means = mod["main"].body.blocks[0].bindings[3].value.args[3]
    np.testing.assert_array_equal(
        means.data, np.load(MODELS / "conv_bn.constants.npz")["ir.GenericConst/0"]
    )


# ---------------------------------------------------------------- errors


def test_without_values_the_first_reference_is_the_error():
    text = TEXT.replace("R.add(x, metadata", "R.add(x, x)  # metadata")
    err = _error(text)  # lines 9 and 10 refer to constants; 9 is the error
    assert err.span.line == 9 and text.splitlines()[8][err.span.column - 1 :].startswith(
        'metadata["ir.GenericConst"][1]'
    )
    assert err.message.startswith('the value of metadata["ir.GenericConst"][1] is not in the text')
    assert "constants=" in err.message and "docs/constants.md" in err.message


def test_table_errors_point_at_the_reference():
    err = _error(TEXT, constants={"ir.GenericConst": [ONES]})
    assert err.span.line == 9
    assert err.message == 'the table given has 1 constant in "ir.GenericConst": no index 1'
    err = _error(TEXT, constants={"relax.expr.Constant": [ONES, ONES]})
    assert err.span.line == 8 and 'no "ir.GenericConst" table' in err.message
    assert '"relax.expr.Constant" (2 constants)' in err.message
    err = _error(TEXT, constants={"ir.GenericConst": [ONES, "text"]})
    assert err.span.line == 9 and "not a tensor dtype" in err.message
    err = _error(TEXT, constants={"ir.GenericConst": ONES})
    assert "maps a table key to a list of arrays" in err.message
    err = _error(TEXT, constants=[ONES])
    assert "constants= takes the path of a constants file" in err.message


@pytest.mark.parametrize(
    ("ref", "why"),
    [
        ("metadata[0]", 'reads metadata["KEY"][INDEX]'),
        ('metadata["ir.GenericConst"]["a"]', "must be an integer literal"),
        ('metadata["ir.GenericConst"][-1]', "must not be negative"),
        ('metadata["ir.GenericConst"][0][1]', 'reads metadata["KEY"][INDEX]'),
    ],
)
def test_malformed_references(ref, why):
    text = TEXT.replace('metadata["ir.GenericConst"][1]', ref)
    assert why in _error(text, constants={"ir.GenericConst": [ONES, ONES]}).message
    assert why in _error(text).message or "is not in the text" in _error(text).message


def test_bad_constants_files(tmp_path):
    gap = tmp_path / "gap.npz"
    np.savez(gap, **{"ir.GenericConst/0": ONES, "ir.GenericConst/2": ONES})
    err = _error(TEXT, constants=gap)
    assert "ir.GenericConst/1 is missing" in err.message and err.span.line == 8
    named = tmp_path / "named.npz"
    np.savez(named, weight=ONES)
    assert "is not named KEY/INDEX" in _error(TEXT, constants=named).message
    assert "cannot read the constants file" in _error(TEXT, constants=tmp_path / "no.npz").message

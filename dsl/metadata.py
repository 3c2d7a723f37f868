"""The metadata table: the values of the constants TVM prints as references.

TVM prints a tensor constant as `metadata["ir.GenericConst"][i]` (classic
releases: `metadata["relax.expr.Constant"][i]`) and leaves the table out of the
text, numbering the constants in the order the printer first meets them (one
number per constant object, whatever its value). tvmlite prints the same
references and keeps the values beside the text in a constants file: an `.npz`
(`tvmlite.array_file`) whose array `KEY/i` is `metadata["KEY"][i]`, named after
the text (`model.tvms` -> `model.constants.npz`, `sidecar_path`).

A table is given to the parser as that file's path or as a mapping shaped like
TVM's own table, `{"ir.GenericConst": [array0, array1, ...]}`. Every reference
to the same entry is the same `relax.Constant`, so printing the module again
numbers its constants as the text did.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tvmlite.array_file import load_arrays, save_arrays
from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import relax

SIDECAR_SUFFIX = ".constants.npz"
KEY_SEPARATOR = "/"  # between the table key and the index in a constants file
CONSTANT_KEYS = ("ir.GenericConst", "relax.expr.Constant")  # TVM 0.27's, classic's
RECIPE = "docs/constants.md"

ConstantsSource = str | os.PathLike[str] | Mapping[str, Sequence[Any]]


def sidecar_path(text_path: str | os.PathLike[str]) -> Path:
    """Where the constants of `text_path` live: `m.tvms` -> `m.constants.npz`."""
    path = Path(text_path)
    stem = path.name[: -len(path.suffix)] if path.suffix else path.name
    return path.with_name(stem + SIDECAR_SUFFIX)


def missing_table_message(ref: str) -> str:
    return (
        f"the value of {ref} is not in the text (TVM prints no metadata table): give its "
        "constants file (parse(text, constants=FILE), tvms --constants FILE, or "
        f"NAME.constants.npz beside NAME.tvms); {RECIPE} shows how to make one with TVM, "
        "or to export a model without constants"
    )


class ConstantTable:
    """The table a parse reads references from: loaded on first use, one
    `relax.Constant` per entry."""

    def __init__(self, source: ConstantsSource) -> None:
        if not isinstance(source, str | os.PathLike | Mapping):
            raise TVMLiteError(
                "constants= takes the path of a constants file (.npz) or a mapping "
                f'{{"ir.GenericConst": [array, ...]}}, not {type(source).__name__}'
            )
        self.source = source
        self._table: dict[str, list[Any]] | None = None
        self._made: dict[tuple[str, int], relax.Constant] = {}

    @property
    def origin(self) -> str:
        """How errors name the table."""
        if isinstance(self.source, Mapping):
            return "the table given"
        return os.fspath(self.source)

    def table(self) -> dict[str, list[Any]]:
        if self._table is None:
            if isinstance(self.source, Mapping):
                self._table = _checked_mapping(self.source)
            else:
                self._table = _table_of_file(os.fspath(self.source))
        return self._table

    def constant(self, key: str, index: int) -> relax.Constant:
        """The constant `metadata[key][index]`; a TVMLiteError saying what the
        table holds when it has no such entry."""
        made = self._made.get((key, index))
        if made is not None:
            return made
        table = self.table()
        entries = table.get(key)
        if entries is None:
            have = ", ".join(f'"{k}" ({_count(len(v))})' for k, v in table.items())
            raise TVMLiteError(f'{self.origin} has no "{key}" table (it has {have or "none"})')
        if not 0 <= index < len(entries):
            raise TVMLiteError(
                f'{self.origin} has {_count(len(entries))} in "{key}": no index {index}'
            )
        data = _array(entries[index], f'"{key}"[{index}]', self.origin)
        made = self._made[(key, index)] = relax.Constant(data)
        return made


def _count(n: int) -> str:
    return f"{n} constant" if n == 1 else f"{n} constants"


def _checked_mapping(source: Mapping[str, Sequence[Any]]) -> dict[str, list[Any]]:
    table = {}
    for key, entries in source.items():
        if not isinstance(key, str) or isinstance(entries, str | bytes | np.ndarray):
            raise TVMLiteError(
                "constants= maps a table key to a list of arrays "
                f'({{"ir.GenericConst": [array, ...]}}); got {key!r}: {type(entries).__name__}'
            )
        table[key] = list(entries)
    return table


def _table_of_file(path: str) -> dict[str, list[Any]]:
    """The table a constants file holds: every array named `KEY/i`, the indices
    of each key running from 0 without a gap."""
    found: dict[str, dict[int, np.ndarray]] = {}
    for name, array in load_arrays(path, "constants file").items():
        key, sep, index = name.rpartition(KEY_SEPARATOR)
        if not sep or not key or not index.isdigit() or str(int(index)) != index:
            raise TVMLiteError(
                f"{path}: array {name!r} is not named KEY/INDEX (a constants file names "
                'metadata["ir.GenericConst"][3] ir.GenericConst/3)'
            )
        found.setdefault(key, {})[int(index)] = array
    table = {}
    for key, by_index in found.items():
        gap = next((k for k in range(len(by_index)) if k not in by_index), None)
        if gap is not None:
            last = max(by_index)
            raise TVMLiteError(f"{path}: {key}/{gap} is missing (its table runs to {last})")
        table[key] = [by_index[k] for k in range(len(by_index))]
    return table


def _array(value: Any, where: str, origin: str) -> np.ndarray:
    try:
        array = value if isinstance(value, np.ndarray) else np.asarray(value)
    except (TypeError, ValueError) as err:
        raise TVMLiteError(f"{origin}: {where} is not an array: {err}") from None
    if array.dtype.hasobject or array.dtype.kind not in "biuf":
        raise TVMLiteError(f"{origin}: {where} has dtype {array.dtype}, not a tensor dtype")
    return array


def table_arrays(key: str, constants: Sequence[relax.Constant]) -> dict[str, np.ndarray]:
    """The arrays of a constants file for a table: `KEY/i` for entry i."""
    return {f"{key}{KEY_SEPARATOR}{k}": c.data for k, c in enumerate(constants)}


def save_table(path: str | os.PathLike[str], key: str, constants: Sequence[relax.Constant]) -> None:
    save_arrays(path, table_arrays(key, constants))

"""A build's constants as data: the arrays behind its `relax.Constant`s (bound
weights, BatchNorm statistics...) reach the machine code as bytes in objects,
never as LLVM IR text, which would print, parse and compile every byte.

The LLVM module declares one symbol per array, `tvmlite_const_data.K` (hidden),
and the constant's DLTensor points at it; the module also exports the table of
those DLTensors (`tvmlite_constants`, in K order). The arrays stay with the build
(`ConstantData`). Who defines the symbols depends on who loads the code:

- the JIT defines each symbol as the address of its array, in the build's own
  library of the JIT (`addresses`, `jit.py`): the compiled code reads the
  arrays where they are, nothing is copied, and the build's code keeps them
  alive. Each build's library resolves its own, so builds in several threads
  never meet.
- an exported library links an object whose read-only section holds the arrays'
  bytes, 64-byte aligned (`elf_object.write_data_object`), streamed from the
  arrays into the file the linker reads: the library is self-contained, and
  loading it maps the weights with the rest of the file (pages shared with the
  page cache, no copy).
- a library of the compile cache embeds only the constants the build made
  itself; those of the module built (the weights) are kept apart: their symbols
  are absolute 0, and loading the entry binds the module's own arrays (the key
  proved them identical) by writing the DLTensors of the table. Linking copies
  no weights, and the cache keeps none.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from llvmlite import ir

from tvmlite.dsl import relax
from tvmlite.lowering.codegen import elf_object
from tvmlite.lowering.codegen import llvm_host_abi as abi
from tvmlite.runtime.abi import CONSTANTS

SYMBOL = "tvmlite_const_data."  # + the array's index in the build


@dataclass(frozen=True)
class ConstantData:
    """The constants of a build, in symbol order: each one's `relax.Constant` and
    its array as the code reads it (C-contiguous, aligned, native byte order)."""

    constants: tuple[relax.Constant, ...] = ()
    arrays: tuple[np.ndarray, ...] = ()

    @property
    def symbols(self) -> tuple[str, ...]:
        return tuple(f"{SYMBOL}{k}" for k in range(len(self.arrays)))

    def digests(self) -> list[bytes]:
        """Each constant's digest (dsl/relax.py: computed once per constant)."""
        return [c.digest for c in self.constants]

    def addresses(self) -> dict[str, int]:
        """Each symbol's array's address."""
        return {name: a.ctypes.data for name, a in zip(self.symbols, self.arrays, strict=True)}

    def write_object(self, path: Path, triple: str, embed: Sequence[bool]) -> None:
        """The object a library links: the bytes of the arrays `embed` marks as
        data, the others absolute 0 (bound when the library is loaded)."""
        names = self.symbols
        kept = [k for k, e in enumerate(embed) if e]
        chunks = [memoryview(self.arrays[k].reshape(-1).view(np.uint8)) for k in kept]
        absent = [elf_object.Symbol(names[k], 0, 0) for k, e in enumerate(embed) if not e]
        with open(path, "wb") as f:
            elf_object.write_data_object(f, triple, chunks, [names[k] for k in kept], absent)


class ConstantPool:
    """The constants of one LLVM module, collected as codegen meets them: one
    symbol per array, declared in the module."""

    def __init__(self, module: ir.Module) -> None:
        self.module = module
        self._symbols: dict[int, ir.GlobalVariable] = {}  # id of an array -> its symbol
        self._constants: list[relax.Constant] = []
        self._arrays: list[np.ndarray] = []

    def symbol(self, const: relax.Constant) -> ir.GlobalVariable:
        """The symbol of the constant's bytes (declared on first use)."""
        found = self._symbols.get(id(const.data))
        if found is not None:
            return found
        array = readable_array(const.data)
        name = f"{SYMBOL}{len(self._arrays)}"
        declared = abi.global_var(self.module, ir.ArrayType(abi.I8, array.nbytes), name)
        declared.visibility = "hidden"
        declared.align = array.dtype.alignment
        self._symbols[id(const.data)] = declared
        self._constants.append(const)  # (holds the array, so its id stays its own)
        self._arrays.append(array)
        return declared

    def finish(self, headers: Sequence[ir.GlobalVariable]) -> ConstantData:
        """The table of the constants' DLTensors (`headers`, in symbol order) and
        the arrays."""
        if headers:
            kind = ir.ArrayType(abi.PTR, len(headers))
            table = abi.global_var(self.module, kind, CONSTANTS)
            table.initializer = ir.Constant(kind, list(headers))
            table.global_constant = True
        return ConstantData(tuple(self._constants), tuple(self._arrays))


def readable_array(data: np.ndarray) -> np.ndarray:
    """`data` as compiled code reads it: C-contiguous, aligned, native byte order
    (itself when it is; a copy otherwise)."""
    if data.flags.c_contiguous and data.flags.aligned and data.dtype.isnative:
        return data
    return np.array(data, dtype=data.dtype.newbyteorder("="), order="C")


def manifest_entries(data: ConstantData) -> list[dict[str, object]]:
    """The manifest's record of each constant: its size, and whether the
    library holds its bytes (set when a library is linked)."""
    return [{"nbytes": a.nbytes, "embedded": True} for a in data.arrays]

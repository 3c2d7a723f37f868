"""Relocatable ELF objects of data only, written by tvmlite itself: a build's
constants go into objects as their bytes, never through LLVM IR text
(`constant_data.py` says which objects and why).

A *data object* has one allocated read-only section holding byte ranges, and a
global symbol naming each range; it is written as a stream (the ranges go from
the caller's buffers straight into the file: the linker reads them from
there). It may define symbols whose values are addresses too (`SHN_ABS`).

Objects are for the host: its byte order, 64-bit ELF, and the machine of the
target triple (the ones listed in MACHINES).
"""

from __future__ import annotations

import struct
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import BinaryIO

from tvmlite.diagnostics import TVMLiteError

# e_machine by the architecture of a target triple.
MACHINES = {
    "x86_64": 62,
    "aarch64": 183,
    "arm64": 183,
    "riscv64": 243,
    "powerpc64le": 21,
    "powerpc64": 21,
    "ppc64le": 21,
    "s390x": 22,
    "loongarch64": 258,
}
ALIGN = 64  # of the data section and of every range in it
ET_REL, EV_CURRENT, ELFCLASS64 = 1, 1, 2
SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB = 1, 2, 3
SHF_ALLOC = 0x2
SHF_X86_64_LARGE = 0x10000000
SHN_ABS = 0xFFF1
STB_GLOBAL, STT_OBJECT = 1, 1
STV_DEFAULT, STV_HIDDEN = 0, 2
HEADER_SIZE, SECTION_HEADER_SIZE, SYMBOL_SIZE = 64, 64, 24


@dataclass(frozen=True)
class Symbol:
    """`name` at `value` (an offset in the data section, or an absolute address)
    spanning `size` bytes."""

    name: str
    value: int
    size: int


def layout(sizes: Iterable[int]) -> tuple[list[int], int]:
    """The offsets of ranges of `sizes` bytes laid out in a data section, each
    aligned to ALIGN, and the section's size."""
    offsets, end = [], 0
    for size in sizes:
        end += -end % ALIGN
        offsets.append(end)
        end += size
    return offsets, end


def write_data_object(
    f: BinaryIO,
    triple: str,
    chunks: Sequence[memoryview],
    names: Sequence[str],
    absolute: Sequence[Symbol] = (),
) -> None:
    """Write to `f` an object whose data section holds `chunks` (at `layout`'s
    offsets), each named by the symbol of the same index in `names`, and which
    defines the `absolute` symbols too. Every symbol is hidden: the library it
    is linked into uses it, nothing else."""
    arch = triple.split("-")[0]
    offsets, size = layout(len(c) for c in chunks)
    # x86-64's large read-only data: placed after code and data, so that any
    # amount of it leaves them within reach of 32-bit PC-relative addressing.
    large = arch == "x86_64"
    section = ".lrodata.tvmlite" if large else ".rodata.tvmlite"
    flags = SHF_ALLOC | (SHF_X86_64_LARGE if large else 0)
    f.write(bytes(HEADER_SIZE))  # written last, once the tables' offsets are known
    start = f.tell()
    for offset, chunk in zip(offsets, chunks, strict=True):
        f.write(bytes(start + offset - f.tell()))
        f.write(chunk)
    f.write(bytes(start + size - f.tell()))
    symbols = [(Symbol(n, o, len(c)), 1) for n, o, c in zip(names, offsets, chunks, strict=True)]
    symbols += [(sym, SHN_ABS) for sym in absolute]
    # An empty .note.GNU-stack: without it, linkers mark the library as needing an
    # executable stack (and recent C libraries refuse to load such a library).
    sections = [(section, flags, start, size, ALIGN), (".note.GNU-stack", 0, f.tell(), 0, 1)]
    _finish(f, triple, sections, symbols, hidden=True)


def _finish(
    f: BinaryIO,
    triple: str,
    sections: Sequence[tuple[str, int, int, int, int]],
    symbols: Sequence[tuple[Symbol, int]],
    hidden: bool,
) -> None:
    """The symbol and string tables after what `f` holds, then the section
    headers, then the ELF header over the space left for it at the start.
    `sections` are those `f` holds already: (name, flags, offset, size, align)
    each, of SHT_PROGBITS. Each symbol comes with its section index (SHN_ABS:
    an address)."""
    order = "<" if sys.byteorder == "little" else ">"
    machine = MACHINES.get(triple.split("-")[0])
    if machine is None:
        known = ", ".join(sorted(MACHINES))
        raise TVMLiteError(f"cannot write an ELF object for {triple} (machines: {known})")
    strings = bytearray(b"\0")
    symtab = bytearray(bytes(SYMBOL_SIZE))  # symbol 0: none
    info, other = (STB_GLOBAL << 4) | STT_OBJECT, STV_HIDDEN if hidden else STV_DEFAULT
    for sym, shndx in symbols:
        at = len(strings)
        strings += sym.name.encode() + b"\0"
        symtab += struct.pack(order + "IBBHQQ", at, info, other, shndx, sym.value, sym.size)
    titles = [*(title for title, *_ in sections), ".symtab", ".strtab", ".shstrtab"]
    names = b"\0" + b"".join(t.encode() + b"\0" for t in titles)
    title_at = [names.index(b"\0" + t.encode() + b"\0") + 1 for t in titles]
    symtab_index = len(titles) - 2  # sections: null, `sections`, .symtab, .strtab, .shstrtab
    # (name, kind, flags, offset, size, link, info, align, entsize) of each section
    rows: list[tuple[int, ...]] = [(0,) * 9]
    for k, (_, flags, offset, size, align) in enumerate(sections):
        rows.append((title_at[k], SHT_PROGBITS, flags, offset, size, 0, 0, align, 0))
    for kind, payload, link, sh_info, align, entsize in (
        (SHT_SYMTAB, symtab, symtab_index + 1, 1, 8, SYMBOL_SIZE),
        (SHT_STRTAB, strings, 0, 0, 1, 0),
        (SHT_STRTAB, names, 0, 0, 1, 0),
    ):
        offset = _pad(f, align)
        f.write(payload)
        rows.append(
            (title_at[len(rows) - 1], kind, 0, offset, len(payload), link, sh_info, align, entsize)
        )
    table = _pad(f, 8)
    for row in rows:
        name, kind, flags, offset, size, link, sh_info, align, entsize = row
        f.write(
            struct.pack(
                order + "IIQQQQIIQQ",
                name,
                kind,
                flags,
                0,
                offset,
                size,
                link,
                sh_info,
                align,
                entsize,
            )
        )
    ident = b"\x7fELF" + bytes([ELFCLASS64, 1 if order == "<" else 2, EV_CURRENT]) + bytes(9)
    fields = (ET_REL, machine, EV_CURRENT, 0, 0, table, 0, HEADER_SIZE, 0, 0)
    header = ident + struct.pack(
        order + "HHIQQQIHHHHHH", *fields, SECTION_HEADER_SIZE, len(rows), len(rows) - 1
    )
    end = f.tell()
    f.seek(0)
    f.write(header)
    f.seek(end)


def _pad(f: BinaryIO, align: int) -> int:
    f.write(bytes(-f.tell() % align))
    return f.tell()

"""What a shared library exports, read from its bytes without loading it.

Loading a library (`dlopen`) runs its constructors, so `load_module` first reads
the file as data: the dynamic symbol table says which symbols the library
itself defines (as opposed to ones its dependencies, such as libc, provide),
and the manifest is a constant string in one of its sections. Only ELF is read
(the format of the shared objects `export_library` links on Linux and the
BSDs); anything else is refused as not a tvmlite library.
"""

from __future__ import annotations

import functools
import mmap
import struct
from dataclasses import dataclass
from pathlib import Path

from tvmlite.diagnostics import TVMLiteError

MAGIC = b"\x7fELF"
# ELF machine numbers tvmlite builds for, named as target triples name them.
MACHINE_NAMES = {62: "x86_64", 183: "aarch64"}
ET_DYN = 3
SHT_NOBITS, SHT_DYNSYM = 8, 11
STT_OBJECT, STT_FUNC = 1, 2
STB_GLOBAL, STB_WEAK = 1, 2
SHN_LORESERVE = 0xFF00  # section indices from here on are special (absolute, common)
# (header after e_ident, section header, symbol) layouts by ELF class: 1 = 32-bit, 2 = 64-bit.
LAYOUTS = {
    1: ("HHIIIIIHHHHHH", "IIIIIIIIII", "IIIBBH"),
    2: ("HHIQQQIHHHHHH", "IIQQQQIIQQ", "IBBHQQ"),
}


@dataclass(frozen=True)
class Section:
    kind: int
    address: int
    offset: int
    size: int
    link: int


@dataclass(frozen=True)
class Symbol:
    """A symbol the library defines in one of its sections."""

    kind: int  # STT_OBJECT, STT_FUNC, ...
    section: int
    value: int
    size: int


class SharedObject:
    """The defined global dynamic symbols of an ELF shared object (`symbols`),
    and the constant data they name (`cstring`). `data` is the file's bytes or
    a memory map of it (a library holding a model's weights is read only where
    it is checked)."""

    def __init__(self, data: bytes | mmap.mmap, path: Path) -> None:
        self.data, self.path = data, path
        try:
            self.sections, self.symbols = self._parse()
        except (struct.error, IndexError, UnicodeDecodeError):
            raise self.error("a truncated or malformed ELF file") from None

    def error(self, why: str) -> TVMLiteError:
        return TVMLiteError(f"{self.path}: not a tvmlite library: {why}")

    def _parse(self) -> tuple[list[Section], dict[str, Symbol]]:
        data = self.data
        if data[:4] != MAGIC:
            raise self.error("not an ELF shared object")
        cls, order = data[4], {1: "<", 2: ">"}.get(data[5])
        if cls not in LAYOUTS or order is None:
            raise self.error("an ELF file of unknown class or byte order")
        header, section, symbol = (order + f for f in LAYOUTS[cls])
        (e_type, machine, _, _, _, shoff, _, _, _, _, shentsize, shnum, _) = struct.unpack_from(
            header, data, 16
        )
        if e_type != ET_DYN:
            raise self.error("an ELF file that is not a shared object")
        here = host_machine()
        if here is not None and machine != here:
            raise TVMLiteError(
                f"{self.path}: a library for {_machine_name(machine)}, and this process runs on "
                f"{_machine_name(here)}: run it on its machine (or under its emulator)"
            )
        if shentsize != struct.calcsize(section):
            raise self.error("an ELF file with unexpected section headers")
        if shnum == 0 and shoff:  # extended numbering: the count is in section 0
            shnum = struct.unpack_from(section, data, shoff)[5]
        sections = []
        for k in range(shnum):
            _, kind, _, address, offset, size, link, _, _, _ = struct.unpack_from(
                section, data, shoff + k * shentsize
            )
            sections.append(Section(kind, address, offset, size, link))
        return sections, self._symbols(sections, symbol, wide=cls == 2)

    def _symbols(self, sections: list[Section], layout: str, wide: bool) -> dict[str, Symbol]:
        found: dict[str, Symbol] = {}
        step = struct.calcsize(layout)
        for table in (s for s in sections if s.kind == SHT_DYNSYM):
            names = sections[table.link]
            for offset in range(table.offset, table.offset + table.size - step + 1, step):
                fields = struct.unpack_from(layout, self.data, offset)
                if wide:  # 64-bit: name, info, other, shndx, value, size
                    name, info, _, shndx, value, size = fields
                else:  # 32-bit: name, value, size, info, other, shndx
                    name, value, size, info, _, shndx = fields
                if not 0 < shndx < SHN_LORESERVE or info >> 4 not in (STB_GLOBAL, STB_WEAK):
                    continue  # undefined here (a dependency's), special or local
                found[self._string(names, name)] = Symbol(info & 0xF, shndx, value, size)
        return found

    def _string(self, table: Section, offset: int) -> str:
        start = table.offset + offset
        end = self.data.find(b"\0", start, table.offset + table.size)
        if end < 0:
            raise IndexError("an unterminated name")
        return bytes(self.data[start:end]).decode()

    def cstring(self, name: str) -> bytes:
        """The NUL-terminated constant the object symbol `name` holds."""
        symbol = self.symbols.get(name)
        if symbol is None or symbol.kind != STT_OBJECT:
            raise self.error(f"no {name} in its symbol table")
        section = self.sections[symbol.section]
        start = section.offset + symbol.value - section.address
        end = min(section.offset + section.size, start + symbol.size, len(self.data))
        if section.kind == SHT_NOBITS or not section.offset <= start < end:
            raise self.error(f"{name} does not lie in the file")
        stop = self.data.find(b"\0", start, end)
        if stop < 0:
            raise self.error(f"{name} is not a terminated string")
        return bytes(self.data[start:stop])


@functools.cache
def host_machine() -> int | None:
    """The ELF machine of this process (its executable's), None when unknown."""
    try:
        with open("/proc/self/exe", "rb") as f:
            head = f.read(20)
    except OSError:
        return None
    if len(head) < 20 or head[:4] != MAGIC or head[5] not in (1, 2):
        return None
    return struct.unpack_from("<H" if head[5] == 1 else ">H", head, 18)[0]


def _machine_name(machine: int) -> str:
    return MACHINE_NAMES.get(machine, f"ELF machine {machine}")

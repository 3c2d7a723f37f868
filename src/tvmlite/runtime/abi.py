"""The native ABI of compiled modules as the runtime needs it to call one
(docs/abi.md): symbol names, status codes, how struct info flattens into the
arguments of an entry, and a kernel's calling convention. Code generation
(`lowering/codegen/`) produces code that follows it; the runtime only reads it,
so calling a built library needs no compiler.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import relax, tir
from tvmlite.dsl.analysis import free_vars

# Every symbol of compiled code starts with PREFIX. An exported library replaces
# it with its own prefix on the symbols it exports (`exported_symbols`) and hides
# the rest, so several libraries link into one program.
PREFIX = "tvmlite_"
# Data a module defines for its loader: the JSON manifest, the packed-function
# table (one pointer per name, in manifest order, filled by the loader), and the
# table of CPython/NumPy addresses the fast-call wrappers read (`fastcall.py`).
MANIFEST = "tvmlite_manifest"
PACKED_TABLE = "tvmlite_packed_funcs"
PACKED_NAMES = "tvmlite_packed_names"
PACKED_COUNT = "tvmlite_packed_count"
PYTHON_API = "tvmlite_python_api"
# A module of many graph functions has one fast-call wrapper for all of them
# (`SHARED_FASTCALL`) and a table of their records (`FASTCALL_RECORDS`,
# `FASTCALL_RECORD_BYTES` each), in place of a wrapper per function (docs/abi.md).
SHARED_FASTCALL = "tvmlite_fastcall"
FASTCALL_RECORDS = "tvmlite_fastcall_records"
FASTCALL_RECORD_BYTES = 40
# The take and give functions of the block cache a library allocates through
# (NULL: libc), which `build` fills on a library of the compile cache (docs/memory.md).
BLOCK_HOOKS = "tvmlite_block_hooks"
# The DLTensor* of each constant of the code, in the order of the manifest's "constants".
CONSTANTS = "tvmlite_constants"
# The counters of a profiled build (`module.profile`): an int64 pair (calls,
# nanoseconds) per row of the manifest's "profile" (lowering/codegen/llvm_profile.py).
PROFILE_COUNTERS = "tvmlite_profile_counters"
# Functions a C user of a library calls besides the entries (the header declares them).
ALLOC = "tvmlite_alloc_tensor"
BIND_PACKED = "tvmlite_bind_packed"
MISSING_PACKED = "tvmlite_missing_packed"

# Kernel status codes below this are asserts; the runtime owns the ones at and above.
STATUS_OUT_OF_MEMORY = 1 << 20
# Bytes a caller gives for the message of a failed assert that reports values.
MESSAGE_SIZE = 512
# Bytes of the error buffer an entry writes its message into.
ERROR_BYTES = 1024


def _c_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


def entry_symbol(name: str, prefix: str = PREFIX) -> str:
    """The C symbol of the graph function `name` (the only symbols a manifest may
    bind: a loader refuses any other)."""
    return f"{prefix}entry_{_c_name(name)}"


def fastcall_symbol(name: str, prefix: str = PREFIX) -> str:
    """The symbol of the CPython fast-call wrapper of the graph function `name`."""
    return f"{prefix}fastcall_{_c_name(name)}"


def with_prefix(symbol: str, prefix: str) -> str:
    """`symbol` (spelt with PREFIX) as a library with `prefix` spells it."""
    return prefix + symbol.removeprefix(PREFIX)


def exported_symbols(functions: Iterable[str], prefix: str) -> dict[str, str]:
    """What a library of the graph functions `functions` exports: each symbol of
    the compiled code (spelt with PREFIX) and its name in the library."""
    data = (MANIFEST, PACKED_TABLE, PACKED_NAMES, PACKED_COUNT, PYTHON_API, BLOCK_HOOKS, CONSTANTS)
    data += (PROFILE_COUNTERS,)  # defined by profiled builds only
    symbols = [*data, FASTCALL_RECORDS, SHARED_FASTCALL, ALLOC, BIND_PACKED, MISSING_PACKED]
    for name in functions:
        symbols += [entry_symbol(name), fastcall_symbol(name)]
    return {symbol: with_prefix(symbol, prefix) for symbol in symbols}


def kernel_symbol(name: str) -> str:
    """The symbol of the kernel of prim function `name`: prefixed so that a prim
    function called `exp` or `free` cannot shadow the C library."""
    return "tvmlite_" + _c_name(name)


# ------------------------------------------------------------ entry arguments


@dataclass(frozen=True)
class Leaf:
    """One ABI slot of a parameter or result: `label` names it for messages
    (`x`, `t[1]`), `sinfo` is a Tensor, Prim or Shape struct info."""

    label: str
    sinfo: relax.StructInfo


def leaves(sinfo: relax.StructInfo, label: str) -> list[Leaf]:
    """Depth-first leaves of `sinfo`; a tuple contributes its fields' leaves."""
    if isinstance(sinfo, relax.TupleStructInfo):
        out: list[Leaf] = []
        for i, f in enumerate(sinfo.fields):
            out.extend(leaves(f, f"{label}[{i}]"))
        return out
    if isinstance(sinfo, relax.TensorStructInfo | relax.PrimStructInfo | relax.ShapeStructInfo):
        return [Leaf(label, sinfo)]
    raise TVMLiteError(
        f"'{label}' has struct info {type(sinfo).__name__}, which compiled code cannot pass "
        "(only tensors, prim values, shapes and tuples of them)"
    )


# ------------------------------------------------------------ kernels


@dataclass(frozen=True, slots=True)
class Param:
    """One kernel parameter. `buffer` is None for scalars and for bare handles."""

    name: str
    var: tir.Var
    buffer: tir.Buffer | None

    @property
    def is_pointer(self) -> bool:
        return self.var.dtype == "handle"


@dataclass(frozen=True, slots=True)
class KernelSignature:
    """The calling convention of a lowered PrimFunc. A kernel takes, in order: one
    pointer per handle parameter (the buffer's data), the scalar parameters in
    their own dtype, then one int64 per `sym_vars` entry (vars the parameter
    buffers declare that are not parameters themselves) and, when `reports`, a
    char buffer of MESSAGE_SIZE bytes and its size, where a failing assert writes
    its message with values filled in. It returns int32: 0, or the 1-based
    number of the assert that failed (`errors` holds their messages, `?` for a
    reported value). Param names are distinct; `written` names the buffer
    parameters the body stores to."""

    name: str
    params: tuple[Param, ...]
    sym_vars: tuple[tir.Var, ...]
    written: frozenset[str]
    noalias: bool
    errors: tuple[str, ...]
    reports: bool = False


def buffer_vars(buffer: tir.Buffer) -> list[tir.Var]:
    """Vars in a buffer's shape, strides and elem_offset, in that order."""
    offset = () if buffer.elem_offset is None else (buffer.elem_offset,)
    return free_vars((*buffer.shape, *buffer.strides, *offset))

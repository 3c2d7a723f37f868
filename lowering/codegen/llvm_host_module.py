"""The host's LLVM module of an IRModule: every prim function's kernel declared
(each is a compiled unit of its own: `kernel_unit.py`), every graph function
as a host entry (`tvmlite_entry_<name>`), the helpers, the
constants' DLTensors (their bytes are not in the module: `constant_data.py`)
and the packed-function callback table. The manifest is data for
loaders of a library: linking one writes it (`link.py`).

The callback table is data, not code: `tvmlite_packed_funcs` holds one function
pointer per name in `tvmlite_packed_names`, filled by whoever loads the code
(the JIT runtime now, a C loader for an exported library later).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
from llvmlite import ir

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import relax
from tvmlite.lowering.codegen import llvm_host_abi as abi
from tvmlite.lowering.codegen import llvm_types as ty
from tvmlite.lowering.codegen.constant_data import ConstantData, ConstantPool
from tvmlite.lowering.codegen.kernel_unit import KernelUnit
from tvmlite.lowering.codegen.llvm_host import emit_function
from tvmlite.lowering.codegen.llvm_host_calls import PACKED_TABLE, Kernel
from tvmlite.lowering.codegen.llvm_host_support import declare_support
from tvmlite.lowering.codegen.llvm_kernel import declare_kernel
from tvmlite.lowering.codegen.llvm_profile import Profiler
from tvmlite.runtime.abi import (
    PACKED_COUNT,
    PACKED_NAMES,
    KernelSignature,
    entry_symbol,
)

# At most this many graph functions and the small ones are optimized code (see
# `emit_function`): beyond, a module of many functions builds them as programs.
SMALL_MODULE = 16


@dataclass
class HostContext:
    """What every host function of one module shares."""

    module: ir.Module
    functions: dict[str, relax.Function]
    kernels: dict[str, Kernel] = field(default_factory=dict)
    entries: dict[str, ir.Function] = field(default_factory=dict)
    small_module: bool = False  # few graph functions: small ones become optimized code
    # A large module's program entries, again, for the JIT to compile without
    # codegen optimization (`jit.py`): thousands of one-call functions.
    glue: ir.Module | None = None
    packed: dict[str, int] = field(default_factory=dict)
    profiler: Profiler | None = None  # a profiled build's counters (`llvm_profile.py`)
    pool: ConstantPool = field(init=False)
    # id of an array -> (the array, its DLTensor), in the pool's order
    constants: dict[int, tuple[np.ndarray, ir.GlobalVariable]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.pool = ConstantPool(self.module)

    def packed_index(self, symbol: str) -> int:
        """The table index of packed function `symbol` (in first-use order)."""
        return self.packed.setdefault(symbol, len(self.packed))

    def constant(self, const: relax.Constant) -> ir.Value:
        """A DLTensor global for a tensor constant; its data is the pool's symbol
        for the array (`constant_data.py`: bytes in objects, not in the IR). The
        DLTensor is writable: loading a library of the compile cache points it at
        the module's own array."""
        data = const.data
        found = self.constants.get(id(data))
        if found is not None:
            return found[1]
        m = self.module
        k = len(self.constants)
        dims = [ty.constant("int64", d) for d in data.shape] or [ty.constant("int64", 0)]
        shape = abi.global_var(m, ir.ArrayType(abi.I64, len(dims)), f"tvmlite_const_shape.{k}")
        shape.initializer = ir.Constant(ir.ArrayType(abi.I64, len(dims)), dims)
        shape.global_constant = True
        shape.linkage = "private"
        packed = abi.packed_dtype(str(data.dtype))
        header = abi.global_var(m, abi.DLTENSOR, f"tvmlite_const.{k}")
        header.initializer = ir.Constant(
            abi.DLTENSOR,
            [
                self.pool.symbol(const),
                ir.Constant(
                    abi.DEVICE, [ty.constant("int32", abi.KDL_CPU), ty.constant("int32", 0)]
                ),
                ty.constant("int32", data.ndim),
                ir.Constant(
                    abi.DTYPE,
                    [
                        ir.Constant(abi.I8, packed & 0xFF),
                        ir.Constant(abi.I8, (packed >> 8) & 0xFF),
                        ir.Constant(abi.I16, packed >> 16),
                    ],
                ),
                shape,
                ir.Constant(abi.PTR, None),
                ty.constant("int64", 0),
            ],
        )
        header.linkage = "private"
        self.constants[id(data)] = (data, header)
        return header


@dataclass(frozen=True)
class HostModule:
    """What `build_host_module` made: the LLVM module, the glue (`HostContext.glue`,
    None when there are no entries to put there), the packed-function names in
    table order, the arrays of the constants (`constant_data.py`) and, for a
    profiled build, what each pair of counters counts (`llvm_profile.py`)."""

    module: ir.Module
    glue: ir.Module | None
    packed: list[str]
    constants: ConstantData
    profile: list[list[str]] | None


def build_host_module(
    kernels: Mapping[str, KernelSignature],
    units: Mapping[str, KernelUnit],
    graphs: Mapping[str, relax.Function],
    profile: bool = False,
) -> HostModule:
    """The host module of graph functions calling the kernels of `units` (by
    prim function name, with their signatures `kernels`); `profile` makes host
    code count and time every kernel and packed call."""
    module = ir.Module(name="tvmlite")
    declare_support(module)
    small = len(graphs) <= SMALL_MODULE
    glue = None if small else ir.Module(name="tvmlite_glue")
    ctx = HostContext(module, dict(graphs), small_module=small, glue=glue)
    ctx.profiler = Profiler(module) if profile else None
    for name, sig in kernels.items():
        unit = units[name]
        found = module.globals.get(unit.symbol)  # identical kernels share one unit
        fn = found if isinstance(found, ir.Function) else declare_kernel(module, sig, unit.symbol)
        if ctx.profiler is not None:  # host code calls the kernel through its timer
            fn = ctx.profiler.kernel(name, fn)
        table = _error_table(module, name, sig)
        ctx.kernels[name] = Kernel(sig, fn, table, unit.can_fail)
    # Sized once every graph function has said which packed functions it calls.
    abi.global_var(module, ir.ArrayType(abi.PTR, 0), PACKED_TABLE)
    taken = {fn.name for fn in module.functions}
    for name in graphs:
        symbol = entry_symbol(name)
        if symbol in taken:
            raise TVMLiteError(f"the entry symbol of '{name}' clashes with '{symbol}'")
        fn = ir.Function(module, abi.ENTRY_TYPE, symbol)
        fn.attributes.add("nounwind")
        fn.attributes.add("optsize")  # straight-line checks and calls: nothing to unroll
        ctx.entries[name] = fn
    for name, func in graphs.items():
        emit_function(ctx, name, func)  # its errors name the function already
    names = list(ctx.packed)
    _packed_table(module, names)
    constants = ctx.pool.finish([header for _, header in ctx.constants.values()])
    rows = ctx.profiler.finish() if ctx.profiler is not None else None
    return HostModule(
        module, glue if glue is not None and glue.functions else None, names, constants, rows
    )


def _error_table(module: ir.Module, name: str, sig: KernelSignature) -> ir.GlobalVariable:
    messages = ["kernel failed", *sig.errors]
    table_type = ir.ArrayType(abi.PTR, len(messages))
    table = abi.global_var(module, table_type, f"tvmlite_errors.{name}")
    table.initializer = ir.Constant(table_type, [abi.cstring(module, m) for m in messages])
    table.global_constant = True
    table.linkage = "private"
    return table


def _packed_table(module: ir.Module, names: list[str]) -> None:
    for name in names:  # looked up as C strings: "a\0b" would find function "a"
        if not _is_c_string(name):
            raise TVMLiteError(f"packed function name {name!r} cannot be written as a C string")
    count = max(1, len(names))
    table = module.globals[PACKED_TABLE]
    table.value_type = ir.ArrayType(abi.PTR, count)
    table.initializer = ir.Constant(table.value_type, [None] * count)
    strings = [abi.cstring(module, n) for n in names] or [ir.Constant(abi.PTR, None)]
    table_names = abi.global_var(module, ir.ArrayType(abi.PTR, count), PACKED_NAMES)
    table_names.initializer = ir.Constant(ir.ArrayType(abi.PTR, count), strings)
    table_names.global_constant = True
    number = abi.global_var(module, abi.I32, PACKED_COUNT)
    number.initializer = ty.constant("int32", len(names))
    number.global_constant = True


def _is_c_string(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:  # a lone surrogate
        return False
    return "\0" not in text

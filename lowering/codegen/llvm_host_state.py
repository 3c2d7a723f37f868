"""The state of one graph function while its host code is written: what every
part of the host emitter (`llvm_host.py`) reads and updates, in one object each
part receives, so a part's methods read as what they do to the function.

Three kinds of fields: what the function is (context, name, body, form, memory
plan), where code goes (the builder, the TIR expression emitter and its var
values, and the chunk being written: its function and entry-ABI values, set by
`Chunks` when it opens a chunk), and what has been made so far (frame slots, the
values of Relax vars, the origin of symbolic dims). Parts keep their own
bookkeeping (pending steps, chunk homes) to themselves.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from llvmlite import ir

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import relax, tir
from tvmlite.lowering.codegen import llvm_host_abi as abi
from tvmlite.lowering.codegen import llvm_types as ty
from tvmlite.lowering.codegen.llvm_expr import ExprEmitter
from tvmlite.lowering.codegen.llvm_host_values import Home, TensorVal, Val, shape_text
from tvmlite.lowering.codegen.memory_plan import PLAN_KEY, MemoryPlan, plan_memory
from tvmlite.lowering.transform import PassContext

if TYPE_CHECKING:
    from tvmlite.lowering.codegen.llvm_host_module import HostContext

PTR = abi.PTR


class HostExprs(ExprEmitter):
    """TIR expressions (symbolic dims, kernel scalars) in host code: a var whose
    value crossed a chunk boundary is loaded from its home on first use in the
    chunk (`load_home`, the chunk writer's)."""

    def __init__(self, module: ir.Module, builder: ir.IRBuilder) -> None:
        super().__init__(module, builder)
        self.load_home: Callable[[Home], ir.Value] = _no_chunk

    def visit_Var(self, e: tir.Var) -> ir.Value:
        value = self.vars.get(e)
        if isinstance(value, Home):
            self.vars[e] = self.load_home(value)
        return super().visit_Var(e)


def _no_chunk(home: Home) -> ir.Value:
    raise AssertionError("a home exists only once chunks are written")


class HostFunction:
    """One graph function being emitted (see the module docstring)."""

    def __init__(self, ctx: HostContext, name: str, func: relax.Function, steps: bool) -> None:
        self.ctx = ctx
        self.module = ctx.module
        self.name = name
        self.func = func
        self.prefix = f"{name}: "  # of every message
        self.use_steps = steps  # else optimized code: the frame helpers are inlined
        planned = PassContext.current().get(PLAN_KEY, True)
        self.plan = plan_memory(func) if planned else MemoryPlan()
        self.b = ir.IRBuilder()
        self.exprs = HostExprs(ctx.module, self.b)
        # The chunk being written (`Chunks.open_chunk`); a program has none.
        self.fn: ir.Function
        self.allocas: ir.IRBuilder  # the chunk's entry block, for stack memory
        self.args_ptr: ir.Value
        self.num_args: ir.Value
        self.outs_ptr: ir.Value
        self.num_outs: ir.Value
        self.err: ir.Value
        self.err_len: ir.Value
        self.frame: ir.Value
        self.spill: ir.Value
        # What is made so far.
        self.slots = 0  # frame slots in use
        self.released: set[int] = set()
        self.slot_of: dict[int, int] = {}  # id of a DLTensor* value -> the slot of its block
        self.values: dict[relax.Var, Val] = {}
        self.touched: list[relax.Var] = []  # vars whose values may be of the current chunk
        self.origin: dict[tir.Var, str] = {}  # a symbolic dim -> what it was bound from
        self.roots: dict[relax.Var, set[int]] = {}  # a var -> the slots it may reach

    def new_slot(self) -> int:
        """The index of a frame slot no one uses yet."""
        self.slots += 1
        return self.slots - 1

    def slot(self, index: int) -> ir.Value:
        """The address of frame slot `index`, at the builder's position."""
        return self.b.gep(self.frame, [ty.constant("int64", index)], source_etype=PTR)

    def dim_value(self, dim: tir.PrimExpr, what: str) -> ir.Value:
        """A TIR dim as an int64 value here."""
        try:
            return self.exprs.int64(dim)
        except TVMLiteError as err:
            raise TVMLiteError(
                f"{self.prefix}{what}: cannot compute dim {shape_text(dim)}: {err}"
            ) from None

    def constant(self, e: relax.Constant) -> TensorVal:
        """A tensor constant: the module's DLTensor global for its data."""
        data = e.data
        dims = tuple(ty.constant("int64", d) for d in data.shape)
        return TensorVal(self.ctx.constant(e), str(data.dtype), data.ndim, dims)

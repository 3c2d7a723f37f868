"""A graph (Relax) function as native host code: one LLVM function with the
entry ABI of docs/abi.md, built next to its kernels in the same module.

The function checks its arguments, binds symbolic dims, walks the bindings
(kernels, calls, tuples, `R.If`, `R.match_cast`, constants) and returns owned
DLManagedTensors. Every tensor it allocates lives in a stack slot; a slot is
released after the last top-level binding that can reach it, and whatever is
left is released in the one cleanup block every exit goes through, so neither
an error nor a return leaks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from llvmlite import ir

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import relax, tir
from tvmlite.lowering.codegen import llvm_host_abi as abi
from tvmlite.lowering.codegen import llvm_types as ty
from tvmlite.lowering.codegen.llvm_expr import ExprEmitter
from tvmlite.lowering.codegen.llvm_host_calls import NULL, HostCalls
from tvmlite.lowering.codegen.llvm_host_check import HostChecks, literal
from tvmlite.lowering.codegen.llvm_host_flow import HostFlow, referenced_vars
from tvmlite.lowering.codegen.llvm_host_invoke import HostInvoke
from tvmlite.lowering.codegen.llvm_host_values import (
    PrimVal,
    ShapeVal,
    TensorVal,
    TupleVal,
    Val,
    rebuild,
    val_leaves,
)
from tvmlite.runtime.abi import leaves

if TYPE_CHECKING:
    from tvmlite.lowering.codegen.llvm_host_module import HostContext

I32, I64, PTR = abi.I32, abi.I64, abi.PTR


INPLACE = frozenset({"relax.call_tir_inplace", "relax.call_inplace_packed"})


class HostEmitter(HostFlow, HostInvoke, HostCalls, HostChecks, ExprEmitter):
    """Emits one graph function into its (already declared) entry function."""

    def __init__(self, ctx: HostContext, name: str, func: relax.Function) -> None:
        self.ctx = ctx
        self.func = func
        self.fn = ctx.entries[name]
        self.prefix = f"{name}: "
        self.name = name
        start = self.fn.append_basic_block("entry")
        body = self.fn.append_basic_block("body")
        super().__init__(ctx.module, ir.IRBuilder(body))
        self.allocas = ir.IRBuilder(start)
        self.cleanup = self.fn.append_basic_block("cleanup")
        self.status = ir.IRBuilder(self.cleanup).phi(I32, "status")
        self.args_ptr, self.num_args, self.outs_ptr, self.num_outs, self.err, self.err_len = (
            self.fn.args
        )
        self.slots: list[ir.Value] = []
        self.released: set[int] = set()
        self.results: set[int] = set()  # slots of owned outputs (never given away twice)
        self.values: dict[relax.Var, Val] = {}
        self.origin: dict[tir.Var, str] = {}
        self.roots: dict[relax.Var, set[int]] = {}
        self._value: dict[type, Callable[[Any, relax.Var | None], Val]] = {
            relax.Var: self.visit_var,
            relax.DataflowVar: self.visit_var,
            relax.Constant: self.visit_constant,
            relax.Tuple: self.visit_tuple,
            relax.TupleGetItem: self.visit_get_item,
            relax.ShapeExpr: self.visit_shape,
            relax.PrimValue: self.visit_prim_value,
            relax.Call: self.visit_call,
            relax.If: self.visit_if,
            relax.SeqExpr: self.visit_seq,
        }

    # ------------------------------------------------------------ function frame

    def emit(self) -> None:
        self.bind_params()
        result = self.emit_top(self.func.body)
        self.emit_return(result)
        self.allocas.branch(self.fn.blocks[1])
        exit_b = ir.IRBuilder(self.cleanup)
        release = self.module.globals[abi.RELEASE]
        for slot in self.slots:
            exit_b.call(release, [exit_b.load(slot, typ=PTR)])
        exit_b.ret(self.status)

    def propagate(self, status: ir.Value) -> None:
        """Leave with a callee's status (its message is in the buffer already)."""
        good = self.fn.append_basic_block("call.ok")
        bad = self.fn.append_basic_block("call.bad")
        self.b.cbranch(self.b.icmp_signed("==", status, ty.constant("int32", 0)), good, bad)
        self.status.add_incoming(status, bad)
        ir.IRBuilder(bad).branch(self.cleanup)
        self.b.position_at_end(good)

    def bind_params(self) -> None:
        """Count, then every leaf's header and bare dims, then every dim."""
        b = self.b
        flat = [(p, leaf) for p in self.func.params for leaf in leaves(p.struct_info, p.name)]
        names = ", ".join(p.name for p in self.func.params)
        self.check(
            b.icmp_signed("==", self.num_args, ty.constant("int32", len(flat))),
            abi.STATUS_ARGUMENT,
            f"expected {len(flat)} arguments ({names}), got %d",
            self.num_args,
        )
        count = len(leaves(self.func.ret_struct_info, "result"))
        self.check(
            b.icmp_signed("==", self.num_outs, ty.constant("int32", count)),
            abi.STATUS_ARGUMENT,
            f"returns {count} values, the caller made room for %d",
            self.num_outs,
        )
        vals: list[Val] = []
        for k, (_, leaf) in enumerate(flat):
            ptr = b.load(b.gep(self.args_ptr, [ty.constant("int64", k)], source_etype=PTR), typ=PTR)
            what = f"parameter '{leaf.label}'"
            sinfo = leaf.sinfo
            if isinstance(sinfo, relax.TensorStructInfo):
                ndim = len(sinfo.shape) if isinstance(sinfo.shape, tuple) else sinfo.ndim
                self.check_header(ptr, sinfo.dtype, ndim, what, abi.STATUS_ARGUMENT)
                self.bind_dims(ptr, sinfo, what)
                vals.append(TensorVal(ptr, sinfo.dtype, ndim))
            else:
                vals.append(self.check_value(ptr, sinfo, what, abi.STATUS_ARGUMENT))
        for k, ((_, leaf), val) in enumerate(zip(flat, vals, strict=True)):
            if isinstance(leaf.sinfo, relax.TensorStructInfo) and isinstance(val, TensorVal):
                what = f"parameter '{leaf.label}'"
                dims = self.check_dims(val.ptr, leaf.sinfo, what, abi.STATUS_ARGUMENT)
                vals[k] = TensorVal(val.ptr, val.dtype, val.ndim, dims)
        for p in self.func.params:
            self.values[p] = rebuild(p.struct_info, vals)
            self.roots[p] = set()

    # ------------------------------------------------------------ bindings

    def emit_top(self, seq: relax.SeqExpr) -> Val:
        """Top-level bindings, releasing each owned tensor after its last use."""
        bindings = [bd for block in seq.blocks for bd in block.bindings]
        last_use: dict[relax.Var, int] = {}
        for i, bd in enumerate(bindings):
            for v in referenced_vars(bd.value):
                last_use[v] = i
        for v in referenced_vars(seq.body):
            last_use[v] = len(bindings)
        slot_last: dict[int, int] = {}
        for i, bd in enumerate(bindings):
            first = len(self.slots)
            self.emit_binding(bd)
            new = set(range(first, len(self.slots)))
            roots = new | self.alias_roots(bd.value)
            self.roots[bd.var] = roots
            for s in roots:
                slot_last[s] = max(slot_last.get(s, -1), last_use.get(bd.var, i))
            for s, last in slot_last.items():
                if last <= i and s not in self.released:
                    self.release_slot(s)
        return self.value(seq.body)

    def release_slot(self, s: int) -> None:
        slot = self.slots[s]
        self.b.call(self.module.globals[abi.RELEASE], [self.b.load(slot, typ=PTR)])
        self.b.store(NULL, slot)
        self.released.add(s)

    def alias_roots(self, e: relax.Expr) -> set[int]:
        """Slots a value may share with earlier values (not the ones it makes)."""
        if isinstance(e, relax.Var):
            return set(self.roots.get(e, set()))
        if isinstance(e, relax.Tuple):
            out: set[int] = set()
            for f in e.fields:
                out |= self.alias_roots(f)
            return out
        if isinstance(e, relax.TupleGetItem):
            return self.alias_roots(e.tuple_value)
        if isinstance(e, relax.Call) and isinstance(e.op, relax.Op) and e.op.name in INPLACE:
            out = set()  # the in-place arguments are the result: their slots live on
            args = e.args[1].fields if e.op.name == "relax.call_tir_inplace" else e.args[1:]
            for i in dict(e.attrs).get("inplace_indices", ()):
                if 0 <= int(i) < len(args):
                    out |= self.alias_roots(args[int(i)])
            return out
        if isinstance(e, relax.If | relax.SeqExpr):
            out = set()
            for v in referenced_vars(e):
                out |= self.roots.get(v, set())
            return out
        return set()

    def emit_binding(self, bd: relax.Binding) -> None:
        if isinstance(bd, relax.MatchCast):
            val = self.value(bd.value)
            self.values[bd.var] = self.match_cast(val, bd.struct_info, bd.var.name)
            return
        self.values[bd.var] = self.value(bd.value, bd.var)

    def value(self, e: relax.Expr, var: relax.Var | None = None) -> Val:
        visit = self._value.get(type(e))
        if visit is None:
            raise TVMLiteError(
                f"{self.prefix}{type(e).__name__} values are not supported in compiled code"
            )
        return visit(e, var)

    def visit_var(self, e: relax.Var, var: relax.Var | None) -> Val:
        found = self.values.get(e)
        if found is None:
            raise TVMLiteError(f"{self.prefix}'{e.name}' is used outside the scope that defines it")
        return found

    def visit_tuple(self, e: relax.Tuple, var: relax.Var | None) -> Val:
        return TupleVal(tuple(self.value(f) for f in e.fields))

    def visit_get_item(self, e: relax.TupleGetItem, var: relax.Var | None) -> Val:
        tup = self.value(e.tuple_value)
        if not isinstance(tup, TupleVal) or not 0 <= e.index < len(tup.fields):
            raise TVMLiteError(f"{self.prefix}tuple index {e.index} is out of range")
        return tup.fields[e.index]

    def visit_shape(self, e: relax.ShapeExpr, var: relax.Var | None) -> Val:
        return ShapeVal(tuple(self.dim_value(d, "R.shape") for d in e.values))

    def visit_prim_value(self, e: relax.PrimValue, var: relax.Var | None) -> Val:
        return PrimVal(self.expr(e.value), e.value.dtype)

    def visit_constant(self, e: relax.Constant, var: relax.Var | None) -> Val:
        data = e.data
        dims = tuple(ty.constant("int64", d) for d in data.shape)
        return TensorVal(self.ctx.constant(data), str(data.dtype), data.ndim, dims, constant=True)

    # ------------------------------------------------------------ return

    def emit_return(self, result: Val) -> None:
        """Own every output (take a slot's block, else copy), then hand them over."""
        flat = val_leaves(result)
        ret = leaves(self.func.ret_struct_info, "result")
        if len(flat) != len(ret):
            raise TVMLiteError(
                f"{self.prefix}the body returns {len(flat)} values, the signature {len(ret)}"
            )
        owned = []
        for v, leaf in zip(flat, ret, strict=True):
            owned.append(self.own(v, leaf.label))
            self.results.add(len(self.slots) - 1)
        for k, slot in enumerate(owned):
            out = self.b.gep(self.outs_ptr, [ty.constant("int64", k)], source_etype=PTR)
            self.b.store(self.b.load(slot, typ=PTR), out)
            self.b.store(NULL, slot)
        self.status.add_incoming(ty.constant("int32", abi.STATUS_OK), self.b.block)
        self.b.branch(self.cleanup)

    def own(self, val: Val, label: str) -> ir.Value:
        """A slot holding an owned block with `val`'s contents."""
        if isinstance(val, PrimVal):
            block = self.allocate(val.dtype, [], label)
            value = self.b.zext(val.value, abi.I8) if val.dtype == "bool" else val.value
            self.b.store(value, abi.load_field(self.b, block, abi.DATA, PTR))
            return self.slots[-1]
        if isinstance(val, ShapeVal):
            block = self.allocate("int64", [ty.constant("int64", len(val.dims))], label)
            data = abi.load_field(self.b, block, abi.DATA, PTR)
            for k, d in enumerate(val.dims):
                self.b.store(d, self.b.gep(data, [ty.constant("int64", k)], source_etype=I64))
            return self.slots[-1]
        assert isinstance(val, TensorVal)
        b = self.b
        taken: ir.Value = ir.Constant(ty.I1, 0)
        found: ir.Value = NULL
        for s, slot in enumerate(self.slots):
            if s in self.released or s in self.results:
                continue
            held = b.load(slot, typ=PTR)
            same = b.icmp_unsigned("==", abi.tensor_of(b, held), val.ptr)
            mine = b.and_(b.and_(same, b.icmp_unsigned("!=", held, NULL)), b.not_(taken))
            b.store(b.select(mine, NULL, held), slot)
            found = b.select(mine, held, found)
            taken = b.or_(taken, mine)
        before = b.block
        copy = self.fn.append_basic_block("copy")
        done = self.fn.append_basic_block("owned")
        b.cbranch(taken, done, copy)
        b.position_at_end(copy)
        fresh = b.call(self.module.globals[abi.COPY], [val.ptr])
        self.check(
            b.icmp_unsigned("!=", fresh, NULL),
            abi.STATUS_OOM,
            f"out of memory copying {literal(label)}",
        )
        after_copy = b.block
        b.branch(done)
        b.position_at_end(done)
        block = b.phi(PTR)
        block.add_incoming(found, before)
        block.add_incoming(fresh, after_copy)
        slot = self.stack_slot(PTR)
        self.allocas.store(NULL, slot)
        b.store(block, slot)
        self.slots.append(slot)
        return slot

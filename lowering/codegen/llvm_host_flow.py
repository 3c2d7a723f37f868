"""Control flow of host code: `R.If` (a branch per arm, phis joining their
values), nested sequences and `R.match_cast` (a value checked against struct
info at run time, binding the dims it introduces)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from llvmlite import ir

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import relax
from tvmlite.lowering.codegen import llvm_host_abi as abi
from tvmlite.lowering.codegen import llvm_types as ty
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
    from tvmlite.lowering.codegen.llvm_host_check import Checks
    from tvmlite.lowering.codegen.llvm_host_state import HostFunction


class Flow:
    """Control flow of the function being emitted (`f`): Relax expressions are
    evaluated by `value`, the bindings of a nested sequence emitted by `bind`."""

    def __init__(
        self,
        f: HostFunction,
        checks: Checks,
        value: Callable[[relax.Expr], Val],
        bind: Callable[[relax.Binding], None],
    ) -> None:
        self.f = f
        self.checks = checks
        self.value = value
        self.bind = bind

    def visit_seq(self, e: relax.SeqExpr, var: relax.Var | None) -> Val:
        for block in e.blocks:
            for bd in block.bindings:
                self.bind(bd)
        return self.value(e.body)

    def condition(self, val: Val) -> ir.Value:
        if isinstance(val, PrimVal):
            if val.dtype == "bool":
                return val.value
            zero = ty.constant(val.dtype, 0)
            if val.dtype.startswith("float"):
                return self.f.b.fcmp_unordered("!=", val.value, zero)
            return self.f.b.icmp_unsigned("!=", val.value, zero)
        if isinstance(val, TensorVal):
            if val.dtype != "bool" or val.ndim != 0:
                self.checks.check_header(
                    val.ptr, "bool", 0, "the condition of R.If", abi.STATUS_RUNTIME
                )
            byte = self.f.b.load(abi.data_pointer(self.f.b, val.ptr), typ=abi.I8)
            return self.f.b.icmp_unsigned("!=", byte, ty.constant("int8", 0))
        raise TVMLiteError(f"{self.f.prefix}the condition of R.If must be a bool tensor or scalar")

    def visit_if(self, e: relax.If, var: relax.Var | None) -> Val:
        cond = self.condition(self.value(e.condition))
        then_block = self.f.fn.append_basic_block("if.then")
        else_block = self.f.fn.append_basic_block("if.else")
        merge = self.f.fn.append_basic_block("if.merge")
        self.f.b.cbranch(cond, then_block, else_block)
        ends: list[tuple[Val, ir.Block]] = []
        for block, branch in ((then_block, e.true_branch), (else_block, e.false_branch)):
            saved = dict(self.f.exprs.vars)
            self.f.b.position_at_end(block)
            val = self.value(branch)
            ends.append((val, self.f.b.block))
            self.f.b.branch(merge)
            self.f.exprs.vars = saved
        self.f.b.position_at_end(merge)
        (a, from_a), (c, from_c) = ends
        return self.merge(a, from_a, c, from_c)

    def merge(self, a: Val, from_a: ir.Block, c: Val, from_c: ir.Block) -> Val:
        """Phis joining the two branches' values, leaf by leaf."""
        if isinstance(a, TupleVal) and isinstance(c, TupleVal) and len(a.fields) == len(c.fields):
            return TupleVal(
                tuple(
                    self.merge(x, from_a, y, from_c)
                    for x, y in zip(a.fields, c.fields, strict=True)
                )
            )
        if isinstance(a, TensorVal) and isinstance(c, TensorVal):
            ptr = self._phi(PTR_TYPE, a.ptr, from_a, c.ptr, from_c)
            dtype = a.dtype if a.dtype == c.dtype else "void"
            return TensorVal(ptr, dtype, a.ndim if a.ndim == c.ndim else -1)
        if isinstance(a, PrimVal) and isinstance(c, PrimVal) and a.dtype == c.dtype:
            return PrimVal(self._phi(a.value.type, a.value, from_a, c.value, from_c), a.dtype)
        if isinstance(a, ShapeVal) and isinstance(c, ShapeVal) and len(a.dims) == len(c.dims):
            return ShapeVal(
                tuple(
                    self._phi(abi.I64, x, from_a, y, from_c)
                    for x, y in zip(a.dims, c.dims, strict=True)
                )
            )
        raise TVMLiteError(f"{self.f.prefix}the branches of R.If give values of different kinds")

    def _phi(self, kind: ir.Type, x: ir.Value, bx: ir.Block, y: ir.Value, by: ir.Block) -> ir.Value:
        phi = self.f.b.phi(kind)
        phi.add_incoming(x, bx)
        phi.add_incoming(y, by)
        return phi

    def match_cast(self, val: Val, sinfo: relax.StructInfo, name: str) -> Val:
        """Check `val` against `sinfo` at run time and bind the dims it introduces."""
        what = f"R.match_cast to '{name}'"
        if isinstance(sinfo, relax.ObjectStructInfo):
            return val
        flat = val_leaves(val)
        try:
            want = leaves(sinfo, name)
        except TVMLiteError:
            return val
        if len(flat) != len(want):
            raise TVMLiteError(
                f"{self.f.prefix}{what}: the value has {len(flat)} parts, the type {len(want)}"
            )
        out: list[Val] = []
        for leaf, v in zip(want, flat, strict=True):
            label = what if len(want) == 1 else f"{what}, part {leaf.label}"
            if isinstance(v, TensorVal) and isinstance(leaf.sinfo, relax.TensorStructInfo):
                out.append(self.checks.check_tensor(v.ptr, leaf.sinfo, label, abi.STATUS_RUNTIME))
            elif isinstance(v, PrimVal) and isinstance(leaf.sinfo, relax.PrimStructInfo):
                self.checks.bind_prim(v.value, leaf.sinfo, label, abi.STATUS_RUNTIME)
                out.append(v)
            elif isinstance(v, ShapeVal) and isinstance(leaf.sinfo, relax.ShapeStructInfo):
                values = leaf.sinfo.values or ()
                if values and len(values) != len(v.dims):
                    raise TVMLiteError(f"{self.f.prefix}{label}: shape rank differs")
                for k, d in enumerate(values):
                    self.checks.bind_prim(
                        v.dims[k], relax.PrimStructInfo("int64", d), label, abi.STATUS_RUNTIME
                    )
                out.append(v)
            else:
                raise TVMLiteError(
                    f"{self.f.prefix}{label}: the value is not a {type(leaf.sinfo).__name__}"
                )
        return rebuild(sinfo, out)


PTR_TYPE = abi.PTR

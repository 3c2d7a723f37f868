"""Control flow and calls of host code: `R.If`, nested sequences,
`R.match_cast`, and the dispatch of `Call` nodes by what they call.

Calls are dispatched on the callee: an `Op` by name (only the call intrinsics
have native code; any other operator means legalization did not run), a
`GlobalVar` to another graph function, an `ExternFunc` to the packed table.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from llvmlite import ir

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import relax, tir
from tvmlite.lowering.codegen import llvm_host_abi as abi
from tvmlite.lowering.codegen import llvm_types as ty
from tvmlite.lowering.codegen.llvm_host_check import literal
from tvmlite.lowering.codegen.llvm_host_values import (
    UNIT,
    PrimVal,
    ShapeVal,
    TensorVal,
    TupleVal,
    Val,
    rebuild,
    val_leaves,
)
from tvmlite.runtime.abi import leaves


class HostFlow:
    """Mixin of the host emitter (see `HostEmitter` for the attributes)."""

    b: ir.IRBuilder
    fn: ir.Function
    vars: dict[tir.Var, ir.Value]

    def _op_calls(self) -> dict[str, Callable[[relax.Call, relax.Var | None], Val]]:
        return {
            "relax.call_tir": self.op_call_tir,
            "relax.call_tir_inplace": self.op_call_tir_inplace,
            "relax.call_inplace_packed": self.op_call_inplace_packed,
            "relax.call_dps_packed": self.op_call_dps_packed,
            "relax.call_pure_packed": self.op_call_pure_packed,
            "relax.call_packed": self.op_call_pure_packed,
            "relax.tensor_to_shape": self.op_tensor_to_shape,
            "relax.assert_op": self.op_assert_op,
            "relax.shape_of": self.op_shape_of,
            "relax.null_value": self.op_null_value,
            "relax.size": self.op_size,
            "relax.grad.start_checkpoint": self.op_identity,
            "relax.grad.end_checkpoint": self.op_identity,
            "relax.builtin.stop_lift_params": self.op_identity,
            "relax.hint_on_device": self.op_hint_on_device,
        }

    def visit_call(self, e: relax.Call, var: relax.Var | None) -> Val:
        op = e.op
        what = f"'{var.name}'" if var is not None else "a call"
        if isinstance(op, relax.Op):
            handler = self._op_calls().get(op.name)
            if handler is None:
                short = op.name.removeprefix("relax.")
                raise TVMLiteError(
                    f"{self.prefix}operator R.{short} (bound to {what}) reached code generation: "
                    "it has no native lowering and was not legalized (legalization needs the "
                    "shapes of its arguments and result; it is on by default, and "
                    "tvmlite.transform.LegalizeOps() runs it)"
                )
            return handler(e, var)
        if isinstance(op, relax.GlobalVar):
            if var is None:
                raise TVMLiteError(f"{self.prefix}a call of '{op.name}' must be bound to a var")
            return self.call_function(e, var, what)
        if isinstance(op, relax.ExternFunc):
            args = [leaf for a in e.args for leaf in val_leaves(self.value(a))]
            sinfo = e.sinfo_args[0] if e.sinfo_args else None
            if sinfo is None and var is not None:  # R.call_packed without ty_args
                sinfo = var.struct_info
            return self.call_packed(op.global_symbol, args, sinfo, dps=False)
        raise TVMLiteError(f"{self.prefix}cannot call a {type(op).__name__} in compiled code")

    def op_call_tir(self, e: relax.Call, var: relax.Var | None) -> Val:
        return self.call_tir(e, "R.call_tir", var)

    def op_call_tir_inplace(self, e: relax.Call, var: relax.Var | None) -> Val:
        return self.call_tir(e, "R.call_tir_inplace", var)

    def op_call_inplace_packed(self, e: relax.Call, var: relax.Var | None) -> Val:
        """The packed function writes the in-place arguments where they are and
        returns every output, as in TVM; the in-place ones are the arguments (what
        it returned for them, a copy when it is a Python function, is dropped)."""
        func = e.args[0]
        if not isinstance(func, relax.ExternFunc):
            raise TVMLiteError(f"{self.prefix}R.call_inplace_packed needs a function name")
        args = [leaf for a in e.args[1:] for leaf in val_leaves(self.value(a))]
        sinfo = e.sinfo_args[0] if e.sinfo_args else None
        if sinfo is None:
            raise TVMLiteError(f"{self.prefix}R.call_inplace_packed needs sinfo_args")
        what = f"R.call_inplace_packed of '{func.global_symbol}'"
        out_leaves = leaves(sinfo, "output")
        outs = self.inplace_outputs(e, args, out_leaves, what)
        returned = self.call_packed(func.global_symbol, args, sinfo, dps=False)
        got = val_leaves(returned)
        merged = [o if o is not None else r for o, r in zip(outs, got, strict=True)]
        return rebuild(sinfo, merged)

    def op_call_dps_packed(self, e: relax.Call, var: relax.Var | None) -> Val:
        func, args = e.args[0], e.args[1]
        if not isinstance(func, relax.ExternFunc):
            raise TVMLiteError(f"{self.prefix}R.call_dps_packed needs a function name")
        sinfo = e.sinfo_args[0] if e.sinfo_args else None
        return self.call_packed(func.global_symbol, val_leaves(self.value(args)), sinfo, dps=True)

    def op_call_pure_packed(self, e: relax.Call, var: relax.Var | None) -> Val:
        func = e.args[0]
        if not isinstance(func, relax.ExternFunc):
            raise TVMLiteError(f"{self.prefix}R.call_pure_packed needs a function name")
        args = [leaf for a in e.args[1:] for leaf in val_leaves(self.value(a))]
        sinfo = e.sinfo_args[0] if e.sinfo_args else None
        return self.call_packed(func.global_symbol, args, sinfo, dps=False)

    def op_assert_op(self, e: relax.Call, var: relax.Var | None) -> Val:
        """A scalar condition checked at run time; the message is the format string
        with its `{}` filled from integer scalars, as TVM's Python formatting does."""
        cond = self.value(e.args[0])
        fmt = e.args[1].value if isinstance(e.args[1], relax.StringImm) else ""
        values = [self.value(a) for a in e.args[2:]]
        if not isinstance(cond, PrimVal):
            raise TVMLiteError(f"{self.prefix}R.assert_op needs a scalar condition (T.bool)")
        pieces = fmt.split("{}")
        if any(not isinstance(v, PrimVal) or not v.dtype.startswith(("int", "uint")) for v in
               values) or len(pieces) != len(values) + 1:  # fmt: skip
            raise TVMLiteError(
                f"{self.prefix}R.assert_op: only integer scalars fill the format string, "
                "one per '{}'"
            )
        text = "%ld".join(literal(p) for p in pieces)
        args = [self.b.sext(v.value, ty.value_type("int64")) if v.value.type.width < 64 else v.value
                for v in values]  # fmt: skip
        ok = cond.value
        if ok.type.width != 1:
            ok = self.b.icmp_signed("!=", ok, ir.Constant(ok.type, 0))
        self.check(ok, abi.STATUS_RUNTIME, text, *args)
        return UNIT

    def op_shape_of(self, e: relax.Call, var: relax.Var | None) -> Val:
        """The dims of a tensor of known rank, as a shape value."""
        val = self.value(e.args[0])
        if not isinstance(val, TensorVal) or val.ndim < 0:
            raise TVMLiteError(f"{self.prefix}R.shape_of needs a tensor of known rank")
        if val.dims is not None:
            return ShapeVal(val.dims)
        return ShapeVal(tuple(abi.load_dim(self.b, val.ptr, k) for k in range(val.ndim)))

    def op_size(self, e: relax.Call, var: relax.Var | None) -> Val:
        """The element count of a tensor, as a 0-d int64 tensor."""
        shape = self.op_shape_of(e, var)
        assert isinstance(shape, ShapeVal)
        count: ir.Value = ty.constant("int64", 1)
        for dim in shape.dims:
            count = self.b.mul(count, dim)
        ptr = self.allocate("int64", [], "the result of R.size")
        self.b.store(count, abi.load_field(self.b, ptr, abi.DATA, abi.PTR))
        return TensorVal(ptr, "int64", 0, ())

    def op_null_value(self, e: relax.Call, var: relax.Var | None) -> Val:
        """The null object: nothing to hold (an R.Any value cannot leave the code)."""
        return UNIT

    def op_hint_on_device(self, e: relax.Call, var: relax.Var | None) -> Val:
        """A placement hint: the CPU is where the value already is."""
        device_type = dict(e.attrs)["device_type"]
        if device_type != abi.KDL_CPU:
            raise TVMLiteError(
                f"{self.prefix}R.hint_on_device to device type {device_type}: this build "
                "targets the CPU only"
            )
        return self.value(e.args[0])

    def op_identity(self, e: relax.Call, var: relax.Var | None) -> Val:
        """Marks that compute nothing (gradient checkpoints, stop_lift_params)."""
        return self.value(e.args[0])

    def op_tensor_to_shape(self, e: relax.Call, var: relax.Var | None) -> Val:
        """The values of a 1-d int64 tensor as a shape (TVM's VM builtin of the same
        name): how a kernel's result sizes a later allocation, after a
        `R.match_cast` binds the shape's vars (nonzero, dynamic_strided_slice)."""
        what = "the argument of R.tensor_to_shape"
        val = self.value(e.args[0])
        sinfo = e.args[0].struct_info if isinstance(e.args[0], relax.Var) else None
        shape = getattr(sinfo, "shape", None)
        length = getattr(shape[0], "value", None) if isinstance(shape, tuple) else None
        if not isinstance(val, TensorVal) or not isinstance(length, int):
            raise TVMLiteError(f"{self.prefix}{what} must be a 1-d tensor of known length")
        self.check_header(val.ptr, "int64", 1, what, abi.STATUS_RUNTIME)
        actual = abi.load_dim(self.b, val.ptr, 0)
        same = self.b.icmp_signed("==", actual, ty.constant("int64", length))
        self.check(same, abi.STATUS_RUNTIME, f"{what} has the wrong length")
        data = abi.data_pointer(self.b, val.ptr)
        dims = tuple(
            self.b.load(
                self.b.gep(data, [ty.constant("int64", k)], source_etype=abi.I64), typ=abi.I64
            )
            for k in range(length)
        )
        return ShapeVal(dims)

    # ------------------------------------------------------------ control flow

    def visit_seq(self, e: relax.SeqExpr, var: relax.Var | None) -> Val:
        for block in e.blocks:
            for bd in block.bindings:
                self.emit_binding(bd)
        return self.value(e.body)

    def condition(self, val: Val) -> ir.Value:
        if isinstance(val, PrimVal):
            if val.dtype == "bool":
                return val.value
            zero = ty.constant(val.dtype, 0)
            if val.dtype.startswith("float"):
                return self.b.fcmp_unordered("!=", val.value, zero)
            return self.b.icmp_unsigned("!=", val.value, zero)
        if isinstance(val, TensorVal):
            if val.dtype != "bool" or val.ndim != 0:
                self.check_header(val.ptr, "bool", 0, "the condition of R.If", abi.STATUS_RUNTIME)
            byte = self.b.load(abi.data_pointer(self.b, val.ptr), typ=abi.I8)
            return self.b.icmp_unsigned("!=", byte, ty.constant("int8", 0))
        raise TVMLiteError(f"{self.prefix}the condition of R.If must be a bool tensor or scalar")

    def visit_if(self, e: relax.If, var: relax.Var | None) -> Val:
        cond = self.condition(self.value(e.condition))
        then_block = self.fn.append_basic_block("if.then")
        else_block = self.fn.append_basic_block("if.else")
        merge = self.fn.append_basic_block("if.merge")
        self.b.cbranch(cond, then_block, else_block)
        ends: list[tuple[Val, ir.Block]] = []
        for block, branch in ((then_block, e.true_branch), (else_block, e.false_branch)):
            saved = dict(self.vars)
            self.b.position_at_end(block)
            val = self.value(branch)
            ends.append((val, self.b.block))
            self.b.branch(merge)
            self.vars = saved
        self.b.position_at_end(merge)
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
        raise TVMLiteError(f"{self.prefix}the branches of R.If give values of different kinds")

    def _phi(self, kind: ir.Type, x: ir.Value, bx: ir.Block, y: ir.Value, by: ir.Block) -> ir.Value:
        phi = self.b.phi(kind)
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
                f"{self.prefix}{what}: the value has {len(flat)} parts, the type {len(want)}"
            )
        out: list[Val] = []
        for leaf, v in zip(want, flat, strict=True):
            label = what if len(want) == 1 else f"{what}, part {leaf.label}"
            if isinstance(v, TensorVal) and isinstance(leaf.sinfo, relax.TensorStructInfo):
                out.append(self.check_tensor(v.ptr, leaf.sinfo, label, abi.STATUS_RUNTIME))
            elif isinstance(v, PrimVal) and isinstance(leaf.sinfo, relax.PrimStructInfo):
                self.bind_prim(v.value, leaf.sinfo, label, abi.STATUS_RUNTIME)
                out.append(v)
            elif isinstance(v, ShapeVal) and isinstance(leaf.sinfo, relax.ShapeStructInfo):
                values = leaf.sinfo.values or ()
                if values and len(values) != len(v.dims):
                    raise TVMLiteError(f"{self.prefix}{label}: shape rank differs")
                for k, d in enumerate(values):
                    self.bind_prim(
                        v.dims[k], relax.PrimStructInfo("int64", d), label, abi.STATUS_RUNTIME
                    )
                out.append(v)
            else:
                raise TVMLiteError(
                    f"{self.prefix}{label}: the value is not a {type(leaf.sinfo).__name__}"
                )
        return rebuild(sinfo, out)


PTR_TYPE = abi.PTR


def referenced_vars(node: Any) -> list[relax.Var]:
    """Every Relax var a node mentions, nested expressions included."""
    found: dict[relax.Var, None] = {}
    _walk(node, found)
    return list(found)


def _walk(node: Any, found: dict[relax.Var, None]) -> None:
    if isinstance(node, relax.Var):
        found.setdefault(node)
        return
    if isinstance(node, tuple):
        for item in node:
            _walk(item, found)
        return
    if isinstance(node, relax.Expr | relax.BindingBlock | relax.VarBinding | relax.MatchCast):
        if isinstance(node, relax.Constant | relax.Function):
            return
        for f in dataclasses.fields(node):
            if f.name not in ("span", "sinfo_args", "struct_info", "attrs"):
                _walk(getattr(node, f.name), found)

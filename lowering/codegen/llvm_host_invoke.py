"""Calls from host code to other graph functions and to packed functions
(through the module's callback table), both with the entry ABI of docs/abi.md.

What a callee returns is owned by the caller from then on (a slot each) and is
checked against the struct info the caller expects before anything uses it.
"""

from __future__ import annotations

from llvmlite import ir

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import relax
from tvmlite.lowering.codegen import llvm_host_abi as abi
from tvmlite.lowering.codegen import llvm_types as ty
from tvmlite.lowering.codegen.llvm_host_calls import NULL, PACKED_TABLE
from tvmlite.lowering.codegen.llvm_host_check import literal
from tvmlite.lowering.codegen.llvm_host_values import (
    UNIT,
    Val,
    rebuild,
    val_leaves,
)
from tvmlite.runtime.abi import Leaf, leaves


class HostInvoke:
    """Mixin of the host emitter (see `HostEmitter` for the attributes)."""

    b: ir.IRBuilder
    module: ir.Module

    def call_function(self, call: relax.Call, var: relax.Var, what: str) -> Val:
        name = call.op.name
        callee = self.f.ctx.functions.get(name)
        if callee is None:
            raise TVMLiteError(
                f"{self.f.prefix}call of '{name}', which is not a graph function here"
            )
        args = [leaf for a in call.args for leaf in val_leaves(self.value(a))]
        expected = sum(len(leaves(p.struct_info, p.name)) for p in callee.params)
        if len(args) != expected:
            raise TVMLiteError(
                f"{self.f.prefix}call of '{name}' passes {len(args)} values, it takes {expected}"
            )
        ret = self._result_leaves(var.struct_info, callee.ret_struct_info)
        outs = self._call_entry(self.f.ctx.entries[name], args, len(ret))
        return rebuild(
            self._result_sinfo(var.struct_info, callee.ret_struct_info),
            self.received(outs, ret, f"result of '{name}'"),
        )

    def call_packed(
        self, symbol: str, args: list[Val], sinfo: relax.StructInfo | None, dps: bool
    ) -> Val:
        index = ty.constant("int64", self.f.ctx.packed_index(symbol))
        entry = self.f.b.gep(self.f.module.globals[PACKED_TABLE], [index], source_etype=abi.PTR)
        fn = self.f.b.load(entry, typ=abi.FnPtr(abi.ENTRY_TYPE))
        self.checks.check(
            self.f.b.icmp_unsigned("!=", fn, NULL),
            abi.STATUS_PACKED,
            f"packed function '{literal(symbol)}' is not registered (tvmlite.register_func)",
        )
        ret: list[Leaf] = []
        result: Val = UNIT
        if dps:
            out_leaves = leaves(sinfo, "output") if sinfo is not None else []
            outs_v = [
                self.frame.allocate_sinfo(leaf.sinfo, f"{leaf.label} of '{symbol}'")
                for leaf in out_leaves
            ]
            args = [*args, *outs_v]
            result = rebuild(sinfo, list(outs_v)) if sinfo is not None else UNIT
        elif sinfo is not None and not isinstance(sinfo, relax.ObjectStructInfo):
            ret = leaves(sinfo, "result")
        outs = self._call_entry(fn, args, len(ret))
        if ret:
            assert sinfo is not None
            result = rebuild(sinfo, self.received(outs, ret, f"value returned by '{symbol}'"))
        return result

    def received(self, outs: ir.Value, sinfo: list[Leaf], what: str) -> list[Val]:
        """Take ownership of the blocks a callee returned and check them."""
        vals: list[Val] = []
        for k, leaf in enumerate(sinfo):
            block = self.f.b.load(
                self.f.b.gep(outs, [ty.constant("int64", k)], source_etype=abi.PTR), typ=abi.PTR
            )
            slot = self.frame.new_slot(block)
            label = f"{what} {leaf.label}" if len(sinfo) > 1 else what
            self.checks.check(
                self.f.b.icmp_unsigned("!=", block, NULL),
                abi.STATUS_RUNTIME,
                f"{literal(label)}: NULL",
            )
            ptr = abi.tensor_of(self.f.b, block)
            self.f.slot_of[id(ptr)] = slot
            vals.append(self.checks.check_value(ptr, leaf.sinfo, label, abi.STATUS_RUNTIME))
        return vals

    def _call_entry(self, fn: ir.Value, args: list[Val], num_outs: int) -> ir.Value:
        """Call `fn` with the entry ABI on `args` and room for `num_outs` results,
        propagate a failure, and return the array of (now owned) results."""
        outs = self.frame.pointer_array([NULL] * num_outs)
        status = self.f.b.call(
            fn,
            [
                self.frame.pointer_array([self.frame.as_dltensor(a) for a in args]),
                ty.constant("int32", len(args)),
                outs,
                ty.constant("int32", num_outs),
                self.f.err,
                self.f.err_len,
            ],
        )
        self.chunks.propagate(status)
        return outs

    def _result_leaves(self, mine: relax.StructInfo, theirs: relax.StructInfo) -> list[Leaf]:
        return leaves(self._result_sinfo(mine, theirs), "result")

    @staticmethod
    def _result_sinfo(mine: relax.StructInfo, theirs: relax.StructInfo) -> relax.StructInfo:
        """The binding's struct info (the caller's vars) when it has the callee's
        structure, else the callee's with shapes erased (its vars mean nothing here)."""
        try:
            if [type(x.sinfo) for x in leaves(mine, "r")] == [
                type(x.sinfo) for x in leaves(theirs, "r")
            ]:
                return mine
        except TVMLiteError:
            pass
        return _erase_shapes(theirs)


def _erase_shapes(sinfo: relax.StructInfo) -> relax.StructInfo:
    if isinstance(sinfo, relax.TupleStructInfo):
        return relax.TupleStructInfo(tuple(_erase_shapes(f) for f in sinfo.fields))
    if isinstance(sinfo, relax.TensorStructInfo):
        ndim = len(sinfo.shape) if isinstance(sinfo.shape, tuple) else sinfo.ndim
        return relax.TensorStructInfo(None, sinfo.dtype, ndim)
    if isinstance(sinfo, relax.PrimStructInfo):
        return relax.PrimStructInfo(sinfo.dtype)
    if isinstance(sinfo, relax.ShapeStructInfo):
        n = len(sinfo.values) if sinfo.values is not None else sinfo.ndim
        return relax.ShapeStructInfo(None, n)
    return sinfo

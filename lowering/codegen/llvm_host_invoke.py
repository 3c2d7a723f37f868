"""Calls in host code, dispatched on the callee: an `Op` by name (only the call
intrinsics have native code; any other operator means legalization did not
run; `R.call_tir` goes to the kernel calls, `llvm_host_calls.py`), a
`GlobalVar` to another graph function, an `ExternFunc` to the packed table.
Graph and packed functions are called with the entry ABI of docs/abi.md.

What a callee returns is owned by the caller from then on (a slot each) and is
checked against the struct info the caller expects before anything uses it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from llvmlite import ir

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import relax
from tvmlite.lowering.codegen import llvm_host_abi as abi
from tvmlite.lowering.codegen import llvm_types as ty
from tvmlite.lowering.codegen.llvm_host_calls import NULL, PACKED_TABLE
from tvmlite.lowering.codegen.llvm_host_check import literal
from tvmlite.lowering.codegen.llvm_host_values import (
    UNIT,
    PrimVal,
    ShapeVal,
    TensorVal,
    Val,
    rebuild,
    val_leaves,
)
from tvmlite.lowering.passes.legalize_ops import why_left
from tvmlite.runtime.abi import Leaf, leaves

if TYPE_CHECKING:
    from tvmlite.lowering.codegen.llvm_host_calls import KernelCalls
    from tvmlite.lowering.codegen.llvm_host_check import Checks
    from tvmlite.lowering.codegen.llvm_host_chunks import Chunks
    from tvmlite.lowering.codegen.llvm_host_frame import Frame
    from tvmlite.lowering.codegen.llvm_host_state import HostFunction


class Calls:
    """The calls of the function being emitted (`f`): `R.call_tir` through
    `kernels`, other functions with the entry ABI; Relax arguments evaluated by
    `value`, results owned in `frame` and checked by `checks`."""

    def __init__(
        self,
        f: HostFunction,
        chunks: Chunks,
        frame: Frame,
        checks: Checks,
        kernels: KernelCalls,
        value: Callable[[relax.Expr, relax.Var | None], Val],
    ) -> None:
        self.f = f
        self.chunks = chunks
        self.frame = frame
        self.checks = checks
        self.kernels = kernels
        self.value = value
        self._ops = self._op_table()

    def _op_table(self) -> dict[str, Callable[[relax.Call, relax.Var | None], Val]]:
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
            # the explicit memory of a module TVM lowered (StaticPlanBlockMemory, the
            # VM's builtins): each tensor gets a block of its own, which the memory plan
            # and the release after last use manage as every other
            "relax.builtin.alloc_tensor": self.op_alloc_tensor,
            "relax.memory.alloc_tensor": self.op_alloc_tensor,
            "relax.vm.alloc_tensor": self.op_alloc_tensor,
            "relax.memory.alloc_storage": self.op_null_value,
            "relax.vm.alloc_storage": self.op_null_value,
            "relax.memory.kill_storage": self.op_null_value,
            "relax.memory.kill_tensor": self.op_null_value,
            "relax.vm.kill_object": self.op_null_value,
        }

    def visit_call(self, e: relax.Call, var: relax.Var | None) -> Val:
        op = e.op
        what = f"'{var.name}'" if var is not None else "a call"
        if isinstance(op, relax.Op):
            handler = self._ops.get(op.name)
            if handler is None:
                short = op.name.removeprefix("relax.")
                where = f"{e.span.location()}: " if e.span is not None else ""
                raise TVMLiteError(
                    f"{where}{self.f.prefix}operator R.{short} (bound to {what}) cannot be "
                    f"compiled: it has no native lowering, and {why_left(e)}"
                )
            return handler(e, var)
        if isinstance(op, relax.GlobalVar):
            if var is None:
                raise TVMLiteError(f"{self.f.prefix}a call of '{op.name}' must be bound to a var")
            return self.call_function(e, var, what)
        if isinstance(op, relax.ExternFunc):
            args = [leaf for a in e.args for leaf in val_leaves(self.value(a))]
            sinfo = e.sinfo_args[0] if e.sinfo_args else None
            if sinfo is None and var is not None:  # R.call_packed without ty_args
                sinfo = var.struct_info
            return self.call_packed(op.global_symbol, args, sinfo, dps=False)
        raise TVMLiteError(f"{self.f.prefix}cannot call a {type(op).__name__} in compiled code")

    def op_call_tir(self, e: relax.Call, var: relax.Var | None) -> Val:
        return self.kernels.call_tir(e, "R.call_tir", var)

    def op_call_tir_inplace(self, e: relax.Call, var: relax.Var | None) -> Val:
        return self.kernels.call_tir(e, "R.call_tir_inplace", var)

    def op_call_inplace_packed(self, e: relax.Call, var: relax.Var | None) -> Val:
        """The packed function writes the in-place arguments where they are and
        returns every output, as in TVM; the in-place ones are the arguments (what
        it returned for them, a copy when it is a Python function, is dropped)."""
        func = e.args[0]
        if not isinstance(func, relax.ExternFunc):
            raise TVMLiteError(f"{self.f.prefix}R.call_inplace_packed needs a function name")
        args = [leaf for a in e.args[1:] for leaf in val_leaves(self.value(a))]
        sinfo = e.sinfo_args[0] if e.sinfo_args else None
        if sinfo is None:
            raise TVMLiteError(f"{self.f.prefix}R.call_inplace_packed needs sinfo_args")
        what = f"R.call_inplace_packed of '{func.global_symbol}'"
        out_leaves = leaves(sinfo, "output")
        outs = self.kernels.inplace_outputs(e, args, out_leaves, what)
        returned = self.call_packed(func.global_symbol, args, sinfo, dps=False)
        got = val_leaves(returned)
        merged = [o if o is not None else r for o, r in zip(outs, got, strict=True)]
        return rebuild(sinfo, merged)

    def op_call_dps_packed(self, e: relax.Call, var: relax.Var | None) -> Val:
        func, args = e.args[0], e.args[1]
        if not isinstance(func, relax.ExternFunc):
            raise TVMLiteError(f"{self.f.prefix}R.call_dps_packed needs a function name")
        sinfo = e.sinfo_args[0] if e.sinfo_args else None
        return self.call_packed(func.global_symbol, val_leaves(self.value(args)), sinfo, dps=True)

    def op_call_pure_packed(self, e: relax.Call, var: relax.Var | None) -> Val:
        func = e.args[0]
        if not isinstance(func, relax.ExternFunc):
            raise TVMLiteError(f"{self.f.prefix}R.call_pure_packed needs a function name")
        args = [leaf for a in e.args[1:] for leaf in val_leaves(self.value(a))]
        sinfo = e.sinfo_args[0] if e.sinfo_args else None
        return self.call_packed(func.global_symbol, args, sinfo, dps=False)

    def op_assert_op(self, e: relax.Call, var: relax.Var | None) -> Val:
        """A condition (a scalar or a 0-d tensor) checked at run time; the message is
        the format string with its `{}` filled from strings and integer scalars, as
        TVM's Python formatting does."""
        cond = self.value(e.args[0])
        fmt = e.args[1].value if isinstance(e.args[1], relax.StringImm) else ""
        pieces = fmt.split("{}")
        if len(pieces) != len(e.args) - 1:
            raise TVMLiteError(f"{self.f.prefix}R.assert_op: one value per '{{}}' of the format")
        b = self.f.b
        text, args = literal(pieces[0]), []
        for arg, piece in zip(e.args[2:], pieces[1:], strict=True):
            if isinstance(arg, relax.StringImm):  # known now: part of the message
                text += literal(arg.value) + literal(piece)
                continue
            v = self.value(arg)
            if not isinstance(v, PrimVal) or not v.dtype.startswith(("int", "uint")):
                raise TVMLiteError(
                    f"{self.f.prefix}R.assert_op: only strings and integer scalars fill the "
                    "format string"
                )
            wide = v.value.type.width < 64
            args.append(b.sext(v.value, ty.value_type("int64")) if wide else v.value)
            text += "%ld" + literal(piece)
        ok = self._condition(cond)
        if ok.type.width != 1:
            ok = b.icmp_signed("!=", ok, ir.Constant(ok.type, 0))
        self.checks.check(ok, abi.STATUS_RUNTIME, text, *args)
        return UNIT

    def _condition(self, cond: Val) -> ir.Value:
        """A scalar condition's value; a 0-d tensor's element (TVM takes either)."""
        if isinstance(cond, PrimVal):
            return cond.value
        if isinstance(cond, TensorVal) and cond.ndim == 0 and cond.dtype != "void":
            what = "the condition of R.assert_op"
            self.checks.check_header(cond.ptr, cond.dtype, 0, what, abi.STATUS_RUNTIME)
            data = abi.data_pointer(self.f.b, cond.ptr)
            element = self.f.b.bitcast(data, ty.memory_type(cond.dtype).as_pointer())
            return self.f.b.load(element, typ=ty.memory_type(cond.dtype))
        raise TVMLiteError(
            f"{self.f.prefix}R.assert_op needs a scalar condition (T.bool) or a 0-d tensor"
        )

    def op_shape_of(self, e: relax.Call, var: relax.Var | None) -> Val:
        """The dims of a tensor of known rank, as a shape value."""
        val = self.value(e.args[0])
        if not isinstance(val, TensorVal) or val.ndim < 0:
            raise TVMLiteError(f"{self.f.prefix}R.shape_of needs a tensor of known rank")
        if val.dims is not None:
            return ShapeVal(val.dims)
        return ShapeVal(tuple(abi.load_dim(self.f.b, val.ptr, k) for k in range(val.ndim)))

    def op_size(self, e: relax.Call, var: relax.Var | None) -> Val:
        """The element count of a tensor, as a 0-d int64 tensor."""
        shape = self.op_shape_of(e, var)
        assert isinstance(shape, ShapeVal)
        count: ir.Value = ty.constant("int64", 1)
        for dim in shape.dims:
            count = self.f.b.mul(count, dim)
        ptr = self.frame.allocate("int64", [], "the result of R.size")
        self.f.b.store(count, abi.load_field(self.f.b, ptr, abi.DATA, abi.PTR))
        return TensorVal(ptr, "int64", 0, ())

    def op_null_value(self, e: relax.Call, var: relax.Var | None) -> Val:
        """The null object: nothing to hold (an R.Any value cannot leave the code)."""
        return UNIT

    def op_alloc_tensor(self, e: relax.Call, var: relax.Var | None) -> Val:
        """A tensor of the bound var's type, uninitialized as in TVM (a storage object
        it would be placed in is none here: tensors are placed by the memory plan)."""
        name = e.op.name.replace("relax.", "R.")  # type: ignore[union-attr]
        if var is None:
            raise TVMLiteError(f"{self.f.prefix}{name} must be bound to a var")
        return self.frame.allocate_sinfo(var.struct_info, f"{name} bound to '{var.name}'")

    def op_hint_on_device(self, e: relax.Call, var: relax.Var | None) -> Val:
        """A placement hint: the CPU is where the value already is."""
        device_type = dict(e.attrs)["device_type"]
        if device_type != abi.KDL_CPU:
            raise TVMLiteError(
                f"{self.f.prefix}R.hint_on_device to device type {device_type}: this build "
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
            raise TVMLiteError(f"{self.f.prefix}{what} must be a 1-d tensor of known length")
        self.checks.check_header(val.ptr, "int64", 1, what, abi.STATUS_RUNTIME)
        actual = abi.load_dim(self.f.b, val.ptr, 0)
        same = self.f.b.icmp_signed("==", actual, ty.constant("int64", length))
        self.checks.check(same, abi.STATUS_RUNTIME, f"{what} has the wrong length")
        data = abi.data_pointer(self.f.b, val.ptr)
        dims = tuple(
            self.f.b.load(
                self.f.b.gep(data, [ty.constant("int64", k)], source_etype=abi.I64), typ=abi.I64
            )
            for k in range(length)
        )
        return ShapeVal(dims)

    # ------------------------------------------------------------ functions

    def call_function(self, call: relax.Call, var: relax.Var, what: str) -> Val:
        name = call.op.name
        callee = self.f.ctx.functions.get(name)
        kernel = self.f.ctx.kernels.get(name)
        if callee is None and kernel is not None:
            # a prim function called as TVM's lowered Relax calls one: every argument
            # given (the outputs too, allocated before), nothing returned
            args = [leaf for a in call.args for leaf in val_leaves(self.value(a))]
            self.kernels.run_kernel(kernel, args)
            return UNIT
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
            f"packed function '{literal(symbol)}' is not registered (from Python: "
            "tvmlite.register_func; from C: the library's PREFIX_bind_packed)",
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
        outs = self._call_entry(fn, args, len(ret), symbol)
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
            slot = self.frame.hold(block)
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

    def _call_entry(
        self, fn: ir.Value, args: list[Val], num_outs: int, packed: str | None = None
    ) -> ir.Value:
        """Call `fn` with the entry ABI on `args` and room for `num_outs` results,
        propagate a failure, and return the array of (now owned) results. A call
        of `packed` function goes through its timer in a profiled build."""
        outs = self.frame.pointer_array([NULL] * num_outs)
        entry_args = [
            self.frame.pointer_array([self.frame.as_dltensor(a) for a in args]),
            ty.constant("int32", len(args)),
            outs,
            ty.constant("int32", num_outs),
            self.f.err,
            self.f.err_len,
        ]
        profiler = self.f.ctx.profiler
        if packed is not None and profiler is not None:
            status = profiler.call_packed(self.f.b, packed, fn, entry_args)
        else:
            status = self.f.b.call(fn, entry_args)
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

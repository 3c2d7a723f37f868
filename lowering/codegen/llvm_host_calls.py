"""Kernel calls made by host code (`R.call_tir`), and the storage every call
needs: owned tensor slots, stack DLTensors for prim and shape values.

A kernel gets raw data pointers, so its buffers are checked against the
tensors at the call site (ndim and dtype when the code is generated, shapes at
run time; LLVM folds the checks whose dims are constants). That keeps a badly
typed `call_tir` from writing out of bounds whatever its struct info says.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import relax, tir
from tvmlite.dsl.call_tir import KERNEL_CALLS, CallTIR
from tvmlite.lowering.codegen import llvm_host_abi as abi
from tvmlite.lowering.codegen import llvm_host_frame as frames
from tvmlite.lowering.codegen import llvm_host_helpers as helpers
from tvmlite.lowering.codegen import llvm_types as ty
from tvmlite.lowering.codegen.llvm_host_check import literal
from tvmlite.lowering.codegen.llvm_host_values import (
    PrimVal,
    ShapeVal,
    TensorVal,
    Val,
    known_dims,
    rebuild,
    shape_text,
    tuple_text,
    val_leaves,
)
from tvmlite.lowering.codegen.memory_plan import ARENA_SLOT, MemoryPlan
from tvmlite.runtime.abi import (
    MESSAGE_SIZE,
    PACKED_TABLE,
    KernelSignature,
    Leaf,
    leaves,
)

I32, I64, PTR = abi.I32, abi.I64, abi.PTR
NULL = ir.Constant(PTR, None)


@dataclass(frozen=True)
class Kernel:
    sig: KernelSignature
    fn: ir.Function
    errors: ir.GlobalVariable  # [n + 1 x ptr]: assert messages by status
    can_fail: bool  # returns a status other than 0 (an assert, an allocation)


class HostCalls:
    """Mixin of the host emitter (see `HostEmitter` for the attributes)."""

    b: ir.IRBuilder
    module: ir.Module
    vars: dict[tir.Var, ir.Value]
    slot_of: dict[int, int]
    use_steps: bool  # else optimized: the frame helpers are inlined
    plan: MemoryPlan

    # ------------------------------------------------------------ storage

    def stack_slot(self, kind: ir.Type) -> ir.Value:
        """Stack memory made once in the entry block, addressed as a plain `ptr`."""
        slot = self.allocas.alloca(kind)
        slot.type = PTR
        return slot

    def new_slot(self, value: ir.Value) -> int:
        """An owned tensor: released at exit unless returned or freed earlier."""
        index = self.slots
        self.slots += 1
        self.b.store(value, self.slot(index))
        return index

    def int64_array(self, values: list[ir.Value]) -> ir.Value:
        """An array of the values: a shared constant when all are known, else
        stack memory written here."""
        if all(isinstance(v, ir.Constant) for v in values):
            return abi.int64_constant(self.module, [int(v.constant) for v in values])
        array = self.stack_slot(ir.ArrayType(I64, max(1, len(values))))
        for k, v in enumerate(values):
            self.b.store(v, self.b.gep(array, [ty.constant("int64", k)], source_etype=I64))
        return array

    def allocate(self, dtype: str, dims: list[ir.Value], what: str) -> ir.Value:
        """The DLTensor of a fresh block in a new slot (leaves on failure)."""
        index = self.slots
        self.slots += 1
        tensor = self.b.call(
            frames.helper(self.module, frames.ALLOC_SLOT, not self.use_steps),
            [
                self.frame,
                ty.constant("int64", index),
                ty.constant("int32", len(dims)),
                self.int64_array(dims),
                ty.constant("int32", abi.packed_dtype(dtype)),
                abi.cstring(self.module, f"{self.prefix}cannot allocate {what}"),
                self.err,
                self.err_len,
            ],
        )
        oom = ty.constant("int32", abi.STATUS_OOM)
        self.leave_if(self.b.icmp_unsigned("==", tensor, NULL), oom)
        self.slot_of[id(tensor)] = index
        return tensor

    def allocate_sinfo(self, sinfo: relax.StructInfo, what: str) -> TensorVal:
        if not isinstance(sinfo, relax.TensorStructInfo) or not isinstance(sinfo.shape, tuple):
            raise TVMLiteError(f"{self.prefix}{what} needs a tensor type with a known shape")
        if sinfo.dtype == "void":
            raise TVMLiteError(f"{self.prefix}{what} needs a known dtype")
        dims = [self.dim_value(d, what) for d in sinfo.shape]
        ptr = self.allocate(sinfo.dtype, dims, what)
        data = abi.load_field(self.b, ptr, abi.DATA, PTR)  # a fresh block has no byte offset
        return TensorVal(ptr, sinfo.dtype, len(dims), tuple(dims), data)

    def as_dltensor(self, val: Val) -> ir.Value:
        """A DLTensor* for any leaf value (prims and shapes get one on the stack)."""
        if isinstance(val, TensorVal):
            return val.ptr
        if isinstance(val, PrimVal):
            store = self.stack_slot(ty.memory_type(val.dtype))
            value = val.value
            if val.dtype == "bool":
                value = self.b.zext(value, abi.I8)
            self.b.store(value, store)
            return self.stack_tensor(val.dtype, [], store)
        assert isinstance(val, ShapeVal)
        data = self.int64_array(list(val.dims))
        return self.stack_tensor("int64", [ty.constant("int64", len(val.dims))], data)

    def stack_tensor(self, dtype: str, dims: list[ir.Value], data: ir.Value) -> ir.Value:
        t = self.stack_slot(abi.DLTENSOR)
        b = self.b
        b.store(data, abi.field_ptr(b, t, abi.DATA))
        device = ir.Constant(
            abi.DEVICE, [ty.constant("int32", abi.KDL_CPU), ty.constant("int32", 0)]
        )
        b.store(device, abi.field_ptr(b, t, abi.DEV))
        b.store(ty.constant("int32", len(dims)), abi.field_ptr(b, t, abi.NDIM))
        b.store(ty.constant("int32", abi.packed_dtype(dtype)), abi.field_ptr(b, t, abi.DT))
        b.store(self.int64_array(dims) if dims else NULL, abi.field_ptr(b, t, abi.SHAPE))
        b.store(NULL, abi.field_ptr(b, t, abi.STRIDES))
        b.store(ty.constant("int64", 0), abi.field_ptr(b, t, abi.OFFSET))
        return t

    def pointer_array(self, ptrs: list[ir.Value]) -> ir.Value:
        array = self.stack_slot(ir.ArrayType(PTR, max(1, len(ptrs))))
        for k, p in enumerate(ptrs):
            self.b.store(p, self.b.gep(array, [ty.constant("int64", k)], source_etype=PTR))
        return array

    def received(self, outs: ir.Value, sinfo: list[Leaf], what: str) -> list[Val]:
        """Take ownership of the blocks a callee returned and check them."""
        vals: list[Val] = []
        for k, leaf in enumerate(sinfo):
            block = self.b.load(
                self.b.gep(outs, [ty.constant("int64", k)], source_etype=PTR), typ=PTR
            )
            slot = self.new_slot(block)
            label = f"{what} {leaf.label}" if len(sinfo) > 1 else what
            self.check(
                self.b.icmp_unsigned("!=", block, NULL),
                abi.STATUS_RUNTIME,
                f"{literal(label)}: NULL",
            )
            ptr = abi.tensor_of(self.b, block)
            self.slot_of[id(ptr)] = slot
            vals.append(self.check_value(ptr, leaf.sinfo, label, abi.STATUS_RUNTIME))
        return vals

    # ------------------------------------------------------------ call_tir

    def place(self, sinfo: relax.StructInfo, var: relax.Var, k: int) -> TensorVal:
        """Output leaf `k` of `var`, which the memory plan put in the arena (slot
        ARENA_SLOT): its header there, in a new slot (see `memory_plan.py`)."""
        dims = known_dims(sinfo)
        assert isinstance(sinfo, relax.TensorStructInfo) and dims is not None
        arena = abi.tensor_of(self.b, self.b.load(self.slot(ARENA_SLOT), typ=PTR))
        index = self.slots
        self.slots += 1
        tensor = self.b.call(
            frames.helper(self.module, frames.PLACE_SLOT, not self.use_steps),
            [
                self.frame,
                ty.constant("int64", index),
                ty.constant("int32", len(dims)),
                abi.int64_constant(self.module, dims),
                ty.constant("int32", abi.packed_dtype(sinfo.dtype)),
                abi.load_field(self.b, arena, abi.DATA, PTR),
                ty.constant("int64", self.plan.offsets[var][k]),
                ty.constant("int64", self.plan.headers[var][k]),
            ],
        )
        self.slot_of[id(tensor)] = index
        consts = tuple(ty.constant("int64", d) for d in dims)
        data = abi.load_field(self.b, tensor, abi.DATA, PTR)
        return TensorVal(tensor, sinfo.dtype, len(dims), consts, data)

    def call_tir(self, call: relax.Call, what: str, var: relax.Var | None) -> Val:
        """`R.call_tir`, and `R.call_tir_inplace`: the outputs `inplace_indices`
        names are those arguments, written by the kernel where they are (the
        kernel's parameters are the arguments, then the other outputs); the memory
        plan places the other outputs of an `R.call_tir` bound to `var`."""
        view = CallTIR.of(call, KERNEL_CALLS)
        if view is None:
            raise TVMLiteError(
                f"{self.prefix}{what} needs a module function, a tuple of arguments "
                "and its output struct info"
            )
        name = view.callee.name
        kernel = self.ctx.kernels.get(name)
        if kernel is None:
            raise TVMLiteError(f"{self.prefix}{what} target {name} is not a prim function")
        ins = [leaf for arg in view.args for leaf in val_leaves(self.value(arg))]
        out_leaves = leaves(view.out_sinfo, "output")
        outs = self.inplace_outputs(call, ins, out_leaves, f"{what} of '{name}'")
        offsets = self.plan.offsets.get(var, ()) if var is not None else ()
        fresh: list[Val] = []
        for k, leaf in enumerate(out_leaves):
            if outs[k] is None:
                if offsets and offsets[k] is not None:
                    outs[k] = self.place(leaf.sinfo, var, k)  # type: ignore[arg-type]
                else:
                    outs[k] = self.allocate_sinfo(leaf.sinfo, f"{leaf.label} of {name}")
                fresh.append(outs[k])
        extra: list[Val] = []
        if view.tir_vars is not None:
            tir_vars = self.value(view.tir_vars)
            dims = tir_vars.dims if isinstance(tir_vars, ShapeVal) else ()
            extra = [PrimVal(d, "int64") for d in dims]
        self.run_kernel(kernel, [*ins, *fresh, *extra])
        return rebuild(view.out_sinfo, list(outs))

    def inplace_outputs(
        self, call: relax.Call, ins: list[Val], out_leaves: list[Leaf], what: str
    ) -> list[Val | None]:
        """Per output, the argument it is (`inplace_indices`), checked against the
        output's struct info, or None (a fresh output). Each in-place argument must
        be a tensor that no other argument shares memory with (checked at run time:
        the callee would read what it already overwrote), and not a constant."""
        indices = dict(call.attrs).get("inplace_indices")
        if indices is None:
            return [None] * len(out_leaves)
        indices = [int(i) for i in indices]
        if len(indices) != len(out_leaves):
            raise TVMLiteError(
                f"{self.prefix}{what}: {len(indices)} inplace_indices for {len(out_leaves)} outputs"
            )
        named = [i for i in indices if i != -1]
        if len(set(named)) != len(named) or any(not 0 <= i < len(ins) for i in named):
            raise TVMLiteError(
                f"{self.prefix}{what}: inplace_indices {indices} must be distinct argument "
                f"indices (0 to {len(ins) - 1}) or -1"
            )
        outs: list[Val | None] = []
        for i, leaf in zip(indices, out_leaves, strict=True):
            if i == -1:
                outs.append(None)
                continue
            arg = ins[i]
            constant = isinstance(arg, TensorVal) and isinstance(arg.ptr, ir.GlobalVariable)
            if not isinstance(arg, TensorVal) or constant:  # module data: nothing may write it
                kind = "a constant" if constant else "not a tensor"
                raise TVMLiteError(f"{self.prefix}{what}: in-place argument {i} is {kind}")
            label = f"{what}: in-place argument {i}"
            data = abi.data_pointer(self.b, arg.ptr)
            for j, other in enumerate(ins):
                if j != i and isinstance(other, TensorVal):
                    apart = self.b.icmp_unsigned("!=", abi.data_pointer(self.b, other.ptr), data)
                    self.check(
                        apart,
                        abi.STATUS_RUNTIME,
                        f"{literal(label)} shares its memory with argument {j}",
                    )
            outs.append(self.check_value(arg.ptr, leaf.sinfo, label, abi.STATUS_RUNTIME))
        return outs

    def run_kernel(self, kernel: Kernel, actuals: list[Val]) -> None:
        sig = kernel.sig
        where = f"R.call_tir of '{sig.name}'"
        if len(actuals) != len(sig.params):
            raise TVMLiteError(
                f"{self.prefix}{where}: the kernel takes {len(sig.params)} arguments "
                f"({', '.join(p.name for p in sig.params)}), the call passes {len(actuals)}"
            )
        outer = self.vars
        self.vars = env = {}
        try:
            args = self._kernel_args(kernel, actuals, env, where)
        finally:
            self.vars = outer
        reported = None
        if sig.reports:  # the kernel writes the message of an assert with values here
            reported = self.stack_slot(ir.ArrayType(abi.I8, MESSAGE_SIZE))
            self.b.store(ir.Constant(abi.I8, 0), reported)
            args += [reported, ty.constant("int64", MESSAGE_SIZE)]
        status = self.b.call(kernel.fn, args)
        if not kernel.can_fail:
            return
        count = ty.constant("int32", len(sig.errors))
        where = abi.cstring(self.module, f"{self.prefix}R.call_tir of '{sig.name}'")
        message = NULL if reported is None else reported
        result = self.b.call(
            self.module.globals[helpers.KERNEL_STATUS],
            [status, kernel.errors, count, where, message, self.err, self.err_len],
        )
        self.propagate(result)

    def _kernel_args(
        self, kernel: Kernel, actuals: list[Val], env: dict, where: str
    ) -> list[ir.Value]:
        sig = kernel.sig
        args: list[ir.Value] = []
        for p, a in zip(sig.params, actuals, strict=True):
            if p.is_pointer:
                if not isinstance(a, TensorVal):
                    raise TVMLiteError(f"{self.prefix}{where}: '{p.name}' needs a tensor")
                continue
            if not isinstance(a, PrimVal):
                raise TVMLiteError(f"{self.prefix}{where}: '{p.name}' needs a {p.var.dtype} scalar")
            env[p.var] = self.cast(a.value, a.dtype, p.var.dtype)
        for p, a in zip(sig.params, actuals, strict=True):
            if p.buffer is not None and isinstance(a, TensorVal):
                self._match_buffer(p.buffer, a, env, f"{where}: buffer '{p.name}'")
        for p, a in zip(sig.params, actuals, strict=True):
            if p.is_pointer:
                assert isinstance(a, TensorVal)
                args.append(a.data if a.data is not None else abi.data_pointer(self.b, a.ptr))
            elif p.var.dtype == "float16":
                args.append(self.b.fpext(env[p.var], ty.abi_type("float16")))
            else:
                args.append(
                    self.b.zext(env[p.var], abi.I8) if p.var.dtype == "bool" else env[p.var]
                )
        for var in sig.sym_vars:
            if var not in env:
                raise TVMLiteError(f"{self.prefix}{where}: cannot find the value of '{var.name}'")
            args.append(self.cast(env[var], var.dtype, "int64"))
        return args

    def _match_buffer(self, buf: tir.Buffer, t: TensorVal, env: dict, what: str) -> None:
        """Bind the kernel's vars from the tensor and check the rest; dims known at
        compile time are compared here, the others at run time."""
        b = self.b
        ndim = len(buf.shape)
        if t.ndim >= 0 and t.ndim != ndim:
            raise TVMLiteError(f"{self.prefix}{what} has {ndim} dimensions, the tensor {t.ndim}")
        if t.dtype != "void" and t.dtype != buf.dtype:
            raise TVMLiteError(f"{self.prefix}{what} has dtype {buf.dtype}, the tensor {t.dtype}")
        if t.ndim < 0 or t.dtype == "void":
            self.check_header(t.ptr, buf.dtype, ndim, what, abi.STATUS_RUNTIME)
        known = t.dims is not None and len(t.dims) == ndim
        got = list(t.dims) if known else [abi.load_dim(b, t.ptr, k) for k in range(ndim)]
        for dim, value in zip(buf.shape, got, strict=True):
            if isinstance(dim, tir.Var) and dim not in env:
                env[dim] = self.cast(value, "int64", dim.dtype)
        if buf.strides:
            self._match_strides(buf, got, env, what)
        offset = buf.elem_offset
        if isinstance(offset, tir.Var) and offset not in env:
            env[offset] = ty.constant(offset.dtype, 0)
        elif offset is not None and not _is_zero(offset):
            raise TVMLiteError(f"{self.prefix}{what} needs a nonzero element offset")
        want: list[ir.Value] = []
        runtime = False
        for dim, value in zip(buf.shape, got, strict=True):
            expect = self.cast(self.expr(dim), dim.dtype, "int64")
            if expect is value:
                want.append(ty.constant("int64", -1))
            elif isinstance(expect, ir.Constant) and isinstance(value, ir.Constant):
                if int(expect.constant) != int(value.constant):
                    shape = tuple_text(
                        [str(int(v.constant)) if isinstance(v, ir.Constant) else "?" for v in got]
                    )
                    raise TVMLiteError(
                        f"{self.prefix}{what} expects shape "
                        f"{tuple_text([shape_text(d) for d in buf.shape])}, the tensor has {shape}"
                    )
                want.append(ty.constant("int64", -1))
            else:
                want.append(expect)
                runtime = True
        if runtime:
            text = abi.cstring(self.module, tuple_text([shape_text(d) for d in buf.shape]))
            result = b.call(
                self.module.globals[helpers.CHECK_SHAPE],
                [
                    t.ptr,
                    ty.constant("int32", ndim),
                    self.int64_array(want),
                    text,
                    ty.constant("int32", abi.STATUS_RUNTIME),
                    abi.cstring(self.module, self.prefix + what),
                    self.err,
                    self.err_len,
                ],
            )
            self.propagate(result)

    def _match_strides(self, buf: tir.Buffer, got: list[ir.Value], env: dict, what: str) -> None:
        """Buffers that declare strides see the compact ones of the tensor."""
        b = self.b
        ndim = len(got)
        strides = [ty.constant("int64", 1)] * ndim
        for k in range(ndim - 2, -1, -1):
            strides[k] = b.mul(strides[k + 1], got[k + 1])
        ok: ir.Value = ir.Constant(ty.I1, 1)
        for k, (stride, value) in enumerate(zip(buf.strides, strides, strict=False)):
            if isinstance(stride, tir.Var) and stride not in env:
                env[stride] = self.cast(value, "int64", stride.dtype)
                continue
            same = b.icmp_signed("==", self.cast(self.expr(stride), stride.dtype, "int64"), value)
            ok = b.and_(ok, b.or_(same, b.icmp_signed("==", got[k], ty.constant("int64", 1))))
        if not isinstance(ok, ir.Constant):
            self.check(
                ok,
                abi.STATUS_RUNTIME,
                f"{literal(what)}: the tensor's strides do not fit the buffer",
            )


def _is_zero(e: tir.PrimExpr) -> bool:
    return isinstance(e, tir.IntImm) and e.value == 0


__all__ = ["NULL", "PACKED_TABLE", "HostCalls", "Kernel"]

"""Kernel calls made by host code as code (`R.call_tir`, `R.call_tir_inplace`),
where they are not steps (`llvm_host_steps.py`): symbolic shapes, values only
known at run time.

A kernel gets raw data pointers, so its buffers are checked against the
tensors at the call site (ndim and dtype when the code is generated, shapes at
run time; LLVM folds the checks whose dims are constants). That keeps a badly
typed `call_tir` from writing out of bounds whatever its struct info says.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from llvmlite import ir

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import relax, tir
from tvmlite.dsl.call_tir import KERNEL_CALLS, CallTIR
from tvmlite.lowering.codegen import llvm_host_abi as abi
from tvmlite.lowering.codegen import llvm_host_helpers as helpers
from tvmlite.lowering.codegen import llvm_types as ty
from tvmlite.lowering.codegen.llvm_host_check import literal
from tvmlite.lowering.codegen.llvm_host_values import (
    PrimVal,
    ShapeVal,
    TensorVal,
    Val,
    rebuild,
    shape_text,
    tuple_text,
    val_leaves,
)
from tvmlite.runtime.abi import (
    MESSAGE_SIZE,
    PACKED_TABLE,
    KernelSignature,
    Leaf,
    leaves,
)

if TYPE_CHECKING:
    from tvmlite.lowering.codegen.llvm_host_check import Checks
    from tvmlite.lowering.codegen.llvm_host_chunks import Chunks
    from tvmlite.lowering.codegen.llvm_host_frame import Frame
    from tvmlite.lowering.codegen.llvm_host_state import HostFunction

I32, I64, PTR = abi.I32, abi.I64, abi.PTR
NULL = ir.Constant(PTR, None)


@dataclass(frozen=True)
class Kernel:
    sig: KernelSignature
    fn: ir.Function
    errors: ir.GlobalVariable  # [n + 1 x ptr]: assert messages by status
    can_fail: bool  # returns a status other than 0 (an assert, an allocation)


class KernelCalls:
    """Kernel calls of the function being emitted (`f`): outputs in `frame`, the
    kernel's buffers matched against its arguments (`checks` at run time), Relax
    arguments evaluated by `value`."""

    def __init__(
        self,
        f: HostFunction,
        chunks: Chunks,
        frame: Frame,
        checks: Checks,
        value: Callable[[relax.Expr], Val],
    ) -> None:
        self.f = f
        self.chunks = chunks
        self.frame = frame
        self.checks = checks
        self.value = value

    def call_tir(self, call: relax.Call, what: str, var: relax.Var | None) -> Val:
        """`R.call_tir`, and `R.call_tir_inplace`: the outputs `inplace_indices`
        names are those arguments, written by the kernel where they are (the
        kernel's parameters are the arguments, then the other outputs); the memory
        plan places the other outputs of an `R.call_tir` bound to `var`."""
        view = CallTIR.of(call, KERNEL_CALLS)
        if view is None:
            raise TVMLiteError(
                f"{self.f.prefix}{what} needs a module function, a tuple of arguments "
                "and its output struct info"
            )
        name = view.callee.name
        kernel = self.f.ctx.kernels.get(name)
        if kernel is None:
            raise TVMLiteError(f"{self.f.prefix}{what} target {name} is not a prim function")
        ins = [leaf for arg in view.args for leaf in val_leaves(self.value(arg))]
        out_leaves = leaves(view.out_sinfo, "output")
        outs = self.inplace_outputs(call, ins, out_leaves, f"{what} of '{name}'")
        offsets = self.f.plan.offsets.get(var, ()) if var is not None else ()
        fresh: list[Val] = []
        for k, leaf in enumerate(out_leaves):
            if outs[k] is None:
                if offsets and offsets[k] is not None:
                    outs[k] = self.frame.place(leaf.sinfo, var, k)  # type: ignore[arg-type]
                else:
                    outs[k] = self.frame.allocate_sinfo(leaf.sinfo, f"{leaf.label} of {name}")
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
                f"{self.f.prefix}{what}: {len(indices)} inplace_indices for "
                f"{len(out_leaves)} outputs"
            )
        named = [i for i in indices if i != -1]
        if len(set(named)) != len(named) or any(not 0 <= i < len(ins) for i in named):
            raise TVMLiteError(
                f"{self.f.prefix}{what}: inplace_indices {indices} must be distinct argument "
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
                raise TVMLiteError(f"{self.f.prefix}{what}: in-place argument {i} is {kind}")
            label = f"{what}: in-place argument {i}"
            data = abi.data_pointer(self.f.b, arg.ptr)
            for j, other in enumerate(ins):
                if j != i and isinstance(other, TensorVal):
                    apart = self.f.b.icmp_unsigned(
                        "!=", abi.data_pointer(self.f.b, other.ptr), data
                    )
                    self.checks.check(
                        apart,
                        abi.STATUS_RUNTIME,
                        f"{literal(label)} shares its memory with argument {j}",
                    )
            outs.append(self.checks.check_value(arg.ptr, leaf.sinfo, label, abi.STATUS_RUNTIME))
        return outs

    def run_kernel(self, kernel: Kernel, actuals: list[Val]) -> None:
        sig = kernel.sig
        where = f"R.call_tir of '{sig.name}'"
        if len(actuals) != len(sig.params):
            raise TVMLiteError(
                f"{self.f.prefix}{where}: the kernel takes {len(sig.params)} arguments "
                f"({', '.join(p.name for p in sig.params)}), the call passes {len(actuals)}"
            )
        outer = self.f.exprs.vars
        self.f.exprs.vars = env = {}
        try:
            args = self._kernel_args(kernel, actuals, env, where)
        finally:
            self.f.exprs.vars = outer
        reported = None
        if sig.reports:  # the kernel writes the message of an assert with values here
            reported = self.frame.stack_slot(ir.ArrayType(abi.I8, MESSAGE_SIZE))
            self.f.b.store(ir.Constant(abi.I8, 0), reported)
            args += [reported, ty.constant("int64", MESSAGE_SIZE)]
        status = self.f.b.call(kernel.fn, args)
        if not kernel.can_fail:
            return
        count = ty.constant("int32", len(sig.errors))
        where = abi.cstring(self.f.module, f"{self.f.prefix}R.call_tir of '{sig.name}'")
        message = NULL if reported is None else reported
        result = self.f.b.call(
            self.f.module.globals[helpers.KERNEL_STATUS],
            [status, kernel.errors, count, where, message, self.f.err, self.f.err_len],
        )
        self.chunks.propagate(result)

    def _kernel_args(
        self, kernel: Kernel, actuals: list[Val], env: dict, where: str
    ) -> list[ir.Value]:
        sig = kernel.sig
        args: list[ir.Value] = []
        for p, a in zip(sig.params, actuals, strict=True):
            if p.is_pointer:
                if not isinstance(a, TensorVal):
                    raise TVMLiteError(f"{self.f.prefix}{where}: '{p.name}' needs a tensor")
                continue
            if not isinstance(a, PrimVal):
                raise TVMLiteError(
                    f"{self.f.prefix}{where}: '{p.name}' needs a {p.var.dtype} scalar"
                )
            env[p.var] = self.f.exprs.arith.cast(a.value, a.dtype, p.var.dtype)
        # Every buffer binds its plain dims before any dim is checked: a kernel's
        # input may have the shape (n * 12, 64) and only its output (n, 12, 64).
        bound = []
        for p, a in zip(sig.params, actuals, strict=True):
            if p.buffer is not None and isinstance(a, TensorVal):
                what = f"{where}: buffer '{p.name}'"
                bound.append((p.buffer, a, self._bind_buffer(p.buffer, a, env, what), what))
        for buf, a, got, what in bound:
            self._check_shape(buf, a, got, what)
        for p, a in zip(sig.params, actuals, strict=True):
            if p.is_pointer:
                assert isinstance(a, TensorVal)
                args.append(a.data if a.data is not None else abi.data_pointer(self.f.b, a.ptr))
            elif p.var.dtype == "float16":
                args.append(self.f.b.fpext(env[p.var], ty.abi_type("float16")))
            else:
                args.append(
                    self.f.b.zext(env[p.var], abi.I8) if p.var.dtype == "bool" else env[p.var]
                )
        for var in sig.sym_vars:
            if var not in env:
                raise TVMLiteError(f"{self.f.prefix}{where}: cannot find the value of '{var.name}'")
            args.append(self.f.exprs.arith.cast(env[var], var.dtype, "int64"))
        return args

    def _bind_buffer(self, buf: tir.Buffer, t: TensorVal, env: dict, what: str) -> list[ir.Value]:
        """Bind the kernel's vars from the tensor's dims (and strides); the dims."""
        b = self.f.b
        ndim = len(buf.shape)
        if t.ndim >= 0 and t.ndim != ndim:
            raise TVMLiteError(f"{self.f.prefix}{what} has {ndim} dimensions, the tensor {t.ndim}")
        if t.dtype != "void" and t.dtype != buf.dtype:
            raise TVMLiteError(f"{self.f.prefix}{what} has dtype {buf.dtype}, the tensor {t.dtype}")
        if t.ndim < 0 or t.dtype == "void":
            self.checks.check_header(t.ptr, buf.dtype, ndim, what, abi.STATUS_RUNTIME)
        known = t.dims is not None and len(t.dims) == ndim
        got = list(t.dims) if known else [abi.load_dim(b, t.ptr, k) for k in range(ndim)]
        for dim, value in zip(buf.shape, got, strict=True):
            if isinstance(dim, tir.Var) and dim not in env:
                env[dim] = self.f.exprs.arith.cast(value, "int64", dim.dtype)
        if buf.strides:
            self._match_strides(buf, got, env, what)
        offset = buf.elem_offset
        if isinstance(offset, tir.Var) and offset not in env:
            env[offset] = ty.constant(offset.dtype, 0)
        elif offset is not None and not _is_zero(offset):
            raise TVMLiteError(f"{self.f.prefix}{what} needs a nonzero element offset")
        return got

    def _check_shape(self, buf: tir.Buffer, t: TensorVal, got: list[ir.Value], what: str) -> None:
        """Compare the tensor's dims with the buffer's: at compile time when both
        are known, else at run time."""
        b = self.f.b
        ndim = len(buf.shape)
        want: list[ir.Value] = []
        runtime = False
        for dim, value in zip(buf.shape, got, strict=True):
            expect = self.f.exprs.int64(dim)
            if expect is value:
                want.append(ty.constant("int64", -1))
            elif isinstance(expect, ir.Constant) and isinstance(value, ir.Constant):
                if int(expect.constant) != int(value.constant):
                    shape = tuple_text(
                        [str(int(v.constant)) if isinstance(v, ir.Constant) else "?" for v in got]
                    )
                    raise TVMLiteError(
                        f"{self.f.prefix}{what} expects shape "
                        f"{tuple_text([shape_text(d) for d in buf.shape])}, the tensor has {shape}"
                    )
                want.append(ty.constant("int64", -1))
            else:
                want.append(expect)
                runtime = True
        if runtime:
            text = abi.cstring(self.f.module, tuple_text([shape_text(d) for d in buf.shape]))
            result = b.call(
                self.f.module.globals[helpers.CHECK_SHAPE],
                [
                    t.ptr,
                    ty.constant("int32", ndim),
                    self.frame.int64_array(want),
                    text,
                    ty.constant("int32", abi.STATUS_RUNTIME),
                    abi.cstring(self.f.module, self.f.prefix + what),
                    self.f.err,
                    self.f.err_len,
                ],
            )
            self.chunks.propagate(result)

    def _match_strides(self, buf: tir.Buffer, got: list[ir.Value], env: dict, what: str) -> None:
        """Buffers that declare strides see the compact ones of the tensor."""
        b = self.f.b
        ndim = len(got)
        strides = [ty.constant("int64", 1)] * ndim
        for k in range(ndim - 2, -1, -1):
            strides[k] = b.mul(strides[k + 1], got[k + 1])
        ok: ir.Value = ir.Constant(ty.I1, 1)
        for k, (stride, value) in enumerate(zip(buf.strides, strides, strict=False)):
            if isinstance(stride, tir.Var) and stride not in env:
                env[stride] = self.f.exprs.arith.cast(value, "int64", stride.dtype)
                continue
            same = b.icmp_signed(
                "==",
                self.f.exprs.int64(stride),
                value,
            )
            ok = b.and_(ok, b.or_(same, b.icmp_signed("==", got[k], ty.constant("int64", 1))))
        if not isinstance(ok, ir.Constant):
            self.checks.check(
                ok,
                abi.STATUS_RUNTIME,
                f"{literal(what)}: the tensor's strides do not fit the buffer",
            )


def _is_zero(e: tir.PrimExpr) -> bool:
    return isinstance(e, tir.IntImm) and e.value == 0


__all__ = ["NULL", "PACKED_TABLE", "Kernel", "KernelCalls"]

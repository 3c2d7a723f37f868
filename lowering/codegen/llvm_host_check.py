"""Run-time checks of the host code: tensors against struct info (parameters,
`R.match_cast`, values returned by packed and graph functions) and the error
path every failed check takes.

A failed check formats one sentence into the caller's error buffer with
`snprintf` (naming the parameter, what was expected and what was received) and
leaves with a status code (releasing what the function owns); nothing after a failed
check runs, so no kernel ever sees a tensor that does not fit it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from llvmlite import ir

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import relax, tir
from tvmlite.lowering.codegen import llvm_host_abi as abi
from tvmlite.lowering.codegen import llvm_host_helpers as helpers
from tvmlite.lowering.codegen import llvm_types as ty
from tvmlite.lowering.codegen.llvm_host_values import (
    PrimVal,
    ShapeVal,
    TensorVal,
    Val,
    free_vars,
    shape_text,
    tensor_ndim,
    tuple_text,
)

if TYPE_CHECKING:
    from tvmlite.lowering.codegen.llvm_host_chunks import Chunks
    from tvmlite.lowering.codegen.llvm_host_frame import Frame
    from tvmlite.lowering.codegen.llvm_host_state import HostFunction

I32, I64, PTR = abi.I32, abi.I64, abi.PTR


def literal(text: str) -> str:
    """`text` for a printf format: names of packed functions and dims such as
    `n % s` are the user's, and a `%s` of theirs would make printf read a pointer
    that was never passed."""
    return text.replace("%", "%%")


class Checks:
    """Run-time checks of the function being emitted (`f`): they leave the chunk
    through `chunks` and keep shape arrays in `frame`."""

    def __init__(self, f: HostFunction, chunks: Chunks, frame: Frame) -> None:
        self.f = f
        self.chunks = chunks
        self.frame = frame

    # ------------------------------------------------------------ error path

    def fail_here(self, status: int, text: str, *args: ir.Value) -> None:
        """Format the message and leave (the caller moves the builder on)."""
        fmt = abi.cstring(self.f.module, (literal(self.f.prefix) + text).replace("%lld", "%ld"))
        snprintf = abi.c_function(self.f.module, "snprintf", I32, [PTR, I64, PTR], var_arg=True)
        self.f.b.call(snprintf, [self.f.err, self.f.err_len, fmt, *args])
        self.chunks.leave(ty.constant("int32", status))

    def check(self, ok: ir.Value, status: int, text: str, *args: ir.Value) -> None:
        """Continue when `ok`, else fail with the message (args dominate the check)."""
        good = self.f.fn.append_basic_block("ok")
        bad = self.f.fn.append_basic_block("bad")
        self.f.b.cbranch(ok, good, bad)
        self.f.b.position_at_end(bad)
        self.fail_here(status, text, *args)
        self.f.b.position_at_end(good)

    # ------------------------------------------------------------ tensors

    def check_header(self, ptr: ir.Value, dtype: str, ndim: int, what: str, status: int) -> None:
        """Everything but the shape values: device, ndim, dtype, compactness, alignment."""
        packed = abi.packed_dtype(dtype) if dtype != "void" else -1
        result = self.f.b.call(
            self.f.module.globals[helpers.CHECK_TENSOR],
            [
                ptr,
                ty.constant("int32", ndim),
                ty.constant("int32", packed),
                ty.constant("int32", status),
                abi.cstring(self.f.module, self.f.prefix + what),
                self.f.err,
                self.f.err_len,
            ],
        )
        self.chunks.propagate(result)

    def bind_dims(self, ptr: ir.Value, sinfo: relax.TensorStructInfo, what: str) -> None:
        """Bind the symbolic vars that appear as whole dims and are not bound yet."""
        shape = sinfo.shape if isinstance(sinfo.shape, tuple) else ()
        for axis, dim in enumerate(shape):
            if isinstance(dim, tir.Var) and dim not in self.f.exprs.vars:
                value = abi.load_dim(self.f.b, ptr, axis)
                self.f.exprs.vars[dim] = self.f.exprs.arith.cast(value, "int64", dim.dtype)
                self.f.origin[dim] = what

    def check_dims(
        self,
        ptr: ir.Value,
        sinfo: relax.TensorStructInfo,
        what: str,
        status: int,
        strict: bool = True,
    ) -> tuple[ir.Value, ...] | None:
        """Compare every dim with its expression; returns the dims as SSA values
        (None when the shape is unknown). Non-strict: skip dims whose vars mean
        nothing here (a callee's)."""
        if not isinstance(sinfo.shape, tuple):
            return None
        want: list[ir.Value] = []
        known = True
        for dim in sinfo.shape:
            names: dict[tir.Var, None] = {}
            free_vars(dim, names)
            if not strict and any(v not in self.f.exprs.vars for v in names):
                want.append(ty.constant("int64", -1))
                known = False
                continue
            want.append(self.f.dim_value(dim, what))
        if not want:
            return ()
        symbolic = not all(isinstance(d, tir.IntImm) for d in sinfo.shape)
        text = abi.cstring(self.f.module, tuple_text([shape_text(d) for d in sinfo.shape]))
        result = self.f.b.call(
            self.f.module.globals[helpers.CHECK_SHAPE],
            [
                ptr,
                ty.constant("int32", len(want)),
                self.frame.int64_array(want),
                text if symbolic else ir.Constant(PTR, None),
                ty.constant("int32", status),
                abi.cstring(self.f.module, self.f.prefix + what),
                self.f.err,
                self.f.err_len,
            ],
        )
        self.chunks.propagate(result)
        return tuple(want) if known else None

    def check_tensor(
        self, ptr: ir.Value, sinfo: relax.TensorStructInfo, what: str, status: int
    ) -> TensorVal:
        """Header, then bind new vars, then every dim (match_cast, returned values)."""
        ndim = tensor_ndim(sinfo)
        self.check_header(ptr, sinfo.dtype, ndim, what, status)
        self.bind_dims(ptr, sinfo, what)
        dims = self.check_dims(ptr, sinfo, what, status, strict=False)
        return TensorVal(ptr, sinfo.dtype, ndim, dims)

    # ------------------------------------------------------------ prim and shape

    def prim_from_tensor(
        self, ptr: ir.Value, sinfo: relax.PrimStructInfo, what: str, status: int
    ) -> PrimVal:
        """A prim value passed as a 0-d tensor: check, load, bind or compare `value`."""
        self.check_header(ptr, sinfo.dtype, 0, what, status)
        memory = self.f.b.load(abi.data_pointer(self.f.b, ptr), typ=ty.memory_type(sinfo.dtype))
        value = memory
        if sinfo.dtype == "bool":
            value = self.f.b.icmp_unsigned("!=", memory, ty.constant("int8", 0))
        self.bind_prim(value, sinfo, what, status)
        return PrimVal(value, sinfo.dtype)

    def bind_prim(
        self, value: ir.Value, sinfo: relax.PrimStructInfo, what: str, status: int
    ) -> None:
        known = sinfo.value
        if known is None:
            return
        if isinstance(known, tir.Var) and known not in self.f.exprs.vars:
            self.f.exprs.vars[known] = self.f.exprs.arith.cast(value, sinfo.dtype, known.dtype)
            self.f.origin[known] = what
            return
        if sinfo.dtype.startswith("float"):
            return
        want = self.f.exprs.int64(known)
        got = self.f.exprs.arith.cast(value, sinfo.dtype, "int64")
        self.check(
            self.f.b.icmp_signed("==", want, got),
            status,
            f"{literal(what)}: expected the value {literal(shape_text(known))} = %lld, got %lld",
            want,
            got,
        )

    def shape_from_tensor(
        self, ptr: ir.Value, sinfo: relax.ShapeStructInfo, what: str, status: int
    ) -> ShapeVal:
        """A shape passed as a 1-D int64 tensor of its values."""
        b = self.f.b
        self.check_header(ptr, "int64", 1, what, status)
        count = abi.load_dim(b, ptr, 0)
        values = sinfo.values
        ndim = len(values) if values is not None else sinfo.ndim
        if ndim < 0:
            raise TVMLiteError(f"{self.f.prefix}{what}: a shape of unknown rank cannot be passed")
        self.check(
            b.icmp_signed("==", count, ty.constant("int64", ndim)),
            status,
            f"{literal(what)}: expected a shape of {ndim} values, got %lld",
            count,
        )
        data = abi.data_pointer(b, ptr)
        dims = tuple(
            b.load(b.gep(data, [ty.constant("int64", k)], source_etype=I64), typ=I64)
            for k in range(ndim)
        )
        for k, value in enumerate(values or ()):
            self.bind_prim(dims[k], relax.PrimStructInfo("int64", value), f"{what}[{k}]", status)
        return ShapeVal(dims)

    def check_value(self, ptr: ir.Value, sinfo: relax.StructInfo, what: str, status: int) -> Val:
        """One ABI leaf received from a callee, as the value its struct info says."""
        if isinstance(sinfo, relax.TensorStructInfo):
            return self.check_tensor(ptr, sinfo, what, status)
        if isinstance(sinfo, relax.PrimStructInfo):
            return self.prim_from_tensor(ptr, sinfo, what, status)
        assert isinstance(sinfo, relax.ShapeStructInfo)
        return self.shape_from_tensor(ptr, sinfo, what, status)

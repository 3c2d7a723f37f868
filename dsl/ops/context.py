"""What an inference function works with: the call, its arguments' struct info,
its attributes, and one way to fail.

Every inference error goes through `InferCtx.fail`, so each message starts with
the operator as written (`R.matmul: ...`) and carries the call's span.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np

from tvmlite.diagnostics import ParseError, Span
from tvmlite.dsl import dtype as dt
from tvmlite.dsl import relax, tir
from tvmlite.dsl.ops import shape_arith as sa
from tvmlite.dsl.ops.registry import OpDef

Shape = tuple[tir.PrimExpr, ...]
VOID = relax.TupleStructInfo(())


def tensor_sinfo(shape: Shape | None, dtype: str, ndim: int = -1) -> relax.TensorStructInfo:
    """A tensor struct info; a known shape fixes `ndim`."""
    if shape is not None:
        to_index = sa.to_index
        shape = tuple([to_index(d) for d in shape])
        return relax.TensorStructInfo(shape, dtype, len(shape))
    return relax.TensorStructInfo(None, dtype, ndim)


def sinfo_of(expr: Any, span: Span | None = None) -> relax.StructInfo:
    """The struct info of an already-built Relax expression."""
    if isinstance(expr, relax.Var):
        return expr.struct_info
    if isinstance(expr, relax.Constant):
        if expr.struct_info is not None:
            return expr.struct_info
        data = np.asarray(expr.data)
        dtype = "bool" if data.dtype == np.bool_ else str(data.dtype)
        return tensor_sinfo(tuple(sa.const(d) for d in data.shape), dtype)
    if isinstance(expr, relax.ShapeExpr):
        return relax.ShapeStructInfo(values=expr.values, ndim=len(expr.values))
    if isinstance(expr, relax.PrimValue):
        return relax.PrimStructInfo(dtype=expr.value.dtype, value=expr.value)
    if isinstance(expr, relax.Tuple):
        return relax.TupleStructInfo(tuple(sinfo_of(f, span) for f in expr.fields))
    if isinstance(expr, relax.TupleGetItem):
        outer = sinfo_of(expr.tuple_value, span)
        if isinstance(outer, relax.TupleStructInfo) and 0 <= expr.index < len(outer.fields):
            return outer.fields[expr.index]
        return relax.ObjectStructInfo()
    if isinstance(expr, relax.Call):
        from tvmlite.dsl.ops.call import infer_struct_info  # calls nest: import late

        return infer_struct_info(expr, span)
    if isinstance(expr, relax.SeqExpr):
        return sinfo_of(expr.body, span)
    if isinstance(expr, relax.Function):
        params = tuple(p.struct_info for p in expr.params)
        return relax.FuncStructInfo(params, expr.ret_struct_info, expr.is_pure)
    if isinstance(expr, relax.StringImm):
        return relax.StringStructInfo()
    return relax.ObjectStructInfo()


def known_shape(sinfo: relax.TensorStructInfo) -> Shape | None:
    """The dims of a tensor when known, looking through a shape-typed var."""
    shape = sinfo.shape
    if isinstance(shape, relax.Var):
        inner = shape.struct_info
        if isinstance(inner, relax.ShapeStructInfo) and inner.values is not None:
            return tuple(inner.values)
        return None
    return tuple(shape) if shape is not None else None


def ndim_of(sinfo: relax.TensorStructInfo) -> int:
    shape = known_shape(sinfo)
    if shape is not None:
        return len(shape)
    if isinstance(sinfo.shape, relax.Var):
        inner = sinfo.shape.struct_info
        if isinstance(inner, relax.ShapeStructInfo):
            return inner.ndim
    return sinfo.ndim


@dataclass(slots=True)
class InferCtx:
    call: relax.Call
    op: OpDef
    span: Span | None = None

    def fail(self, message: str) -> NoReturn:
        raise ParseError(f"{self.op.display}: {message}", self.span)

    # ------------------------------------------------------------ arguments

    @property
    def nargs(self) -> int:
        return len(self.call.args)

    def arg(self, index: int) -> relax.Expr:
        return self.call.args[index]

    def sinfo(self, index: int) -> relax.StructInfo:
        args = self.call.args
        if index >= len(args):
            self.fail(f"expects at least {index + 1} arguments, got {len(args)}")
        arg = args[index]
        if isinstance(arg, relax.Var):
            return arg.struct_info  # the first case of `sinfo_of`, inlined for speed
        return sinfo_of(arg, self.span)

    def arg_name(self, index: int) -> str:
        names = self.op.arg_names
        if index < len(names) and not names[index].variadic:
            return names[index].name
        return f"argument {index}"

    def tensor(self, index: int, name: str | None = None) -> relax.TensorStructInfo:
        """The struct info of a tensor argument (an unknown object passes as an
        unknown tensor); anything else is an error."""
        sinfo = self.sinfo(index)
        if isinstance(sinfo, relax.TensorStructInfo):
            return sinfo  # as `as_tensor` would, without naming the argument
        return self.as_tensor(sinfo, name or self.arg_name(index))

    def as_tensor(
        self, sinfo: relax.StructInfo, name: str, allow_prim: bool = False
    ) -> relax.TensorStructInfo:
        """`allow_prim`: a scalar counts as a 0-d tensor (TVM's binary ops accept
        `R.add(x, 1)`; most other ops reject it)."""
        if isinstance(sinfo, relax.TensorStructInfo):
            return sinfo
        if allow_prim and isinstance(sinfo, relax.PrimStructInfo):
            return tensor_sinfo((), sinfo.dtype)
        if isinstance(sinfo, relax.ObjectStructInfo):
            return relax.TensorStructInfo()
        self.fail(f"{name} must be a tensor, got {describe(sinfo)}")

    def tensors(self, index: int, name: str | None = None) -> list[relax.TensorStructInfo]:
        """The tensors of a tuple argument (`R.concat((x, y))`)."""
        label = name or self.arg_name(index)
        sinfo = self.sinfo(index)
        if not isinstance(sinfo, relax.TupleStructInfo):
            self.fail(f"{label} must be a tuple of tensors, got {describe(sinfo)}")
        return [self.as_tensor(f, f"{label}[{i}]") for i, f in enumerate(sinfo.fields)]

    def prim(self, index: int) -> tir.PrimExpr | None:
        """The value of a scalar argument when known (`R.arange(0, n, 1)`)."""
        sinfo = self.sinfo(index)
        if isinstance(sinfo, relax.PrimStructInfo):
            return sinfo.value
        self.fail(f"{self.arg_name(index)} must be a scalar, got {describe(sinfo)}")

    def shape_arg(self, index: int) -> Shape | None:
        """The values of a shape argument (`R.shape([2, n])` or a shape var)."""
        args = self.call.args
        if index < len(args) and type(args[index]) is relax.ShapeExpr:
            return tuple(args[index].values)  # the values its struct info would hold
        sinfo = self.sinfo(index)
        if isinstance(sinfo, relax.ShapeStructInfo):
            return tuple(sinfo.values) if sinfo.values is not None else None
        self.fail(f"{self.arg_name(index)} must be a shape, got {describe(sinfo)}")

    def shape_ndim(self, index: int) -> int:
        sinfo = self.sinfo(index)
        return sinfo.ndim if isinstance(sinfo, relax.ShapeStructInfo) else -1

    # ------------------------------------------------------------ attributes

    def attr(self, name: str) -> Any:
        for key, value in self.call.attrs:
            if key == name:
                return value
        default = next((a.default for a in self.op.attrs if a.name == name), None)
        return default

    # ------------------------------------------------------------ helpers

    def axis(self, axis: int, ndim: int, what: str = "axis") -> int:
        """`axis` normalized into [0, ndim), or an error."""
        if not -ndim <= axis < ndim:
            self.fail(f"{what} {axis} is out of range for a tensor of rank {ndim}")
        return axis + ndim if axis < 0 else axis

    def axes(self, axes: tuple[int, ...], ndim: int, what: str = "axis") -> list[int]:
        out = [self.axis(a, ndim, what) for a in axes]
        if len(set(out)) != len(out):
            self.fail(f"{what} {list(axes)} repeats an axis")
        return out

    def arith_dtype(self, a: str, b: str) -> str:
        """TVM's dtype of a two-operand arithmetic result (matmul, convolutions): unknown
        when an operand's is; two known dtypes must agree, unless one is bool (the first
        operand's then wins)."""
        if a == "void" or b == "void":
            return "void"
        if a != b and "bool" not in (a, b):
            self.fail(f"operands must have the same dtype, got {a} and {b}")
        return a

    def same_dtype(self, a: str, b: str, what: str = "operands") -> str:
        """The common dtype of two operands; unknown (`void`) yields to the other."""
        if a != "void" and b != "void" and a != b:
            self.fail(f"{what} must have the same dtype, got {a} and {b}")
        return a if a != "void" else b

    def require_float(self, sinfo: relax.TensorStructInfo, name: str = "input") -> None:
        if sinfo.dtype != "void" and not dt.is_float(sinfo.dtype):
            self.fail(f"{name} must have a float dtype, got {sinfo.dtype}")

    def require_int(self, sinfo: relax.TensorStructInfo, name: str = "input") -> None:
        if sinfo.dtype != "void" and not dt.is_integer_like(sinfo.dtype):
            self.fail(f"{name} must have an integer dtype, got {sinfo.dtype}")

    def check_dims(self, a: tir.PrimExpr, b: tir.PrimExpr, what: str) -> None:
        """Fail when two dims are provably different."""
        if sa.differ(a, b):
            self.fail(f"{what}: {sa.show(a)} vs {sa.show(b)}")


def describe(sinfo: relax.StructInfo) -> str:
    if isinstance(sinfo, relax.TensorStructInfo):
        return "a tensor"
    if isinstance(sinfo, relax.TupleStructInfo):
        return f"a tuple of {len(sinfo.fields)}"
    if isinstance(sinfo, relax.ShapeStructInfo):
        return "a shape"
    if isinstance(sinfo, relax.PrimStructInfo):
        return f"a {sinfo.dtype} scalar"
    if isinstance(sinfo, relax.FuncStructInfo):
        return "a function"
    return "an object"


def like(sinfo: relax.TensorStructInfo, dtype: str | None = None) -> relax.TensorStructInfo:
    """Same shape (a shape var stays a var), possibly another dtype."""
    return relax.TensorStructInfo(
        shape=sinfo.shape,
        dtype=sinfo.dtype if dtype is None else dtype,
        ndim=ndim_of(sinfo),
        vdevice=sinfo.vdevice,
    )

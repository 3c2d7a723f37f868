"""Binary operators: arithmetic, comparison and bitwise on tensors, scalars and
symbolic sizes.

A tensor and a Python scalar: the scalar becomes a constant of the tensor's dtype
(TVM's rule) unless PyTorch would compute in a wider type (an int tensor times 0.5),
where the tensor is cast first so the result is PyTorch's. Two tensors of different
dtypes are both cast to `torch.promote_types` of the two, as in TVM. Two scalars (sizes
of a dynamic shape, Python numbers) are computed as TIR or Python arithmetic."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import fx

from tvmlite.dsl import dtype as dt
from tvmlite.dsl import relax, tir
from tvmlite.frontend import symbols
from tvmlite.frontend.aten.create import fill_value
from tvmlite.frontend.context import Converting, convert_dtype
from tvmlite.frontend.registry import converts, register

_TORCH = {
    "float64": torch.float64,
    "float32": torch.float32,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "int64": torch.int64,
    "int32": torch.int32,
    "int16": torch.int16,
    "int8": torch.int8,
    "uint8": torch.uint8,
    "bool": torch.bool,
}


def promote_types(a: str, b: str) -> str | None:
    """The dtype two tensors of dtypes `a` and `b` compute in (`torch.promote_types`),
    None when they agree or one is not a torch dtype."""
    if a == b or a not in _TORCH or b not in _TORCH:
        return None
    return convert_dtype(torch.promote_types(_TORCH[a], _TORCH[b]))


def scalar_dtype(tensor_dtype: str, scalar: Any) -> str:
    """The dtype PyTorch computes a tensor of `tensor_dtype` with a Python `scalar` in."""
    if tensor_dtype not in _TORCH or not isinstance(scalar, (bool, int, float)):
        return tensor_dtype
    probe = torch.empty((), dtype=_TORCH[tensor_dtype])
    return convert_dtype(torch.result_type(probe, scalar))


def _is_tensor(conv: Converting, value: Any) -> bool:
    return isinstance(value, relax.Expr) and isinstance(conv.sinfo(value), relax.TensorStructInfo)


def operands(conv: Converting, lhs: Any, rhs: Any) -> tuple[relax.Expr, relax.Expr]:
    """Both operands as tensors of one dtype (see the module docstring)."""
    if isinstance(lhs, relax.Expr) and isinstance(rhs, relax.Expr):
        if _is_tensor(conv, lhs) and _is_tensor(conv, rhs):
            target = promote_types(conv.dtype(lhs), conv.dtype(rhs))
            if target is not None:
                if conv.dtype(lhs) != target:
                    lhs = conv.emit_call("astype", lhs, target)
                if conv.dtype(rhs) != target:
                    rhs = conv.emit_call("astype", rhs, target)
        return lhs, rhs
    if isinstance(lhs, relax.Expr):
        lhs = _widen(conv, lhs, rhs)
        return lhs, _scalar_operand(conv, rhs, conv.dtype(lhs))
    rhs = _widen(conv, rhs, lhs)
    return _scalar_operand(conv, lhs, conv.dtype(rhs)), rhs


def _scalar_operand(conv: Converting, value: Any, dtype: str) -> relax.Expr:
    """A Python number as a constant; a size computed from symbolic dims as a 0-d
    tensor (TVM cannot import that operand)."""
    if isinstance(value, tir.PrimExpr):
        return fill_value(conv, value, dtype)
    return conv.const(value, dtype)


def _widen(conv: Converting, tensor: relax.Expr, scalar: Any) -> relax.Expr:
    target = scalar_dtype(conv.dtype(tensor), scalar)
    if target != conv.dtype(tensor):
        return conv.emit_call("astype", tensor, target)
    return tensor


@dataclass(frozen=True)
class Binary:
    """`op(lhs, rhs)` on tensors; `scalar` computes it when both sides are scalars."""

    op: str
    scalar: Callable[[Any, Any], Any]
    out_dtype: str | None = None

    def __call__(self, conv: Converting, node: fx.Node) -> Any:
        lhs, rhs = conv.args(node)[:2]
        alpha = node.kwargs.get("alpha", 1)
        if alpha != 1:
            # `add(x, y, alpha=a)` is x + a * y (TVM 0.27 drops alpha)
            rhs = (
                conv.emit_call("multiply", rhs, conv.const(alpha, conv.dtype(rhs)))
                if (isinstance(rhs, relax.Expr))
                else rhs * alpha
            )
        if _is_var_tensor(conv, lhs) or _is_var_tensor(conv, rhs):
            return self._emit(conv, node, lhs, rhs)
        if isinstance(lhs, relax.Constant) and not isinstance(rhs, relax.Constant):
            return self._emit(conv, node, lhs, conv.const(rhs, conv.dtype(lhs)))
        if isinstance(rhs, relax.Constant) and not isinstance(lhs, relax.Constant):
            return self._emit(conv, node, conv.const(lhs, conv.dtype(rhs)), rhs)
        return self.scalar(lhs, rhs)

    def _emit(self, conv: Converting, node: fx.Node, lhs: Any, rhs: Any) -> relax.Var:
        lhs, rhs = operands(conv, lhs, rhs)
        if self.op == "divide":
            lhs, rhs = _true_division(conv, node, lhs, rhs)
        if self.out_dtype is None:
            return conv.emit_call(self.op, lhs, rhs)
        return conv.emit_call(self.op, lhs, rhs, out_dtype=self.out_dtype)


def _true_division(
    conv: Converting, node: fx.Node, lhs: relax.Expr, rhs: relax.Expr
) -> tuple[relax.Expr, relax.Expr]:
    """Integers divided are floats in PyTorch (TVM 0.27 divides them as integers)."""
    want = conv.torch_dtype(node)
    if want is None or not dt.is_float(want) or dt.is_float(conv.dtype(lhs)):
        return lhs, rhs
    return conv.emit_call("astype", lhs, want), conv.emit_call("astype", rhs, want)


def _is_var_tensor(conv: Converting, value: Any) -> bool:
    return isinstance(value, relax.Var) and isinstance(value.struct_info, relax.TensorStructInfo)


def _tir_or_python(tir_op: Callable[[Any, Any], Any], py_op: Callable[[Any, Any], Any]):
    def apply(a: Any, b: Any) -> Any:
        if isinstance(a, tir.PrimExpr) or isinstance(b, tir.PrimExpr):
            return tir_op(a, b)
        return py_op(a, b)

    return apply


def _logaddexp(a: float, b: float) -> float:
    return max(a, b) + math.log1p(math.exp(-abs(a - b)))


_ADD = _tir_or_python(symbols.add, operator.add)
_SUB = _tir_or_python(symbols.sub, operator.sub)
_MUL = _tir_or_python(symbols.mul, operator.mul)
_FLOORDIV = _tir_or_python(symbols.floordiv, operator.floordiv)
_MOD = _tir_or_python(symbols.floormod, operator.mod)

_BINARY: dict[str, tuple[str, Callable[[Any, Any], Any]]] = {
    "add": ("add", _ADD),
    "add.Tensor": ("add", _ADD),
    "add.Scalar": ("add", _ADD),
    "add_.Tensor": ("add", _ADD),
    "atan2.default": ("atan2", math.atan2),
    "bitwise_and.Tensor": ("bitwise_and", operator.and_),
    "bitwise_and.Scalar": ("bitwise_and", operator.and_),
    "bitwise_or.Tensor": ("bitwise_or", operator.or_),
    "bitwise_or.Scalar": ("bitwise_or", operator.or_),
    "bitwise_or_.Tensor": ("bitwise_or", operator.or_),
    "bitwise_or_.Scalar": ("bitwise_or", operator.or_),
    "bitwise_xor.Tensor": ("bitwise_xor", operator.xor),
    "bitwise_xor.Scalar": ("bitwise_xor", operator.xor),
    "__and__.Tensor": ("bitwise_and", operator.and_),
    "__and__.Scalar": ("bitwise_and", operator.and_),
    "__or__.Tensor": ("bitwise_or", operator.or_),
    "__or__.Scalar": ("bitwise_or", operator.or_),
    "__xor__.Tensor": ("bitwise_xor", operator.xor),
    "__xor__.Scalar": ("bitwise_xor", operator.xor),
    "div.Scalar": ("divide", operator.truediv),
    "div.Tensor": ("divide", operator.truediv),
    "eq.Scalar": ("equal", operator.eq),
    "eq.Tensor": ("equal", operator.eq),
    "ne.Scalar": ("not_equal", operator.ne),
    "ne.Tensor": ("not_equal", operator.ne),
    "ge.Scalar": ("greater_equal", operator.ge),
    "ge.Tensor": ("greater_equal", operator.ge),
    "gt.Scalar": ("greater", operator.gt),
    "gt.Tensor": ("greater", operator.gt),
    "le.Scalar": ("less_equal", operator.le),
    "le.Tensor": ("less_equal", operator.le),
    "lt.Scalar": ("less", operator.lt),
    "lt.Tensor": ("less", operator.lt),
    "floor_divide.default": ("floor_divide", _FLOORDIV),
    "floordiv": ("floor_divide", _FLOORDIV),
    "logaddexp.default": ("log_add_exp", _logaddexp),
    "max.other": ("maximum", max),
    "min.other": ("minimum", min),
    "maximum.default": ("maximum", max),
    "minimum.default": ("minimum", min),
    "remainder.Tensor": ("floor_mod", _MOD),
    "remainder.Scalar": ("floor_mod", _MOD),
    "mod": ("floor_mod", _MOD),
    "mul": ("multiply", _MUL),
    "mul.Tensor": ("multiply", _MUL),
    "mul.Scalar": ("multiply", _MUL),
    "mul_.Tensor": ("multiply", _MUL),
    "pow.Scalar": ("power", operator.pow),
    "pow.Tensor_Tensor": ("power", operator.pow),
    "sub": ("subtract", _SUB),
    "sub.Tensor": ("subtract", _SUB),
    "sub.Scalar": ("subtract", _SUB),
}
for _name, (_op, _fold) in _BINARY.items():
    register(_name, Binary(_op, _fold))

for _name in ("matmul.default", "mm.default", "bmm.default"):
    register(_name, Binary("matmul", operator.matmul, out_dtype="float32"))


@converts("pow.Tensor_Scalar")
def pow_tensor_scalar(conv: Converting, node: fx.Node) -> Any:
    lhs, rhs = conv.args(node)[:2]
    # an integer base to a small integer power: repeated products (Relax's power
    # takes floats)
    is_int = _is_tensor(conv, lhs) and (dt.is_int(conv.dtype(lhs)) or dt.is_uint(conv.dtype(lhs)))
    if is_int and isinstance(rhs, int) and not isinstance(rhs, bool) and rhs >= 0:
        if rhs == 0:
            return conv.emit_call("ones_like", lhs)
        result = lhs
        for _ in range(rhs - 1):
            result = conv.emit_call("multiply", result, lhs)
        return result
    return Binary("power", operator.pow)(conv, node)


@converts("div.Tensor_mode")
def div_mode(conv: Converting, node: fx.Node) -> relax.Var:
    args = conv.args(node)
    lhs, rhs = args[0], args[1]
    mode = args[2] if len(node.args) > 2 else node.kwargs.get("rounding_mode")
    if isinstance(rhs, (int, float)):
        rhs = _scalar_const(conv, rhs, lhs)
    if mode is None:
        return conv.emit_call("divide", lhs, rhs)
    if mode == "floor":
        return conv.emit_call("floor_divide", lhs, rhs)
    if mode == "trunc":
        return conv.emit_call("trunc", conv.emit_call("divide", lhs, rhs))
    raise conv.error(node, f"unknown rounding_mode {mode!r}")


def _scalar_const(conv: Converting, value: Any, other: relax.Expr) -> relax.Constant:
    """`relax.const(value)` (int32 or float32, TVM's default), in the other operand's
    dtype where that default would not match it (Relax binaries take one dtype)."""
    default = conv.const(value)
    dtype = conv.dtype(other)
    if str(default.data.dtype) != dtype:
        return conv.const(value, dtype)
    return default


@converts("fmod.Scalar", "fmod.Tensor")
def fmod(conv: Converting, node: fx.Node) -> relax.Var:
    lhs, rhs = conv.args(node)[:2]
    if not isinstance(rhs, relax.Expr):
        rhs = conv.const(rhs, conv.dtype(lhs))
    elif not isinstance(lhs, relax.Expr):
        lhs = conv.const(lhs, conv.dtype(rhs))
    return conv.emit_call("mod", lhs, rhs)


@converts("rsub.Tensor", "rsub.Scalar")
def rsub(conv: Converting, node: fx.Node) -> relax.Var:
    lhs, rhs = conv.args(node)[:2]
    if isinstance(rhs, (int, float)):
        rhs = _scalar_const(conv, rhs, lhs)
    return conv.emit_call("subtract", rhs, lhs)


@converts("outer.default")
def outer(conv: Converting, node: fx.Node) -> relax.Var:
    return conv.emit_call("outer", conv.env[node.args[0]], conv.env[node.args[1]])


@converts("neg")
def neg_scalar(conv: Converting, node: fx.Node) -> Any:
    value = conv.args(node)[0]
    if isinstance(value, tir.PrimExpr):
        return symbols.mul(value, -1)  # TVM negates a TIR scalar as x * -1
    return -value


@dataclass(frozen=True)
class SymbolicCompare:
    """A comparison of sizes (`s0 >= 2` in a guard) bound as a Relax prim value."""

    kind: str

    def __call__(self, conv: Converting, node: fx.Node) -> relax.Var:
        lhs, rhs = conv.args(node)[:2]
        return _bind_condition(conv, symbols.compare(self.kind, lhs, rhs))


def _bind_condition(conv: Converting, value: tir.PrimExpr) -> relax.Var:
    """A bool about sizes bound as a prim value; its var's struct info is a plain bool,
    what the text `lv: T.bool = n >= 2` says (the value is kept for `sym_not`)."""
    var = conv.bb.emit(relax.PrimValue(value), sinfo=relax.PrimStructInfo("bool"))
    conv.conditions[var] = value
    return var


for _kind in ("ge", "le", "gt", "lt", "eq", "ne"):
    register(_kind, SymbolicCompare(_kind))
# torch writes a check of `n % 2 == 0` on a size as aten.ne.default (TVM 0.27 has none)
register("ne.default", SymbolicCompare("ne"))


@converts("sym_not")
def sym_not(conv: Converting, node: fx.Node) -> relax.Var:
    """`not` of a size comparison (torch writes `n != m` as sym_not(n == m); TVM has
    no converter for it)."""
    value = conv.env[node.args[0]]
    if isinstance(value, bool):
        return not value
    value = conv.conditions.get(value, value)
    if not isinstance(value, tir.PrimExpr):
        raise conv.error(node, "sym_not of something that is not a condition on sizes")
    return _bind_condition(conv, tir.Not(value, "bool"))

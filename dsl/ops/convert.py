"""Turning what the parser hands over into call arguments and attribute values.

The parser gives each argument as a Relax expression, a TIR `PrimExpr`, or a
plain Python literal. Relax arguments convert literals the way TVM's Python
wrappers do (the `kind` of the `ArgDef`); attributes are validated and
normalized to plain Python values (lists become tuples, `"void"` dtypes None)
so that the printer can print them literally.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

from tvmlite.diagnostics import ParseError, Span
from tvmlite.dsl import dtype as dt
from tvmlite.dsl import relax, tir
from tvmlite.dsl.ops import shape_arith as sa
from tvmlite.dsl.ops.registry import ArgDef, AttrDef, OpDef

_SCALARS = (bool, int, float)


class Fail:
    """Raises located errors named after the operator being built."""

    __slots__ = ("op", "span")

    def __init__(self, op: OpDef, span: Span | None):
        self.op, self.span = op, span

    def __call__(self, message: str) -> NoReturn:
        raise ParseError(f"{self.op.display}: {message}", self.span)


def _literal(value: Any) -> str:
    return (
        repr(value)
        if isinstance(value, (str, *_SCALARS)) or value is None
        else type(value).__name__
    )


# ---------------------------------------------------------------- Relax arguments


def prim_value(value: Any, int_dtype: str = "int64", float_dtype: str = "float64") -> relax.Expr:
    """A scalar literal or PrimExpr as a `PrimValue` (bools stay bool)."""
    if isinstance(value, tir.PrimExpr):
        return relax.PrimValue(value)
    if isinstance(value, bool):
        return relax.PrimValue(tir.IntImm("bool", int(value)))
    if isinstance(value, int):
        return relax.PrimValue(tir.IntImm(int_dtype, value))
    return relax.PrimValue(tir.FloatImm(float_dtype, float(value)))


def _shape_dim(value: Any, fail: Fail, name: str) -> tir.PrimExpr:
    if isinstance(value, relax.PrimValue):
        value = value.value
    if isinstance(value, bool) or not isinstance(value, (int, tir.PrimExpr)):
        fail(f"{name} must hold integers or symbolic dims, got {_literal(value)}")
    return sa.to_index(value)


def _to_tensor_arg(value: Any, fail: Fail, name: str) -> relax.Expr:
    # TVM's FFI turns a bare Python number into an int32/float32 scalar here.
    if isinstance(value, relax.Expr):
        return value
    if isinstance(value, (tir.PrimExpr, *_SCALARS)):
        return prim_value(value, "int32", "float32")
    if isinstance(value, str):
        return relax.StringImm(value)
    if isinstance(value, (tuple, list)):
        return relax.Tuple(tuple(_to_tensor_arg(v, fail, name) for v in value))
    fail(f"{name} must be a Relax value, got {_literal(value)}")


def _to_prim_arg(value: Any, fail: Fail, name: str) -> relax.Expr:
    if isinstance(value, relax.Expr):
        return value
    if isinstance(value, (tir.PrimExpr, *_SCALARS)):
        return prim_value(value)
    fail(f"{name} must be a scalar, got {_literal(value)}")


def _to_prim32_arg(value: Any, fail: Fail, name: str) -> relax.Expr:
    if isinstance(value, relax.Expr):
        return value
    if isinstance(value, (tir.PrimExpr, *_SCALARS)):
        return prim_value(value, "int32", "float32")
    fail(f"{name} must be a scalar, got {_literal(value)}")


def _to_prim_tuple_arg(value: Any, fail: Fail, name: str) -> relax.Expr:
    if isinstance(value, relax.Expr) and not isinstance(value, relax.PrimValue):
        return value
    if isinstance(value, (tuple, list)):
        return relax.Tuple(tuple(_to_prim_arg(v, fail, name) for v in value))
    return relax.Tuple((_to_prim_arg(value, fail, name),))


def _to_shape_arg(value: Any, fail: Fail, name: str) -> relax.Expr:
    if isinstance(value, relax.Expr) and not isinstance(value, relax.PrimValue):
        return value
    if isinstance(value, (tuple, list)):
        return relax.ShapeExpr(tuple(_shape_dim(v, fail, name) for v in value))
    return relax.ShapeExpr((_shape_dim(value, fail, name),))


def _to_tuple_arg(value: Any, fail: Fail, name: str) -> relax.Expr:
    if isinstance(value, (tuple, list)):
        return relax.Tuple(tuple(_to_tensor_arg(v, fail, name) for v in value))
    return _to_tensor_arg(value, fail, name)


def _to_any_arg(value: Any, fail: Fail, name: str) -> relax.Expr:
    # `relax.utils.convert_to_expr`: int64/float64 scalars, strings, nested tuples.
    if isinstance(value, (tuple, list)):
        return relax.Tuple(tuple(_to_any_arg(v, fail, name) for v in value))
    if isinstance(value, (tir.PrimExpr, *_SCALARS)):
        return prim_value(value)
    return _to_tensor_arg(value, fail, name)


def _to_func_arg(value: Any, fail: Fail, name: str) -> relax.Expr:
    if isinstance(value, str):
        return relax.ExternFunc(value)
    if isinstance(value, relax.StringImm):
        return relax.ExternFunc(value.value)
    if isinstance(value, relax.Expr):
        return value
    fail(f"{name} must be a function or a symbol name, got {_literal(value)}")


def _to_dtype_arg(value: Any, fail: Fail, name: str) -> relax.Expr:
    if isinstance(value, relax.Expr):
        return value
    return relax.DataTypeImm(normalize_dtype(value, fail, name, optional=False))


def _to_str_arg(value: Any, fail: Fail, name: str) -> relax.Expr:
    if isinstance(value, relax.Expr):
        return value
    if isinstance(value, str):
        return relax.StringImm(value)
    fail(f"{name} must be a string, got {_literal(value)}")


_ARG_KINDS: dict[str, Callable[[Any, Fail, str], relax.Expr]] = {
    "tensor": _to_tensor_arg,
    "prim": _to_prim_arg,
    "prim32": _to_prim32_arg,
    "prim_tuple": _to_prim_tuple_arg,
    "shape": _to_shape_arg,
    "tuple": _to_tuple_arg,
    "any": _to_any_arg,
    "func": _to_func_arg,
    "dtype": _to_dtype_arg,
    "str": _to_str_arg,
}


def convert_arg(arg: ArgDef, value: Any, fail: Fail) -> relax.Expr:
    if value is None:
        fail(f"{arg.name} must not be None")
    return _ARG_KINDS[arg.kind](value, fail, arg.name)


# ---------------------------------------------------------------- attributes


def normalize_dtype(value: Any, fail: Fail, name: str, optional: bool) -> str | None:
    if isinstance(value, relax.DataTypeImm):
        value = value.value
    if isinstance(value, relax.StringImm):
        value = value.value
    if value is None or value == "void" or value == "":
        if optional:
            return None
        fail(f"{name} needs a dtype, got {_literal(value)}")
    if not isinstance(value, str):
        fail(f"{name} must be a dtype string, got {_literal(value)}")
    if not dt.is_valid(value):
        fail(f"{name} has an {dt.unknown(value)}")
    return value


def _int(value: Any, fail: Fail, name: str) -> int:
    if isinstance(value, tir.IntImm) and value.dtype != "bool":
        return value.value
    if isinstance(value, relax.PrimValue):
        return _int(value.value, fail, name)
    if isinstance(value, bool) or not isinstance(value, int):
        fail(f"{name} must be an integer, got {_literal(value)}")
    return value


def _float(value: Any, fail: Fail, name: str) -> float:
    if isinstance(value, (tir.FloatImm, tir.IntImm)) and value.dtype != "bool":
        return float(value.value)
    if isinstance(value, relax.PrimValue):
        return _float(value.value, fail, name)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        fail(f"{name} must be a number, got {_literal(value)}")
    return float(value)


def _bool(value: Any, fail: Fail, name: str) -> bool:
    if isinstance(value, tir.IntImm):
        value = value.value
    if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
        return bool(value)
    fail(f"{name} must be True or False, got {_literal(value)}")


def _str(value: Any, fail: Fail, name: str) -> str:
    if isinstance(value, relax.StringImm):
        return value.value
    if not isinstance(value, str):
        fail(f"{name} must be a string, got {_literal(value)}")
    return value


def _items(value: Any) -> tuple | list:
    return value if isinstance(value, (tuple, list)) else (value,)


def _ints(value: Any, fail: Fail, name: str) -> tuple[int, ...]:
    if isinstance(value, relax.ShapeExpr):
        value = value.values
    if isinstance(value, (tuple, list)):
        return tuple(_int(v, fail, name) for v in value)
    return (_int(value, fail, name),)


def _spatial(value: Any, fail: Fail, name: str, n: int) -> tuple[int, ...]:
    """`strides=2` -> (2, 2) for a 2-d op; a list must have one entry per dim."""
    out = _ints(value, fail, name)
    if len(out) == 1 and n > 1:
        return out * n
    if len(out) != n:
        fail(f"{name} must have {n} entries, got {len(out)}")
    return out


def _padding(value: Any, fail: Fail, name: str, n: int) -> tuple[int, ...]:
    """TVM's padding rule: one value for all sides, one per dim (before = after),
    or all `2 * n` (all befores, then all afters)."""
    out = _ints(value, fail, name)
    if len(out) == 1:
        return out * (2 * n)
    if len(out) == n:
        return out * 2
    if len(out) != 2 * n:
        fail(f"{name} must have 1, {n} or {2 * n} entries, got {len(out)}")
    return out


def normalize_attr(attr: AttrDef, value: Any, fail: Fail) -> Any:
    """Validate one attribute value and bring it to its canonical Python form."""
    kind, name = attr.kind, attr.name
    if isinstance(value, relax.Expr) and not isinstance(
        value, (relax.PrimValue, relax.StringImm, relax.DataTypeImm, relax.ShapeExpr)
    ):
        fail(f"attribute {name} must be a literal, not a Relax expression")
    if kind.endswith("?"):
        if value is None:
            return None
        kind = kind[:-1]
    if kind == "dtype":
        return normalize_dtype(value, fail, name, optional=attr.kind.endswith("?"))
    if value is None:
        fail(f"{name} must not be None")
    if kind == "int":
        return _int(value, fail, name)
    if kind == "float":
        return _float(value, fail, name)
    if kind == "bool":
        return _bool(value, fail, name)
    if kind == "str":
        return _str(value, fail, name)
    if kind == "ints":
        return _ints(value, fail, name)
    if kind.startswith("ints/"):
        return _spatial(value, fail, name, int(kind[5:]))
    if kind.startswith("pad/"):
        return _padding(value, fail, name, int(kind[4:]))
    if kind == "int|ints":
        return (
            _ints(value, fail, name)
            if isinstance(value, (tuple, list))
            else _int(value, fail, name)
        )
    if kind.startswith("floats/"):
        floats = tuple(_float(v, fail, name) for v in _items(value))
        if len(floats) != int(kind[7:]):
            fail(f"{name} must have {kind[7:]} entries, got {len(floats)}")
        return floats
    if kind == "floatimm":
        return tir.FloatImm("float32", _float(value, fail, name))
    if kind == "floatimms":
        return tuple(tir.FloatImm("float32", _float(v, fail, name)) for v in _items(value))
    if kind == "dict":
        if not isinstance(value, dict):
            fail(f"{name} must be a dict, got {_literal(value)}")
        return dict(value)
    return value  # "object": kept as given (index maps, vdevices)

"""Index maps: `lambda i, j: (j // 4, i, j % 4)` as TIR expressions.

`transform_layout` and `transform_block_layout` take a Python function over
indices. `IndexMap.from_func` calls it once with symbolic stand-ins that build
TIR expressions from integer arithmetic (`+ - * // %`, unary minus), so the map
becomes data the schedule can apply, print and record in its trace. Nothing
else is evaluated: a function that does anything but arithmetic on its
arguments fails with a ScheduleError.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tvmlite.dsl import arith, tir
from tvmlite.dsl.analysis import substitute
from tvmlite.lowering.schedule.state import ScheduleError


class _Sym:
    """A stand-in for an index inside an index-map function."""

    __slots__ = ("expr",)

    def __init__(self, expr: tir.PrimExpr) -> None:
        self.expr = expr

    def _other(self, other: Any) -> tir.PrimExpr:
        if isinstance(other, _Sym):
            return other.expr
        if isinstance(other, int) and not isinstance(other, bool):
            return arith.const(other, self.expr.dtype)
        raise ScheduleError(f"index map: cannot combine an index with {other!r}")

    def __add__(self, o: Any) -> _Sym:
        return _Sym(_binary("add", self.expr, self._other(o)))

    def __radd__(self, o: Any) -> _Sym:
        return _Sym(_binary("add", self._other(o), self.expr))

    def __sub__(self, o: Any) -> _Sym:
        return _Sym(_binary("sub", self.expr, self._other(o)))

    def __rsub__(self, o: Any) -> _Sym:
        return _Sym(_binary("sub", self._other(o), self.expr))

    def __mul__(self, o: Any) -> _Sym:
        return _Sym(_binary("mul", self.expr, self._other(o)))

    def __rmul__(self, o: Any) -> _Sym:
        return _Sym(_binary("mul", self._other(o), self.expr))

    def __floordiv__(self, o: Any) -> _Sym:
        return _Sym(_binary("floordiv", self.expr, self._other(o)))

    def __rfloordiv__(self, o: Any) -> _Sym:
        return _Sym(_binary("floordiv", self._other(o), self.expr))

    def __mod__(self, o: Any) -> _Sym:
        return _Sym(_binary("floormod", self.expr, self._other(o)))

    def __rmod__(self, o: Any) -> _Sym:
        return _Sym(_binary("floormod", self._other(o), self.expr))

    def __neg__(self) -> _Sym:
        return _Sym(_binary("sub", arith.const(0, self.expr.dtype), self.expr))

    def __pos__(self) -> _Sym:
        return self


def _binary(kind: str, a: tir.PrimExpr, b: tir.PrimExpr) -> tir.PrimExpr:
    x, y = arith.as_int(a), arith.as_int(b)
    if x is not None and y is not None:
        folds = {
            "add": arith.add,
            "sub": arith.sub,
            "mul": arith.mul,
            "floordiv": arith.floordiv,
            "floormod": arith.floormod,
        }
        return folds[kind](a, b)
    return tir.BinaryOp(kind, a, b, a.dtype)


@dataclass(frozen=True, eq=False)
class IndexMap:
    """`initial_indices -> final_indices`."""

    initial_indices: tuple[tir.Var, ...]
    final_indices: tuple[tir.PrimExpr, ...]

    @staticmethod
    def from_func(func: Callable[..., Any], dtype: str = "int64") -> IndexMap:
        """Call `func` on symbolic indices of `dtype` (an IndexMap is returned as is)."""
        if isinstance(func, IndexMap):
            return func
        if not callable(func):
            raise ScheduleError(f"index map must be a function or an IndexMap, got {func!r}")
        try:
            params = list(inspect.signature(func).parameters.values())
        except (TypeError, ValueError):
            raise ScheduleError("index map: cannot read the function's parameters") from None
        names = [p.name for p in params if p.kind == p.POSITIONAL_OR_KEYWORD]
        variables = tuple(tir.Var(n, dtype) for n in names)
        try:
            result = func(*(_Sym(v) for v in variables))
        except ScheduleError:
            raise
        except Exception as e:  # noqa: BLE001 - the user's function failed on symbols
            raise ScheduleError(f"index map function failed: {type(e).__name__}: {e}") from None
        items = result if isinstance(result, (tuple, list)) else (result,)
        final = []
        for item in items:
            if isinstance(item, _Sym):
                final.append(item.expr)
            elif isinstance(item, int) and not isinstance(item, bool):
                final.append(arith.const(item, dtype))
            else:
                raise ScheduleError(f"index map returned {item!r}, not an index expression")
        return IndexMap(variables, tuple(final))

    def map(self, indices: tuple[tir.PrimExpr, ...]) -> tuple[tir.PrimExpr, ...]:
        mapping = dict(zip(self.initial_indices, indices, strict=True))
        return tuple(substitute(e, mapping) for e in self.final_indices)

    def as_lambda(self) -> str:
        """The map as Python source (`lambda i, j: (j // 4, i, j % 4)`), which
        `from_func` turns back into this map: traces print it so."""
        params = ", ".join(v.name for v in self.initial_indices)
        outs = ", ".join(_python(e) for e in self.final_indices)
        if len(self.final_indices) == 1:
            outs += ","
        return f"lambda {params}: ({outs})"


# Python spelling and precedence of the operators an index map can hold.
_OPERATORS = {
    "add": ("+", 1),
    "sub": ("-", 1),
    "mul": ("*", 2),
    "floordiv": ("//", 2),
    "floormod": ("%", 2),
}


def _python(e: tir.PrimExpr, outer: int = 0) -> str:
    if isinstance(e, tir.Var):
        return e.name
    if isinstance(e, tir.IntImm):
        return str(e.value) if e.value >= 0 or outer == 0 else f"({e.value})"
    if isinstance(e, tir.BinaryOp) and e.kind in _OPERATORS:
        symbol, level = _OPERATORS[e.kind]
        text = f"{_python(e.a, level)} {symbol} {_python(e.b, level + 1)}"
        return f"({text})" if level < outer else text
    # Anything else (an IndexMap built by hand) prints as TVMScript.
    from tvmlite.printer.names import NameTable
    from tvmlite.printer.tir_expr import ExprPrinter

    return f"({ExprPrinter('tvm-0.27', NameTable()).expr(e)})"

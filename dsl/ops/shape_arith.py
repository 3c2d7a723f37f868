"""Small symbolic arithmetic on int64 shape expressions.

Struct-info inference must build dims like `n * 12` or `(n + 1) // 2` the way
TVM's analyzer leaves them, so constants are folded, products keep their
symbolic factors first and one constant coefficient last, and a product whose
coefficient a divisor divides is divided in place. This is deliberately not a
general simplifier: anything it cannot fold stays as written.
"""

from __future__ import annotations

from tvmlite.dsl import tir

INDEX = "int64"


def const(value: int) -> tir.IntImm:
    return tir.IntImm(INDEX, int(value))


# Exact classes whose nodes `same` compares by identity (subclasses are caught by the
# generic isinstance test below).
_IDENTITY_TYPES = (tir.Var, tir.Buffer)


def same(a: object, b: object) -> bool:
    """Structural equality of expressions, vars by identity.

    Not `==`: identity nodes inherit a field-less dataclass `__eq__` from their
    base class, which makes any two vars of one class compare equal."""
    # Fast paths for what shapes are made of (this runs once per dim of every
    # inferred shape); each gives what the generic walk below would.
    ta = type(a)
    if ta is tir.IntImm:
        return (
            type(b) is tir.IntImm
            and a.dtype == b.dtype  # type: ignore[attr-defined]
            and type(a.value) is type(b.value)  # type: ignore[attr-defined]
            and a.value == b.value  # type: ignore[attr-defined]
        )
    if ta in _IDENTITY_TYPES:
        return a is b
    if ta is tuple:
        if type(b) is not tuple or len(a) != len(b):  # type: ignore[arg-type]
            return False
        for x, y in zip(a, b, strict=True):  # type: ignore[call-overload]
            if not same(x, y):
                return False
        return True
    if isinstance(a, _IDENTITY_TYPES) or isinstance(b, _IDENTITY_TYPES):
        return a is b
    if ta is not type(b):
        return False
    fields = getattr(a, "__dataclass_fields__", None)
    if fields is None:
        return a == b
    for f, d in fields.items():
        if d.compare and not same(getattr(a, f), getattr(b, f)):
            return False
    return True


def as_int(expr: object) -> int | None:
    """The integer value of an integer immediate, else None."""
    if isinstance(expr, tir.IntImm) and expr.dtype != "bool":
        return expr.value
    return None


def to_index(expr: tir.PrimExpr | int) -> tir.PrimExpr:
    """An int64 dim: Python ints and integer immediates of any width become int64."""
    if type(expr) is tir.IntImm and expr.dtype != "bool":
        value = expr.value
        if expr.dtype == INDEX and expr.span is None and type(value) is int:
            return expr  # already what `const` would build; immutable, so shared
        return tir.IntImm(INDEX, int(value))
    if isinstance(expr, bool):
        return const(int(expr))
    if isinstance(expr, int):
        return const(expr)
    value = as_int(expr)
    if value is not None:
        return const(value)
    return expr


def _binary(kind: str, a: tir.PrimExpr, b: tir.PrimExpr) -> tir.PrimExpr:
    return tir.BinaryOp(kind, a, b, getattr(a, "dtype", INDEX) or INDEX)


def _product_parts(expr: tir.PrimExpr) -> tuple[int, list[tir.PrimExpr]]:
    """(coefficient, symbolic factors) of a product tree."""
    value = as_int(expr)
    if value is not None:
        return value, []
    if isinstance(expr, tir.BinaryOp) and expr.kind == "mul":
        ca, fa = _product_parts(expr.a)
        cb, fb = _product_parts(expr.b)
        return ca * cb, fa + fb
    return 1, [expr]


def _build_product(coef: int, factors: list[tir.PrimExpr]) -> tir.PrimExpr:
    if coef == 0 or not factors:
        return const(coef)
    out = factors[0]
    for f in factors[1:]:
        out = _binary("mul", out, f)
    return out if coef == 1 else _binary("mul", out, const(coef))


def mul(a: tir.PrimExpr, b: tir.PrimExpr) -> tir.PrimExpr:
    a, b = to_index(a), to_index(b)
    va, vb = as_int(a), as_int(b)
    if va is not None and vb is not None:
        return const(va * vb)  # what the general case folds two constants to
    ca, fa = _product_parts(a)
    cb, fb = _product_parts(b)
    return _build_product(ca * cb, fa + fb)


def product(dims: tuple[tir.PrimExpr, ...] | list[tir.PrimExpr]) -> tir.PrimExpr:
    total = 1
    for d in dims:
        if type(d) is tir.IntImm:  # `as_int(to_index(d))` without building the copy
            value = None if d.dtype == "bool" else int(d.value)
        else:
            value = as_int(to_index(d))
        if value is None:
            break
        total *= value
    else:
        return const(total)  # all constant: what the fold below gives, without the steps
    out: tir.PrimExpr = const(1)
    for d in dims:
        out = mul(out, d)
    return out


def ordered_product(dims: tuple[tir.PrimExpr, ...] | list[tir.PrimExpr]) -> tir.PrimExpr:
    """The product of `dims` multiplied left to right, as TVM's `*=` builds it: constants
    fold with their neighbours, a 1 drops, nothing is reordered (`n * 3 * m`)."""
    out: tir.PrimExpr = const(1)
    for d in dims:
        d = to_index(d)
        va, vb = as_int(out), as_int(d)
        if va is not None and vb is not None:
            out = const(va * vb)
        elif va == 1:
            out = d
        elif vb != 1:
            out = _binary("mul", out, d)
    return out


def _offset(x: tir.PrimExpr, c: int) -> tir.PrimExpr:
    """`x + c`, merging into an existing constant offset (`(n + 2) - 3` -> `n - 1`)."""
    if c == 0:
        return x
    if isinstance(x, tir.BinaryOp) and x.kind in ("add", "sub"):
        inner = as_int(x.b)
        if inner is not None:
            return _offset(x.a, c + (inner if x.kind == "add" else -inner))
    return _binary("add", x, const(c)) if c > 0 else _binary("sub", x, const(-c))


def add(a: tir.PrimExpr, b: tir.PrimExpr) -> tir.PrimExpr:
    a, b = to_index(a), to_index(b)
    va, vb = as_int(a), as_int(b)
    if va is not None and vb is not None:
        return const(va + vb)
    if vb is not None:
        return _offset(a, vb)
    if va is not None:
        return _offset(b, va)
    return _binary("add", a, b)


def sub(a: tir.PrimExpr, b: tir.PrimExpr) -> tir.PrimExpr:
    a, b = to_index(a), to_index(b)
    va, vb = as_int(a), as_int(b)
    if va is not None and vb is not None:
        return const(va - vb)
    if vb is not None:
        return _offset(a, -vb)
    if same(a, b):
        return const(0)
    # `(x + y) - x` cancels, which keeps split and concat dims readable.
    if isinstance(a, tir.BinaryOp) and a.kind == "add":
        if same(a.a, b):
            return a.b
        if same(a.b, b):
            return a.a
    return _binary("sub", a, b)


def floordiv(a: tir.PrimExpr, b: tir.PrimExpr) -> tir.PrimExpr:
    a, b = to_index(a), to_index(b)
    va, vb = as_int(a), as_int(b)
    if vb == 1:
        return a
    if va is not None and vb is not None and vb != 0:
        return const(va // vb)
    if vb is not None and vb > 0:
        coef, factors = _product_parts(a)
        if factors and coef % vb == 0:
            return _build_product(coef // vb, factors)
        offset = _constant_offset(a)
        if offset is not None and offset[1] % vb == 0:  # `(n - 2) // 2` -> `n // 2 - 1`
            return _offset(floordiv(offset[0], b), offset[1] // vb)
    if vb is None:  # `n * 6 // n` -> 6, as TVM's analyzer cancels (a reshape's -1)
        quotient = _cancel(a, b)
        if quotient is not None:
            return quotient
    return _binary("floordiv", a, b)


def _constant_offset(expr: tir.PrimExpr) -> tuple[tir.PrimExpr, int] | None:
    """(x, c) of `x + c` or `x - c` with a constant c, else None."""
    if isinstance(expr, tir.BinaryOp) and expr.kind in ("add", "sub"):
        c = as_int(expr.b)
        if c is not None:
            return expr.a, c if expr.kind == "add" else -c
    return None


def _cancel(a: tir.PrimExpr, b: tir.PrimExpr) -> tir.PrimExpr | None:
    """`a // b` when b's symbolic factors all divide a's and its coefficient a's."""
    ca, fa = _product_parts(a)
    cb, fb = _product_parts(b)
    if cb <= 0 or ca % cb:
        return None
    rest = list(fa)
    for factor in fb:
        at = next((i for i, f in enumerate(rest) if same(f, factor)), None)
        if at is None:
            return None
        del rest[at]
    return _build_product(ca // cb, rest)


def floormod(a: tir.PrimExpr, b: tir.PrimExpr) -> tir.PrimExpr:
    a, b = to_index(a), to_index(b)
    va, vb = as_int(a), as_int(b)
    if vb == 1:
        return const(0)
    if va is not None and vb is not None and vb != 0:
        return const(va % vb)
    return _binary("floormod", a, b)


def ceildiv(a: tir.PrimExpr, b: tir.PrimExpr) -> tir.PrimExpr:
    vb = as_int(to_index(b))
    if vb == 1:
        return to_index(a)
    if vb is not None and vb > 0:  # `(c * 4) // 4` rounded up is exact: c
        coef, factors = _product_parts(to_index(a))
        if factors and coef % vb == 0:
            return _build_product(coef // vb, factors)
    return floordiv(add(a, sub(b, const(1))), b)


def minimum(a: tir.PrimExpr, b: tir.PrimExpr) -> tir.PrimExpr:
    a, b = to_index(a), to_index(b)
    va, vb = as_int(a), as_int(b)
    if va is not None and vb is not None:
        return const(min(va, vb))
    if same(a, b):
        return a
    return _binary("min", a, b)


def maximum(a: tir.PrimExpr, b: tir.PrimExpr) -> tir.PrimExpr:
    a, b = to_index(a), to_index(b)
    va, vb = as_int(a), as_int(b)
    if va is not None and vb is not None:
        return const(max(va, vb))
    if same(a, b):
        return a
    return _binary("max", a, b)


def equal(a: tir.PrimExpr, b: tir.PrimExpr) -> bool:
    """Provably equal: same constant, or the same expression (vars by identity)."""
    # Fast paths for the common dims, giving what the general test below would.
    ta, tb = type(a), type(b)
    if ta is tir.Var or tb is tir.Var:
        return a is b
    if ta is tir.IntImm and tb is tir.IntImm and a.dtype != "bool" and b.dtype != "bool":  # type: ignore[attr-defined]
        return a.value == b.value  # type: ignore[attr-defined]
    a, b = to_index(a), to_index(b)
    if same(a, b):
        return True
    va, vb = as_int(a), as_int(b)
    return va is not None and va == vb


def differ(a: tir.PrimExpr, b: tir.PrimExpr) -> bool:
    """Provably different: two different constants."""
    va, vb = as_int(to_index(a)), as_int(to_index(b))
    return va is not None and vb is not None and va != vb


def show(expr: tir.PrimExpr) -> str:
    """A short human form of a dim for error messages."""
    value = as_int(expr)
    if value is not None:
        return str(value)
    if isinstance(expr, tir.Var):
        return expr.name
    if isinstance(expr, tir.BinaryOp):
        symbols = {"add": "+", "sub": "-", "mul": "*", "floordiv": "//", "floormod": "%"}
        if expr.kind in symbols:
            return f"({show(expr.a)} {symbols[expr.kind]} {show(expr.b)})"
        return f"T.{expr.kind}({show(expr.a)}, {show(expr.b)})"
    return type(expr).__name__


def show_shape(shape: tuple[tir.PrimExpr, ...]) -> str:
    return "(" + ", ".join(show(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"

"""SimplifySymbolicIndices: divisions by symbolic sizes in buffer indices, taken
apart with the ranges of the block iteration variables.

A reshape over a symbolic size reads its source through the flat position:
`A[(i * n + j) // n, (i * n + j) % n]` for a copy of an `(m, n)` buffer. With
`0 <= j < n` that is `A[i, j]`, but the canonical simplifier (TVM's forms, which
schedules print) only divides by constants, so a fused kernel of a dynamic model
kept one or two integer divisions by a runtime value per element and per index,
and its inner loop could not be vectorized (10-40x the static kernel's time).

Each index of a block's body that divides by a non-constant is rewritten as a
polynomial over the block's iteration variables and the function's sizes:
`(q * d + r) // d` is `q + r // d` and `(q * d + r) % d` is `r % d` for any
non-zero `d` (exact in floor division), and `r // d` is 0, `r % d` is `r`, when
`0 <= r <= d - 1` follows from the ranges (iteration variables from 0 to their
extent less one, sizes not negative). A division by zero only goes away, never
appears. Indices with no symbolic division are left as they are, so static
kernels lower exactly as before.
"""

from __future__ import annotations

from dataclasses import dataclass

from tvmlite.dsl import arith, tir
from tvmlite.dsl.tir_functor import StmtExprVisitor
from tvmlite.dsl.tir_mutator import StmtExprMutator, replace
from tvmlite.lowering.transform import PrimFuncPass

# A product of atoms (vars, or sub-expressions the rules cannot open) in the
# order they were met, and a polynomial: monomials with their coefficients.
Monomial = tuple[tir.PrimExpr, ...]
Poly = dict[Monomial, int]


def _add(a: Poly, b: Poly, sign: int = 1) -> Poly:
    out = dict(a)
    for mono, c in b.items():
        out[mono] = out.get(mono, 0) + sign * c
        if out[mono] == 0:
            del out[mono]
    return out


def _mul(a: Poly, b: Poly) -> Poly:
    out: Poly = {}
    for ma, ca in a.items():
        for mb, cb in b.items():
            out = _add(out, {ma + mb: ca * cb})
    return out


def _quotient(mono: Monomial, divisor: Monomial) -> Monomial | None:
    """`mono` without the atoms of `divisor`, None when it lacks one."""
    rest = list(mono)
    for atom in divisor:
        if atom not in rest:
            return None
        rest.remove(atom)
    return tuple(rest)


class _Indices:
    """Index polynomials under the ranges of the enclosing blocks' iteration
    variables; `sizes` are the vars known not to be negative."""

    def __init__(self, sizes: set[tir.Var]) -> None:
        self.sizes = sizes
        self.extents: dict[tir.Var, tir.PrimExpr] = {}
        self.order: dict[tir.PrimExpr, int] = {}

    def simplify(self, e: tir.PrimExpr) -> tir.PrimExpr:
        if not _divides_symbolically(e):
            return e
        poly = self.poly(e)
        return e if poly is None else self.expr(poly, e.dtype)

    # ------------------------------------------------------------ to and from
    def poly(self, e: tir.PrimExpr) -> Poly | None:
        if isinstance(e, tir.IntImm):
            return {(): e.value} if e.value else {}
        if isinstance(e, tir.BinaryOp) and e.kind in ("add", "sub", "mul"):
            a, b = self.poly(e.a), self.poly(e.b)
            if a is None or b is None:
                return None
            return _mul(a, b) if e.kind == "mul" else _add(a, b, 1 if e.kind == "add" else -1)
        if isinstance(e, tir.BinaryOp) and e.kind in ("floordiv", "floormod"):
            return self.divide(e)
        if e.dtype in ("int32", "int64"):
            return self.atom(e)
        return None

    def atom(self, e: tir.PrimExpr) -> Poly:
        self.order.setdefault(e, len(self.order))
        return {(e,): 1}

    def expr(self, poly: Poly, dtype: str) -> tir.PrimExpr:
        out: tir.PrimExpr = arith.const(0, dtype)
        for mono, c in poly.items():
            atoms = sorted(mono, key=self.order.__getitem__)
            term = atoms[0] if atoms else arith.const(c, dtype)
            for atom in atoms[1:]:
                term = arith.mul(term, atom)
            if atoms and c != 1:
                term = arith.mul(term, arith.const(c, dtype))
            out = arith.add(out, term)
        return out

    # ------------------------------------------------------------ the rules
    def divide(self, e: tir.BinaryOp) -> Poly | None:
        num, den = self.poly(e.a), self.poly(e.b)
        if num is None or den is None:
            return None
        if len(den) != 1:  # not a monomial: kept whole, its parts simplified
            return self.atom(replace(e, a=self.expr(num, e.dtype), b=self.expr(den, e.dtype)))
        ((dmono, dcoef),) = den.items()
        if dcoef <= 0:
            return None
        whole: Poly = {}
        rest: Poly = {}
        for mono, c in num.items():
            q = _quotient(mono, dmono)
            if q is not None and c % dcoef == 0:
                whole[q] = whole.get(q, 0) + c // dcoef
            else:
                rest[mono] = c
        below = self.within(rest, den)
        if e.kind == "floormod":
            if below or not rest:
                return rest
            left = self.expr(rest, e.dtype)
            return self.atom(arith.floormod(left, self.expr(den, e.dtype)))
        if below or not rest:
            return whole
        left = self.expr(rest, e.dtype)
        return _add(whole, self.atom(arith.floordiv(left, self.expr(den, e.dtype))))

    def within(self, r: Poly, d: Poly) -> bool:
        """Whether `0 <= r <= d - 1` follows from the ranges."""
        top = self.maximum(r)
        return top is not None and _all_nonnegative(_add(_add(d, {(): -1}), top, -1))

    def maximum(self, p: Poly) -> Poly | None:
        """An upper bound of `p` over the ranges, with the sizes left symbolic,
        when `p` is a sum of products of atoms not negative with coefficients not
        negative (then it is not negative either); None otherwise."""
        out: Poly = {}
        for mono, c in p.items():
            if c < 0:
                return None
            term: Poly = {(): c}
            for atom in mono:
                top = self.atom_maximum(atom)
                if top is None:
                    return None
                term = _mul(term, top)
            out = _add(out, term)
        return out

    def atom_maximum(self, atom: tir.PrimExpr) -> Poly | None:
        """The largest value of an atom known not to be negative: an iteration
        variable, a size, or a constant division or remainder of such atoms."""
        if atom in self.extents:
            extent = self.poly(self.extents[atom])
            return None if extent is None else _add(extent, {(): -1})
        if atom in self.sizes:
            return {(atom,): 1}
        if not (isinstance(atom, tir.BinaryOp) and isinstance(atom.b, tir.IntImm)):
            return None
        c = atom.b.value
        inner = self.poly(atom.a)
        top = None if inner is None or c <= 0 else self.maximum(inner)
        if top is None:
            return None
        if atom.kind == "floormod":
            return {(): c - 1}
        if atom.kind == "floordiv" and set(top) <= {()}:
            return {(): top.get((), 0) // c}
        return None


def _all_nonnegative(p: Poly) -> bool:
    """A polynomial in sizes (not negative) with no negative coefficient."""
    return all(c >= 0 for c in p.values())


def _divides_symbolically(e: tir.PrimExpr) -> bool:
    found = _SymbolicDivision()
    found.visit_expr(e)
    return found.any


class _SymbolicDivision(StmtExprVisitor):
    def __init__(self) -> None:
        self.any = False

    def visit_BinaryOp(self, e: tir.BinaryOp) -> None:
        if e.kind in ("floordiv", "floormod") and not isinstance(e.b, tir.IntImm):
            self.any = True
        super().visit_BinaryOp(e)


class _Rewriter(StmtExprMutator):
    def __init__(self, sizes: set[tir.Var]) -> None:
        super().__init__()
        self.indices = _Indices(sizes)

    def visit_Block(self, s: tir.Block) -> tir.Stmt:
        extents = self.indices.extents
        saved = dict(extents)
        for iv in s.iter_vars:
            if isinstance(iv.dom.min, tir.IntImm) and iv.dom.min.value == 0:
                extents[iv.var] = iv.dom.extent
        try:
            return super().visit_Block(s)
        finally:
            extents.clear()
            extents.update(saved)

    def _indices(self, indices: tuple[tir.PrimExpr, ...]) -> tuple[tir.PrimExpr, ...]:
        return tuple(self.indices.simplify(self.visit_expr(i)) for i in indices)

    def visit_BufferLoad(self, e: tir.BufferLoad) -> tir.PrimExpr:
        return replace(e, buffer=self.visit_buffer(e.buffer), indices=self._indices(e.indices))

    def visit_BufferStore(self, s: tir.BufferStore) -> tir.Stmt:
        return replace(
            s,
            buffer=self.visit_buffer(s.buffer),
            value=self.visit_expr(s.value),
            indices=self._indices(s.indices),
        )


@dataclass(frozen=True)
class SimplifySymbolicIndices(PrimFuncPass):
    """Symbolic divisions of block indices taken apart (see the module docstring)."""

    name: str = "SimplifySymbolicIndices"

    def transform(self, func: tir.PrimFunc) -> tir.PrimFunc:
        sizes = {d for _, b in func.buffer_map for d in b.shape if isinstance(d, tir.Var)}
        return _Rewriter(sizes).visit_prim_func(func)

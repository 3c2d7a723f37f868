"""Drawing well-formed TIR: scalar expressions, statements and prim functions.

The generator keeps the scope it is building (vars, buffers, enclosing loops),
so every use is of something defined, every index has the buffer's rank, and
every operator gets operands of the dtypes it needs. It builds the forms the
parser builds (a root block around bodies with blocks, buffer data vars typed
with their element dtype), so that printing and parsing back is the identity.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from tvmlite.dsl import dtype as dt
from tvmlite.dsl import tir
from tvmlite.dsl.module import TVM027
from tvmlite.testing import tir_runnable as runnable
from tvmlite.testing.draws import BOOLS, ints, pick
from tvmlite.testing.options import Options

Draw = Callable[[st.SearchStrategy[Any]], Any]

# Few names, so that several vars share a name hint and the printer must de-duplicate.
VAR_NAMES = ("i", "j", "x", "n", "v", "T", "lv")
BUFFER_NAMES = ("A", "B", "buf", "A")
LOOP_KINDS = (tir.SERIAL, tir.PARALLEL, tir.VECTORIZED, tir.UNROLLED)
INT_ARITH = ("add", "sub", "mul", "floordiv", "floormod", "div", "mod", "min", "max")
FLOAT_ARITH = ("add", "sub", "mul", "div", "min", "max")
TRUE = tir.IntImm("bool", 1)


def int_range(dtype: str) -> tuple[int, int]:
    bits = dt.bits(dtype)
    if dt.is_bool(dtype):
        return 0, 1
    if dt.is_uint(dtype):
        return 0, 2**bits - 1
    return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1


@functools.lru_cache(maxsize=64)
def literals(dtype: str) -> st.SearchStrategy[tir.PrimExpr]:
    """Immediates of `dtype`, edge cases first: extremes, -0.0, inf, nan. Cached
    like `draws.ints`: an immutable strategy, built once per dtype."""
    if dt.is_float(dtype):
        width = {16: 16, 32: 32}.get(dt.bits(dtype), 64)
        edges = st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5, math.inf, -math.inf, math.nan])
        values = st.one_of(edges, st.floats(width=width))
        return values.map(lambda v: tir.FloatImm(dtype, v))
    lo, hi = int_range(dtype)
    edges = st.sampled_from(sorted({lo, hi, 0, 1, max(lo, -1)}))
    return st.one_of(edges, ints(lo, hi)).map(lambda v: tir.IntImm(dtype, v))


@dataclass
class Scope:
    """What is defined where the generator stands."""

    vars: list[tir.Var] = field(default_factory=list)
    buffers: list[tir.Buffer] = field(default_factory=list)
    loops: list[tir.For] = field(default_factory=list)  # enclosing, outermost first
    in_block: bool = False
    func_vars: tuple[tir.Var, ...] = ()  # params and shape vars: visible inside blocks
    # Runnable programs only: the values an int var can take (loop and iter vars),
    # and whether `break`/`continue` may appear (inside a serial loop, not a block).
    ranges: dict[tir.Var, tuple[int, int]] = field(default_factory=dict)
    breakable: bool = False

    def child(self) -> Scope:
        return Scope(
            list(self.vars),
            list(self.buffers),
            list(self.loops),
            self.in_block,
            self.func_vars,
            dict(self.ranges),
            self.breakable,
        )


class TIRGen:
    """Draws TIR for one prim function (or one expression) under `options`."""

    def __init__(self, draw: Draw, options: Options) -> None:
        self.draw = draw
        self.options = options
        self.dtypes = tuple(d for d in options.dtypes if d not in ("handle", "void"))
        self.numeric = tuple(d for d in self.dtypes if not dt.is_bool(d)) or ("int32",)
        self.saw_block = False
        self.named = 0

    def name(self, pool: tuple[str, ...] = VAR_NAMES) -> str:
        base = pick(self.draw, pool)
        if not self.options.unique_names:
            return base
        self.named += 1
        return f"{base}{self.named}"

    def has(self, construct: str) -> bool:
        return self.options.has(construct)

    # ------------------------------------------------------------ expressions

    def expr(self, dtype: str, scope: Scope, depth: int) -> tir.PrimExpr:
        leaves = ["literal"]
        if any(v.dtype == dtype for v in scope.vars):
            leaves += ["var", "var"]
        if any(b.dtype == dtype for b in scope.buffers):
            leaves.append("load")
        kinds = list(leaves)
        if depth > 0:
            kinds += ["compare", "logic", "not"] if dt.is_bool(dtype) else ["arith", "arith"]
            if self.has("select"):
                kinds += ["select", "if_then_else"]
            if self.has("cast"):
                kinds.append("cast")
            if self.options.runnable and self.has("intrinsics"):
                kinds.append("intrinsic")
        kind = pick(self.draw, kinds)
        return getattr(self, "_" + kind)(dtype, scope, depth - 1)

    def _literal(self, dtype: str, scope: Scope, depth: int) -> tir.PrimExpr:
        return self.draw(literals(dtype))

    def _var(self, dtype: str, scope: Scope, depth: int) -> tir.PrimExpr:
        return pick(self.draw, [v for v in scope.vars if v.dtype == dtype])

    def _load(self, dtype: str, scope: Scope, depth: int) -> tir.PrimExpr:
        buffer = pick(self.draw, [b for b in scope.buffers if b.dtype == dtype])
        return tir.BufferLoad(buffer, self.indices(buffer, scope, depth), dtype)

    def _arith(self, dtype: str, scope: Scope, depth: int) -> tir.PrimExpr:
        ops = FLOAT_ARITH if dt.is_float(dtype) else INT_ARITH
        kind = pick(self.draw, ops)
        a, b = self.expr(dtype, scope, depth), self.expr(dtype, scope, depth)
        return tir.BinaryOp(kind, a, b, dtype)

    def _compare(self, dtype: str, scope: Scope, depth: int) -> tir.PrimExpr:
        operand = pick(self.draw, self.numeric)
        kind = pick(self.draw, tir.COMPARE_OPS)
        a, b = self.expr(operand, scope, depth), self.expr(operand, scope, depth)
        return tir.BinaryOp(kind, a, b, "bool")

    def _logic(self, dtype: str, scope: Scope, depth: int) -> tir.PrimExpr:
        kind = pick(self.draw, tir.LOGIC_OPS)
        return tir.BinaryOp(
            kind, self.expr("bool", scope, depth), self.expr("bool", scope, depth), "bool"
        )

    def _not(self, dtype: str, scope: Scope, depth: int) -> tir.PrimExpr:
        return tir.Not(self.expr("bool", scope, depth))

    def _select(self, dtype: str, scope: Scope, depth: int) -> tir.PrimExpr:
        cond = self.expr("bool", scope, depth)
        return tir.Select(
            cond, self.expr(dtype, scope, depth), self.expr(dtype, scope, depth), dtype
        )

    def _if_then_else(self, dtype: str, scope: Scope, depth: int) -> tir.PrimExpr:
        args = (self.expr("bool", scope, depth), self.expr(dtype, scope, depth))
        return tir.Call(dtype, "if_then_else", (*args, self.expr(dtype, scope, depth)))

    def _cast(self, dtype: str, scope: Scope, depth: int) -> tir.PrimExpr:
        source = pick(self.draw, [d for d in self.dtypes if d != dtype] or [dtype])
        value = self.expr(source, scope, depth)
        if self.options.runnable:
            return runnable.cast_in_range(value, dtype)
        return tir.Cast(dtype, value)

    def _intrinsic(self, dtype: str, scope: Scope, depth: int) -> tir.PrimExpr:
        return runnable.intrinsic(self, dtype, scope, depth)

    def index(self, scope: Scope, depth: int, extent: int | None = None) -> tir.PrimExpr:
        """An int32 index: a literal in range, a var, or arithmetic over them. Inside
        `[0, extent)` when that is given (runnable programs)."""
        if extent is not None:
            return runnable.index(self, scope, depth, extent)
        if any(v.dtype == "int32" for v in scope.vars) and self.draw(BOOLS):
            base = self._var("int32", scope, 0)
            if depth > 0 and self.draw(BOOLS):
                kind = pick(self.draw, ("add", "mul", "floordiv", "floormod"))
                step = tir.IntImm("int32", self.draw(ints(2, 4)))
                return tir.BinaryOp(kind, base, step, "int32")
            return base
        return tir.IntImm("int32", self.draw(ints(0, 3)))

    def indices(self, buffer: tir.Buffer, scope: Scope, depth: int) -> tuple[tir.PrimExpr, ...]:
        if self.options.runnable:
            return tuple(self.index(scope, depth, runnable.extent(d)) for d in buffer.shape)
        return tuple(self.index(scope, depth) for _ in buffer.shape)

    # ------------------------------------------------------------ statements

    def seq(self, scope: Scope, depth: int) -> tir.Stmt:
        """One to `max_stmts` statements; a Bind or LetStmt scopes over what follows."""
        count = self.draw(ints(1, self.options.max_stmts))
        items: list[tir.Stmt] = []
        for index in range(count):
            last = index == count - 1
            kinds = ["store", "store"]
            if depth > 0:
                kinds += self._compound_kinds(scope)
            if self.has("bind") and not last:
                kinds.append("bind")
            if scope.breakable:
                kinds.append("jump")
            kind = pick(self.draw, kinds)
            if kind == "let":  # the body is the rest of the sequence
                var = tir.Var(self.name(), pick(self.draw, self.numeric))
                value = self.expr(var.dtype, scope, depth)
                scope = scope.child()
                scope.vars.append(var)
                rest = (
                    self.seq(scope, depth - 1)
                    if last
                    else self._rest(scope, depth, count - index - 1)
                )
                items.append(tir.LetStmt(var, value, rest))
                break
            if kind == "bind":
                var = tir.Var(self.name(), pick(self.draw, self.numeric))
                items.append(tir.Bind(var, self.expr(var.dtype, scope, depth)))
                scope = scope.child()
                scope.vars.append(var)
                continue
            items.append(getattr(self, "_" + kind)(scope, depth - 1))
        flat: list[tir.Stmt] = []
        for item in items:
            flat.extend(item.seq if isinstance(item, tir.SeqStmt) else (item,))
        return flat[0] if len(flat) == 1 else tir.SeqStmt(tuple(flat))

    def _rest(self, scope: Scope, depth: int, count: int) -> tir.Stmt:
        saved = self.options
        self.options = _with_max_stmts(saved, count)
        try:
            return self.seq(scope, depth)
        finally:
            self.options = saved

    def _compound_kinds(self, scope: Scope) -> list[str]:
        kinds = []
        for construct, kind in (
            ("loops", "loop"),
            ("grid", "grid"),
            ("if", "if"),
            ("while", "while"),
            ("let", "let"),
        ):
            if self.has(construct):
                kinds.append(kind)
        if self.has("blocks") and scope.loops and not scope.in_block:
            kinds += ["block", "block"]
        return kinds

    def _store(self, scope: Scope, depth: int) -> tir.Stmt:
        if not scope.buffers:
            return tir.Evaluate(tir.IntImm("int32", 1))
        buffer = pick(self.draw, scope.buffers)
        value = self.expr(buffer.dtype, scope, max(depth, 1))
        return tir.BufferStore(buffer, value, self.indices(buffer, scope, 1))

    def _loop(self, scope: Scope, depth: int) -> tir.Stmt:
        kind = pick(self.draw, LOOP_KINDS)
        var = tir.Var(self.name(), "int32")
        start = pick(self.draw, (0, 0, 1, 3))
        extent: tir.PrimExpr = tir.IntImm("int32", self.draw(ints(1, 8)))
        symbolic = [v for v in scope.vars if v.dtype == "int32" and v not in _loop_vars(scope)]
        if start == 0 and symbolic and self.draw(BOOLS):
            extent = pick(self.draw, symbolic)
            if self.options.runnable:
                extent = runnable.few_steps(extent)
        return self._for_body(var, tir.IntImm("int32", start), extent, kind, scope, depth)

    def _grid(self, scope: Scope, depth: int) -> tir.Stmt:
        loop_vars = [tir.Var(self.name(), "int32") for _ in range(self.draw(ints(2, 3)))]
        extents = [tir.IntImm("int32", self.draw(ints(1, 6))) for _ in loop_vars]
        inner = scope.child()
        inner.breakable = self.options.runnable
        loops = []
        for var, extent in zip(loop_vars, extents, strict=True):
            loop = tir.For(var, tir.IntImm("int32", 0), extent, tir.SERIAL, tir.Evaluate(TRUE))
            inner.vars.append(var)
            inner.loops.append(loop)
            inner.ranges[var] = (0, extent.value - 1)
            loops.append(loop)
        body = self.seq(inner, depth)
        for var, extent in reversed(list(zip(loop_vars, extents, strict=True))):
            body = tir.For(var, tir.IntImm("int32", 0), extent, tir.SERIAL, body)
        return body

    def _for_body(
        self,
        var: tir.Var,
        start: tir.PrimExpr,
        extent: tir.PrimExpr,
        kind: str,
        scope: Scope,
        depth: int,
    ) -> tir.Stmt:
        inner = scope.child()
        inner.vars.append(var)
        inner.loops.append(tir.For(var, start, extent, kind, tir.Evaluate(TRUE)))
        if self.options.runnable:
            inner.ranges[var] = runnable.loop_range(start, extent)
            inner.breakable = kind in (tir.SERIAL, tir.UNROLLED)  # a block resets it
        return tir.For(var, start, extent, kind, self.seq(inner, depth))

    def _if(self, scope: Scope, depth: int) -> tir.Stmt:
        cond = self.expr("bool", scope, 1)
        then = self.seq(scope.child(), depth)
        orelse = self.seq(scope.child(), depth) if self.draw(BOOLS) else None
        return tir.IfThenElse(cond, then, orelse)

    def _while(self, scope: Scope, depth: int) -> tir.Stmt:
        if self.options.runnable:
            return runnable.bounded_while(self, scope, depth)
        return tir.While(self.expr("bool", scope, 1), self.seq(scope.child(), depth))

    def _jump(self, scope: Scope, depth: int) -> tir.Stmt:
        return runnable.jump(self, scope)

    def _block(self, scope: Scope, depth: int) -> tir.Stmt:
        from tvmlite.testing.tir_func import draw_block  # blocks live with functions

        self.saw_block = True
        return draw_block(self, scope, depth)


def _loop_vars(scope: Scope) -> list[tir.Var]:
    return [loop.loop_var for loop in scope.loops]


def _with_max_stmts(options: Options, count: int) -> Options:
    from dataclasses import replace

    return replace(options, max_stmts=max(1, count))


def is_modern(options: Options) -> bool:
    return options.dialect == TVM027

"""The knobs of the strategies: sizes, dtypes, symbolic shapes, dialect, and which
constructs to build. One frozen value passed down, so a test reads its settings
in one place."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from tvmlite.dsl.module import CLASSIC, DIALECTS, TVM027

__all__ = ["ALL_CONSTRUCTS", "DEFAULT_DTYPES", "Options", "make_options"]

DEFAULT_DTYPES = (
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint32",
    "float16",
    "float32",
    "float64",
)

# TIR constructs, then Relax ones. `bind` and `return` exist only in the 0.27 dialect
# (classic spells a flat binding as a LetStmt) and are skipped when printing classic.
TIR_CONSTRUCTS = frozenset(
    {
        "loops",  # serial/parallel/vectorized/unroll, nonzero min
        "grid",  # perfectly nested serial loops from 0 (printed as T.grid)
        "blocks",  # T.block with iter vars, reads/writes, T.where, T.init
        "if",
        "while",
        "let",  # LetStmt
        "bind",  # 0.27 flat binding
        "alloc",  # root-block T.alloc_buffer
        "strides",  # buffer params with explicit strides
        "select",  # T.Select / T.if_then_else
        "cast",
        "intrinsics",  # exact math and bit intrinsics (T.sqrt, T.popcount, ...); runnable only
    }
)
RELAX_CONSTRUCTS = frozenset(
    {
        "dataflow",
        "ops",  # registry operators
        "tuples",  # tuples and tuple indexing
        "match_cast",
        "relax_if",
        "constants",
        "call_tir",  # only in modules
    }
)
ALL_CONSTRUCTS = TIR_CONSTRUCTS | RELAX_CONSTRUCTS


@dataclass(frozen=True)
class Options:
    """`max_depth` bounds nesting (loops, ifs, expressions); `max_stmts` the length
    of a statement sequence or binding block. `dtypes` are the scalar and element
    dtypes to draw from; `symbolic` allows symbolic dims (`n = T.int64()`, `"n"`).
    `dialect` is the spelling the program is meant for: constructs only 0.27 can
    express are built only for it. Names are drawn from a small pool so that the
    printer must de-duplicate them, unless `unique_names`.

    `runnable` draws programs that can also be run and give one defined answer:
    static shapes, indices inside the buffer, loops and `while`s of few steps
    (a counter bounds every `while`), allocations written before they are read,
    float-to-int casts only of values the target holds, shifts below the bit
    width. Signed add/sub/mul may still wrap: see `tvmlite.testing.reference`."""

    max_depth: int = 2
    max_stmts: int = 3
    dtypes: tuple[str, ...] = DEFAULT_DTYPES
    symbolic: bool = True
    constructs: frozenset[str] = field(default=ALL_CONSTRUCTS)
    dialect: str = CLASSIC
    unique_names: bool = False  # no two vars share a name hint (no de-duplication)
    runnable: bool = False  # programs with one defined result (see above)

    def has(self, construct: str) -> bool:
        if construct == "bind" and self.dialect != TVM027:
            return False
        return construct in self.constructs


def make_options(
    options: Options | None = None,
    *,
    include: frozenset[str] | set[str] | None = None,
    exclude: frozenset[str] | set[str] | tuple[str, ...] = (),
    **changes: Any,
) -> Options:
    """Options from keyword knobs: `include` replaces the construct set, `exclude`
    removes from it, other keywords are `Options` fields."""
    base = options or Options()
    constructs = frozenset(include) if include is not None else base.constructs
    unknown = (constructs | frozenset(exclude)) - ALL_CONSTRUCTS
    if unknown:
        raise ValueError(f"unknown constructs {sorted(unknown)}; known: {sorted(ALL_CONSTRUCTS)}")
    if changes.get("dialect", base.dialect) not in DIALECTS:
        raise ValueError(f"dialect must be one of {DIALECTS}")
    return replace(base, constructs=constructs - frozenset(exclude), **changes)

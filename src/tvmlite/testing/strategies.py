"""Hypothesis strategies for well-formed tvmlite IR, for property-testing passes,
printers and parsers.

    from tvmlite.testing import strategies as tst

    @given(tst.ir_modules())
    def test_my_pass_keeps_modules_printable(mod):
        out = MyPass().run(mod)
        assert tvmlite.structural_equal(tvmlite.parse(out.script()), out)

The IR is built first and printed second (never the reverse), so a program is
well-formed by construction: every var is defined before use, every operator
call has shape-consistent arguments and the struct info the registry infers.
Every generated program parses back from its printed text.

Knobs, as keywords of every strategy: `max_depth`, `max_stmts`, `dtypes`,
`symbolic` (symbolic dims), `dialect` ("classic" or "tvm-0.27": 0.27-only
constructs such as flat `Bind` are built only for it), `include` / `exclude`
(construct names from `ALL_CONSTRUCTS`), or a whole `options=Options(...)`.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from tvmlite.dsl import relax, tir
from tvmlite.dsl.module import IRModule
from tvmlite.testing.draws import BOOLS, ints
from tvmlite.testing.options import ALL_CONSTRUCTS, DEFAULT_DTYPES, Options, make_options
from tvmlite.testing.relax_gen import RelaxGen, draw_relax_function, struct_info_strategy
from tvmlite.testing.tir_func import draw_prim_func
from tvmlite.testing.tir_gen import Scope, TIRGen

__all__ = [
    "ALL_CONSTRUCTS",
    "DEFAULT_DTYPES",
    "Options",
    "ir_modules",
    "prim_funcs",
    "relax_functions",
    "struct_infos",
    "tir_exprs",
]


def tir_exprs(
    dtype: str = "int32",
    variables: tuple[tir.Var, ...] = (),
    **knobs: Any,
) -> st.SearchStrategy[tir.PrimExpr]:
    """Scalar expressions of `dtype` over `variables` (free vars the caller defines),
    literals (extremes, -0.0, inf, nan), arithmetic, comparisons, logic, casts and
    selects, nested up to `max_depth`."""
    options = make_options(**knobs)

    @st.composite
    def build(draw: Any) -> tir.PrimExpr:
        gen = TIRGen(draw, options)
        return gen.expr(dtype, Scope(vars=list(variables)), options.max_depth)

    return build()


def prim_funcs(**knobs: Any) -> st.SearchStrategy[tir.PrimFunc]:
    """Public prim functions (`@T.prim_func`) named `main`."""
    options = make_options(**knobs)

    @st.composite
    def build(draw: Any) -> tir.PrimFunc:
        return draw_prim_func(draw, options)

    return build()


def relax_functions(**knobs: Any) -> st.SearchStrategy[relax.Function]:
    """Public graph functions (`@R.function`) named `main`, without calls to other
    functions (a lone function has no module to call into)."""
    knobs = dict(knobs)
    exclude = (*knobs.pop("exclude", ()), "call_tir")
    options = make_options(**knobs, exclude=exclude)

    @st.composite
    def build(draw: Any) -> relax.Function:
        return draw_relax_function(draw, options, "main", public=True)

    return build()


def struct_infos(**knobs: Any) -> st.SearchStrategy[relax.StructInfo]:
    """Struct info: tensors (static, symbolic or unknown shape), shapes, prims,
    tuples of them, objects."""
    options = make_options(**knobs)

    @st.composite
    def build(draw: Any) -> relax.StructInfo:
        return draw(struct_info_strategy(RelaxGen(draw, options), options.max_depth))

    return build()


def ir_modules(**knobs: Any) -> st.SearchStrategy[IRModule]:
    """Modules mixing prim and graph functions; graph functions call the prim
    functions through `R.call_tir` and each other directly. `dialect` is set on the
    module, so it prints in the spelling it was built for."""
    options = make_options(**knobs)

    @st.composite
    def build(draw: Any) -> IRModule:
        functions: dict[str, Any] = {}
        for index in range(draw(ints(0, 1))):
            name = f"prim{index}"
            functions[name] = draw_prim_func(draw, options, name, public=draw(BOOLS))
        callees: dict[str, Any] = {}
        names = draw(st.lists(st.sampled_from(("main", "helper", "f")), max_size=2, unique=True))
        if not names and not functions:
            names = ["main"]
        for name in sorted(names, key=_main_last):
            func = draw_relax_function(
                draw, options, name, public=draw(BOOLS), module=functions, callees=callees
            )
            functions[name] = func
            callees[name] = func
        return IRModule(functions=functions, dialect=options.dialect)

    return build()


def _main_last(name: str) -> tuple[bool, str]:
    return (name == "main", name)

"""Printing and parsing are inverse: parse(print(m)) is m, printing is a fixed
point, the two dialects convert into each other without loss, and the
structural hash agrees with structural equality.

Programs come from `tvmlite.testing.strategies` (built as IR, then printed). A
failure found here is fixed and then kept as an `@example`.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from hypothesis import example, given

import tvmlite
from tvmlite.dsl import dtype as dt
from tvmlite.dsl import relax, tir
from tvmlite.dsl.dialect import tvm027_only
from tvmlite.dsl.module import CLASSIC, TVM027, IRModule
from tvmlite.printer import script
from tvmlite.testing import strategies as tst


def _handle_named_like_a_duplicate() -> tir.PrimFunc:
    """Regression: a handle param printed `var_buf` whose buffer is de-duplicated
    to `buf_1` came back as `var_buf_1` on the second print (printer/tir.py)."""
    inline = tir.Buffer("buf", tir.Var("buf", "handle", ("bool", "global")), "bool", (_i32(1),))
    strided = tir.Buffer(
        "buf",
        tir.Var("buf", "handle", ("bool", "global")),
        "bool",
        (_i32(1),),
        strides=(tir.IntImm("int64", 1),),
    )
    handles = (tir.Var("buf", "handle"), tir.Var("buf", "handle"))
    store = tir.BufferStore(strided, tir.IntImm("bool", 0), (_i32(0),))
    return tir.PrimFunc(
        handles,
        tuple(zip(handles, (strided, inline), strict=True)),
        store,
        attrs=(("global_symbol", "main"),),
    )


def _i32(value: int) -> tir.IntImm:
    return tir.IntImm("int32", value)


def check_roundtrip(obj: Any, dialect: str) -> None:
    text = script(obj, dialect)
    back = tvmlite.parse(text)
    assert tvmlite.structural_equal(back, obj), text
    assert script(back, dialect) == text  # a fixed point


@given(tst.prim_funcs())
@example(_handle_named_like_a_duplicate())
def test_prim_func_roundtrip_classic(func: tir.PrimFunc) -> None:
    check_roundtrip(func, CLASSIC)


@given(tst.prim_funcs(dialect=TVM027))
def test_prim_func_roundtrip_027(func: tir.PrimFunc) -> None:
    check_roundtrip(func, TVM027)


@given(tst.relax_functions())
def test_relax_function_roundtrip_classic(func: relax.Function) -> None:
    check_roundtrip(func, CLASSIC)


@given(tst.relax_functions(dialect=TVM027))
def test_relax_function_roundtrip_027(func: relax.Function) -> None:
    check_roundtrip(func, TVM027)


@given(tst.ir_modules())
def test_module_roundtrip_classic(mod: IRModule) -> None:
    check_roundtrip(mod, CLASSIC)


@given(tst.ir_modules(dialect=TVM027))
def test_module_roundtrip_027(mod: IRModule) -> None:
    check_roundtrip(mod, TVM027)


@given(tst.ir_modules(unique_names=True))
def test_dialect_conversion_is_lossless(mod: IRModule) -> None:
    """classic -> 0.27 -> classic gives the module back, and its classic text. The
    text needs distinct names: the dialects declare names in different orders
    (0.27 types every buffer param inline), so de-duplication suffixes (`A_1`)
    land on different vars and become their names after parsing."""
    assert not tvm027_only(mod)
    classic_text = script(mod, CLASSIC)
    modern = tvmlite.parse(script(mod, TVM027))
    assert tvmlite.structural_equal(classic_form(modern), classic_form(mod))
    back = tvmlite.parse(script(modern, CLASSIC))
    assert tvmlite.structural_equal(back, mod)
    assert script(back, CLASSIC) == classic_text


@given(tst.ir_modules(dialect=TVM027, exclude=("bind",)))
def test_dialect_conversion_from_027(mod: IRModule) -> None:
    """0.27 -> classic -> 0.27 for what classic can spell, names shared or not (the
    `s_tir` flag of a block-free function is the one thing left that it cannot)."""
    classic = tvmlite.parse(script(mod, CLASSIC))
    assert tvmlite.structural_equal(classic_form(classic), classic_form(mod))
    back = tvmlite.parse(script(classic, TVM027))
    if tvm027_only(mod):
        assert tvmlite.structural_equal(classic_form(back), classic_form(mod))
    else:
        assert tvmlite.structural_equal(back, mod)


@given(tst.ir_modules())
def test_hash_agrees_with_equality(mod: IRModule) -> None:
    back = tvmlite.parse(mod.script())
    assert tvmlite.structural_equal(back, mod)
    assert tvmlite.structural_hash(back) == tvmlite.structural_hash(mod)
    mutated = mutate(mod)
    assert not tvmlite.structural_equal(mutated, mod)
    assert tvmlite.structural_hash(mutated) != tvmlite.structural_hash(mod)


# ---------------------------------------------------------------- helpers


def classic_form(obj: Any) -> Any:
    """`obj` with what only records the dialect made neutral: the 0.27 `s_tir`
    flag and `tirx.` attribute prefixes (stored as written, see
    docs/frontend-contracts.md)."""
    if isinstance(obj, IRModule):
        functions = {name: classic_form(f) for name, f in obj.functions.items()}
        return dataclasses.replace(obj, functions=functions, dialect=None)
    if isinstance(obj, tir.PrimFunc | relax.Function):
        attrs = tuple((_classic_key(k), v) for k, v in obj.attrs)
        if isinstance(obj, tir.PrimFunc):
            return dataclasses.replace(obj, attrs=attrs, s_tir=False)
        return dataclasses.replace(obj, attrs=attrs)
    return obj


def _classic_key(key: str) -> str:
    return "tir." + key.removeprefix("tirx.") if key.startswith("tirx.") else key


def mutate(mod: IRModule) -> IRModule:
    """A copy of `mod` with one literal changed (the first found), else with an
    extra attribute on its first function."""
    changed = _bump(mod)
    if changed is not None:
        return changed
    name, func = next(iter(mod.functions.items()))
    functions = dict(mod.functions)
    functions[name] = dataclasses.replace(func, attrs=(*func.attrs, ("mutated", True)))
    return dataclasses.replace(mod, functions=functions)


def _bump(node: Any) -> Any:
    """`node` rebuilt with its first literal changed; None when it has none. Vars and
    buffers are identities shared by reference, so the walk does not enter them."""
    if isinstance(node, tir.IntImm):
        value = 1 - node.value if node.dtype == "bool" else node.value + 1
        if dt.range_error(node.dtype, value) is not None:  # the dtype's largest value
            value = node.value - 1
        return dataclasses.replace(node, value=value)
    if isinstance(node, tir.FloatImm):
        value = node.value
        new = 0.0 if not math.isfinite(value) else (-value if value != 0 else 1.0)
        return dataclasses.replace(node, value=new)
    if isinstance(node, tir.Var | tir.Buffer | relax.Var):
        return None
    if isinstance(node, IRModule):
        for name, func in node.functions.items():
            changed = _bump(func)
            if changed is not None:
                return dataclasses.replace(node, functions={**node.functions, name: changed})
        return None
    if isinstance(node, tuple):
        for index, item in enumerate(node):
            changed = _bump(item)
            if changed is not None:
                return (*node[:index], changed, *node[index + 1 :])
        return None
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        for field in dataclasses.fields(node):
            if field.name == "span" or not field.compare:
                continue
            changed = _bump(getattr(node, field.name))
            if changed is not None:
                return dataclasses.replace(node, **{field.name: changed})
    return None

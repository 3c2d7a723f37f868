"""The static memory plan of graph functions (lowering/codegen/memory_plan.py):
dead intermediates share storage, escaping and still-live values never do, and
the numbers a function computes do not change."""

from __future__ import annotations

import numpy as np
import pytest

import tvmlite
from tvmlite.dsl import relax
from tvmlite.lowering.build import lower
from tvmlite.lowering.codegen.generate import generate_llvm
from tvmlite.lowering.codegen.llvm_host import SMALL_FUNCTION
from tvmlite.lowering.codegen.llvm_host_module import SMALL_MODULE
from tvmlite.lowering.codegen.memory_plan import MemoryPlan, plan_memory
from tvmlite.lowering.target import Target

HEAD = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((64, 64), "float32"), y: R.Tensor((64, 64), "float32")) -> {ret}:
"""
T = 'R.Tensor((64, 64), "float32")'
BYTES = 64 * 64 * 4


def build_and_plan(body: str, ret: str = T) -> tuple[tvmlite.Executable, MemoryPlan, dict]:
    text = HEAD.format(ret=ret) + "".join(f"        {line}\n" for line in body.splitlines())
    mod = tvmlite.parse(text)
    # The default pipeline does not fuse: every intermediate is a kernel output.
    func = tvmlite.lower(mod)["main"]
    ex = tvmlite.build(mod)
    plan = plan_memory(func)
    names = {v.name: v for block in func.body.blocks for bd in block.bindings for v in [bd.var]}
    return ex, plan, names


def storage(plan: MemoryPlan, names: dict, name: str) -> int | None:
    found = plan.storage.get(names[name])
    return None if found is None else found[0]


def inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    return (
        rng.standard_normal((64, 64), dtype="float32"),
        rng.standard_normal((64, 64), dtype="float32"),
    )


def test_dead_intermediates_share_storage():
    ex, plan, names = build_and_plan(
        "a = R.add(x, y)\n"
        "b = R.multiply(a, y)\n"  # a dies here
        "c = R.subtract(b, x)\n"  # b dies here: c may take a's bytes
        "d = R.multiply(c, c)\n"  # c dies here: d may take b's bytes
        "e = R.add(d, y)\n"
        "return e"
    )
    a, b, c, d = (storage(plan, names, n) for n in "abcd")
    assert None not in (a, b, c, d) and storage(plan, names, "e") is None  # e is the result
    assert a != b and c == a and d == b
    assert plan.sizes == (BYTES, BYTES) and plan.planned_bytes == 4 * BYTES
    x, y = inputs()
    np.testing.assert_allclose(ex["main"](x, y), (((x + y) * y - x) ** 2) + y, rtol=1e-4, atol=1e-4)


def test_escaping_values_are_never_overwritten():
    ex, plan, names = build_and_plan(
        "a = R.add(x, y)\n"
        "t = (a, x)\n"
        "b = R.multiply(a, y)\n"
        "c = R.exp(b)\n"
        "d = R.subtract(c, x)\n"
        "e = R.multiply(d, y)\n"
        "u = t[0]\n"
        "return (u, e)",
        ret=f"R.Tuple({T}, {T})",
    )
    assert storage(plan, names, "a") is None  # returned through a tuple and an item
    x, y = inputs()
    first, second = ex["main"](x, y)
    np.testing.assert_allclose(first, x + y, rtol=1e-6)
    np.testing.assert_allclose(second, (np.exp((x + y) * y) - x) * y, rtol=1e-4, atol=1e-4)


def test_a_value_read_through_a_tuple_later_stays_live():
    ex, plan, names = build_and_plan(
        "a = R.add(x, y)\n"
        "t = (a, y)\n"
        "b = R.multiply(x, y)\n"
        "c = R.exp(b)\n"
        "d = R.subtract(c, x)\n"
        "u = t[0]\n"
        "e = R.add(u, d)\n"
        "return e"
    )
    a = storage(plan, names, "a")
    assert a is not None
    assert a not in {storage(plan, names, n) for n in "bcd"}  # a is live until e
    x, y = inputs()
    np.testing.assert_allclose(
        ex["main"](x, y), (x + y) + (np.exp(x * y) - x), rtol=1e-4, atol=1e-4
    )


def test_an_output_never_shares_with_its_own_inputs():
    _, plan, names = build_and_plan("a = R.add(x, y)\nb = R.exp(a)\nc = R.exp(b)\nreturn c")
    assert storage(plan, names, "a") != storage(plan, names, "b")


def test_dynamic_shapes_are_allocated_not_planned():
    text = """
@R.function
def main(x: R.Tensor(("n", 64), "float32"), y: R.Tensor((64, 64), "float32")) -> R.Tensor(("n", 64), "float32"):
    a = R.matmul(x, y)
    b = R.exp(a)
    c = R.add(b, x)
    d = R.multiply(c, x)
    return d
"""
    mod = tvmlite.parse(text)
    func = tvmlite.lower(mod)["main"]
    assert isinstance(func, relax.Function) and plan_memory(func).sizes == ()
    ex = tvmlite.build(mod)
    x, y = inputs()
    for rows in (1, 17, 64):
        want = (np.exp(x[:rows] @ y) + x[:rows]) * x[:rows]
        np.testing.assert_allclose(ex["main"](x[:rows], y), want, rtol=1e-4, atol=1e-4)


def test_mlp_numerics_with_the_plan():
    """An MLP (default schedules: tiled, parallel matmuls): the intermediates are
    planned and the result is NumPy's, call after call."""
    text = """
@R.function
def main(x: R.Tensor((32, 128), "float32"), w1: R.Tensor((128, 256), "float32"),
         b1: R.Tensor((256,), "float32"), w2: R.Tensor((256, 256), "float32"),
         b2: R.Tensor((256,), "float32"), w3: R.Tensor((256, 10), "float32")) -> R.Tensor((32, 10), "float32"):
    h1 = R.nn.relu(R.add(R.matmul(x, w1), b1))
    h2 = R.nn.relu(R.add(R.matmul(h1, w2), b2))
    out = R.matmul(h2, w3)
    return out
"""
    mod = tvmlite.parse(text)
    plan = plan_memory(tvmlite.lower(mod)["main"])
    assert plan.sizes and plan.arena_bytes < plan.planned_bytes
    ex = tvmlite.build(mod)
    rng = np.random.default_rng(3)
    shapes = [(32, 128), (128, 256), (256,), (256, 256), (256,), (256, 10)]
    x, w1, b1, w2, b2, w3 = (rng.standard_normal(s, dtype="float32") for s in shapes)
    h1 = np.maximum(x @ w1 + b1, 0)
    h2 = np.maximum(h1 @ w2 + b2, 0)
    for _ in range(3):  # the arena is reused across calls
        np.testing.assert_allclose(ex["main"](x, w1, b1, w2, b2, w3), h2 @ w3, rtol=1e-4, atol=1e-4)


def chain_module(n: int, form: str) -> tuple[str, np.ndarray, np.ndarray]:
    """`main` of `n` planned 64x64 intermediates in host code of `form`: code (a
    small function in a small module), program (a static function among many),
    or code with steps (a large function with a parameter of symbolic shape)."""
    extra = ', z: R.Tensor(("m",), "float32")' if form == "steps" else ""
    lines = ["v0 = R.add(x, y)"]
    for i in range(1, n):
        op = ("R.multiply", "R.subtract", "R.add")[i % 3]
        lines.append(f"v{i} = {op}(v{i - 1}, y)")
    body = "".join(f"        {line}\n" for line in lines)
    fillers = "".join(
        f"    @R.function\n    def f{k}(a: {T}) -> {T}:\n        b = R.add(a, a)\n        return b\n"
        for k in range(SMALL_MODULE if form == "program" else 0)
    )
    text = (
        "@I.ir_module\nclass Module:\n    @R.function\n"
        f"    def main(x: {T}, y: {T}{extra}) -> {T}:\n{body}        return v{n - 1}\n" + fillers
    )
    x, y = inputs()
    want = x + y
    for i in range(1, n):
        want = (want * y, want - y, want + y)[i % 3]
    return text, (x, y), want


@pytest.mark.parametrize("form", ["code", "program", "steps"])
def test_every_form_of_host_code_places_the_plan(form: str) -> None:
    n = 8 if form == "code" else SMALL_FUNCTION + 8
    text, (x, y), want = chain_module(n, form)
    mod = tvmlite.parse(text)
    plan = plan_memory(tvmlite.lower(mod)["main"])
    assert len(plan.sizes) == 2 and len(plan.offsets) == n - 1  # two storages in turn
    host = str(generate_llvm(lower(mod, Target.of("llvm"), "minimal")).module)
    program = 'call i32 @"tvmlite.run_program"' in host
    assert program == (form == "program")
    placed_by_code = 'call ptr @"tvmlite.place_slot"' in host
    assert placed_by_code == (form == "code")  # else records that a helper runs
    ex = tvmlite.build(mod, cache=False)
    extra = (np.zeros(3, "float32"),) if form == "steps" else ()
    for _ in range(3):  # the arena is reused across calls
        np.testing.assert_allclose(ex["main"](x, y, *extra), want, rtol=1e-4, atol=1e-4)

"""R.call_tir_inplace and R.call_inplace_packed build and run (issue 14 item 2):
the outputs `inplace_indices` names are those arguments, written where they are
(no allocation, no copy); run-time checks refuse an in-place argument sharing
memory with another argument; constants are never written. Each holds in both
forms of host code an in-place call can be in: one optimized function (a small
module) and code among runs of steps (a module of many functions)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tvmlite
from tvmlite.lowering.codegen.llvm_host_module import SMALL_MODULE
from tvmlite.lowering.codegen.memory_plan import plan_memory
from tvmlite.runtime.registry import remove_global_func

HEAD = (
    "from tvm.script import ir as I\nfrom tvm.script import tir as T\n"
    "from tvm.script import relax as R\n\n"
)
KERNELS = """@I.ir_module
class Module:
    @T.prim_func
    def add_into(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("a"):
                vi = T.axis.spatial(4, i)
                a[vi] = a[vi] + b[vi]

    @T.prim_func
    def add(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32"), c: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("c"):
                vi = T.axis.spatial(4, i)
                c[vi] = a[vi] + b[vi]

    @T.prim_func
    def add_into_and_diff(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32"), d: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("a"):
                vi = T.axis.spatial(4, i)
                d[vi] = a[vi] - b[vi]
                a[vi] = a[vi] + b[vi]
"""
T4 = 'R.Tensor((4,), "float32")'


FILLER = f"""
    @R.function
    def filler{{0}}(a: {T4}) -> {T4}:
        b = R.add(a, a)
        return b
"""
FORMS = ("optimized", "steps")


def module(main: str, ret: str = T4, form: str = "optimized") -> tvmlite.IRModule:
    """`main(x, y)` over the kernels; in the "steps" form among enough other
    functions that the module is not small (its kernel calls are steps)."""
    body = "\n".join("        " + line for line in main.strip().splitlines())
    sig = f"    @R.function\n    def main(x: {T4}, y: {T4}) -> {ret}:\n"
    fillers = "".join(FILLER.format(k) for k in range(SMALL_MODULE)) if form == "steps" else ""
    return tvmlite.parse(HEAD + KERNELS + "\n" + sig + body + "\n" + fillers)


def build(mod: tvmlite.IRModule, form: str) -> tvmlite.Executable:
    ex = tvmlite.build(mod, cache=False)
    steps = re.search(r'call i32 @"?tvmlite\.run_steps', ex.llvm_ir()) is not None
    assert steps == (form == "steps")
    return ex


def allocations(ex: object) -> int:
    return len(re.findall(r"call .*@tvmlite_alloc_tensor", ex.llvm_ir()))


X, Y = np.arange(4, dtype="float32"), np.full(4, 10, "float32")


@pytest.mark.parametrize("form", FORMS)
def test_call_tir_inplace_writes_its_argument(form: str) -> None:
    mod = module(
        'a = R.call_tir(Module.add, (x, y), out_sinfo=R.Tensor((4,), "float32"))\n'
        "z = R.call_tir_inplace(Module.add_into, (a, y), inplace_indices=[0], "
        'out_sinfo=R.Tensor((4,), "float32"))\nreturn z',
        form=form,
    )
    ex = build(mod, form)
    x = X.copy()
    np.testing.assert_array_equal(ex["main"](x, Y), X + 2 * Y)
    np.testing.assert_array_equal(x, X)  # only the intermediate was written
    # The in-place call allocates nothing: the one allocation in code is a's (a
    # step's output among steps); z is a, returned without a copy.
    assert allocations(ex) == (1 if form == "optimized" else 0)
    if form == "steps":
        return
    plain = module(
        'a = R.call_tir(Module.add, (x, y), out_sinfo=R.Tensor((4,), "float32"))\n'
        'z = R.call_tir(Module.add, (a, y), out_sinfo=R.Tensor((4,), "float32"))\nreturn z'
    )
    assert allocations(tvmlite.build(plain, cache=False)) == 2


@pytest.mark.parametrize("form", FORMS)
def test_an_inplace_result_keeps_its_arguments_planned_storage(form: str) -> None:
    """`a` is an intermediate the memory plan places; `z` is `a` written in place,
    read two bindings later. `b` is made after `a`'s last mention but while `z`
    lives: it must get other bytes, or `b`'s kernel would overwrite `z`."""
    mod = module(
        'a = R.call_tir(Module.add, (x, y), out_sinfo=R.Tensor((4,), "float32"))\n'
        "z = R.call_tir_inplace(Module.add_into, (a, y), inplace_indices=[0], "
        'out_sinfo=R.Tensor((4,), "float32"))\n'
        'b = R.call_tir(Module.add, (x, x), out_sinfo=R.Tensor((4,), "float32"))\n'
        'c = R.call_tir(Module.add, (z, b), out_sinfo=R.Tensor((4,), "float32"))\nreturn c',
        form=form,
    )
    func = tvmlite.lower(mod)["main"]
    plan = plan_memory(func)
    names = {bd.var.name: bd.var for block in func.body.blocks for bd in block.bindings}
    assert plan.storage[names["a"]] != plan.storage[names["b"]]
    np.testing.assert_array_equal(build(mod, form)["main"](X, Y), X + 2 * Y + 2 * X)


@pytest.mark.parametrize("form", FORMS)
def test_an_inplace_parameter_is_the_callers_array(form: str) -> None:
    mod = module(
        "z = R.call_tir_inplace(Module.add_into, (x, y), inplace_indices=[0], "
        'out_sinfo=R.Tensor((4,), "float32"))\nreturn z',
        form=form,
    )
    x = X.copy()
    out = build(mod, form)["main"](x, Y)
    np.testing.assert_array_equal(x, X + Y)  # written where it is, as in TVM
    np.testing.assert_array_equal(out, X + Y)


@pytest.mark.parametrize("form", FORMS)
def test_inplace_and_fresh_outputs_together(form: str) -> None:
    mod = module(
        "z = R.call_tir_inplace(Module.add_into_and_diff, (x, y), inplace_indices=[0, -1], "
        'out_sinfo=[R.Tensor((4,), "float32"), R.Tensor((4,), "float32")])\nreturn z',
        f"R.Tuple({T4}, {T4})",
        form,
    )
    x = X.copy()
    total, diff = build(mod, form)["main"](x, Y)
    np.testing.assert_array_equal(total, X + Y)
    np.testing.assert_array_equal(diff, X - Y)


@pytest.mark.parametrize("form", FORMS)
def test_inplace_argument_sharing_memory_is_refused_at_run_time(form: str) -> None:
    mod = module(
        "z = R.call_tir_inplace(Module.add_into, (x, y), inplace_indices=[0], "
        'out_sinfo=R.Tensor((4,), "float32"))\nreturn z',
        form=form,
    )
    ex = build(mod, form)
    x = X.copy()
    with pytest.raises(tvmlite.TVMLiteError, match="in-place argument 0 shares its memory with"):
        ex["main"](x, x)


@pytest.mark.parametrize("form", FORMS)
def test_inplace_constant_is_refused(form: str) -> None:
    mod = module(
        'c = R.const(np_c, "float32")\n'
        "z = R.call_tir_inplace(Module.add_into, (c, y), inplace_indices=[0], "
        'out_sinfo=R.Tensor((4,), "float32"))\nreturn z'.replace("np_c", "[1.0, 2.0, 3.0, 4.0]"),
        form=form,
    )
    with pytest.raises(tvmlite.TVMLiteError, match="in-place argument 0 is a constant"):
        tvmlite.build(mod, cache=False)


@pytest.fixture
def add_into_packed():  # noqa: ANN201 - a fixture generator
    def add_into(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        a += b
        return a

    tvmlite.register_func("test.add_into", add_into, override=True)
    yield
    remove_global_func("test.add_into")


@pytest.mark.parametrize("form", FORMS)
def test_call_inplace_packed(add_into_packed: None, form: str) -> None:
    mod = module(
        'a = R.call_tir(Module.add, (x, y), out_sinfo=R.Tensor((4,), "float32"))\n'
        'z = R.call_inplace_packed("test.add_into", a, y, inplace_indices=[0], '
        'sinfo_args=R.Tensor((4,), "float32"))\n'
        'w = R.call_tir(Module.add, (z, a), out_sinfo=R.Tensor((4,), "float32"))\nreturn w',
        form=form,
    )
    ex = build(mod, form)
    # z is a: the packed function wrote a, so w = 2 * (x + 2y)
    np.testing.assert_array_equal(ex["main"](X.copy(), Y), 2 * (X + 2 * Y))
    with pytest.raises(tvmlite.TVMLiteError, match="shares its memory with argument 1"):
        bad = module(
            'z = R.call_inplace_packed("test.add_into", x, y, inplace_indices=[0], '
            'sinfo_args=R.Tensor((4,), "float32"))\nreturn z',
            form=form,
        )
        x = X.copy()
        build(bad, form)["main"](x, x)

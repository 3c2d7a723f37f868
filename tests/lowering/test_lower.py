"""One pipeline: `tvmlite.lower` runs every pass `build` runs before code
generation, TIR lowering included, and PassContext instruments, `disabled_pass`
and `verify` see every step; `build` is code generation of `lower`'s result."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np
import pytest

import tvmlite
from tvmlite.dsl import tir
from tvmlite.dsl.tir_functor import StmtExprVisitor
from tvmlite.dsl.tir_mutator import StmtExprMutator, replace
from tvmlite.lowering import transform
from tvmlite.lowering.target import register_target_kind, unregister_target_kind
from tvmlite.tir import Schedule, ScheduleError
from tvmlite.transform import LegalizeOps, PassContext, PassTimingInstrument, PrintAfterAll

MLP = """from tvm.script import ir as I
from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4, 8), "float32"), w: R.Tensor((8, 6), "float32"),
             b: R.Tensor((6,), "float32")) -> R.Tensor((4, 6), "float32"):
        with R.dataflow():
            lv = R.matmul(x, w)
            lv1 = R.add(lv, b)
            gv = R.sigmoid(lv1)
            R.output(gv)
        return gv
"""
TIR_STEPS = ["LowerBlocks", "CheckStaticBounds", "FlattenBuffers", "LowerIntrinsics", "Simplify"]


def inputs() -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.standard_normal(s).astype("float32") for s in ((4, 8), (8, 6), (6,))]


def want(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-(x @ w + b)))


class _Shape(StmtExprVisitor):
    """Blocks, parallel loops, and the number of indices of every buffer access."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks = 0
        self.parallel_loops = 0
        self.ranks: set[int] = set()

    def visit_For(self, s: tir.For) -> None:
        self.parallel_loops += s.kind == "parallel"
        super().visit_For(s)

    def visit_BlockRealize(self, s: tir.BlockRealize) -> None:
        self.blocks += 1
        super().visit_BlockRealize(s)

    def visit_BufferLoad(self, e: tir.BufferLoad) -> None:
        self.ranks.add(len(e.indices))
        super().visit_BufferLoad(e)

    def visit_BufferStore(self, s: tir.BufferStore) -> None:
        self.ranks.add(len(s.indices))
        super().visit_BufferStore(s)


def shape_of(func: tir.PrimFunc) -> _Shape:
    found = _Shape()
    found.visit_stmt(func.body)
    return found


@pytest.mark.parametrize("pipeline", ["minimal", "default"])
def test_lower_returns_lowered_prim_functions_and_build_is_its_codegen(pipeline: str) -> None:
    mod = tvmlite.parse(MLP)
    lowered = tvmlite.lower(mod, "llvm", pipeline)
    prims = [f for f in lowered.functions.values() if isinstance(f, tir.PrimFunc)]
    assert prims and "main" in lowered
    for func in prims:
        found = shape_of(func)
        assert found.blocks == 0 and found.ranks == {1}
        assert not any(c.op == "sigmoid" for c in _calls(func))  # LowerIntrinsics ran
    # Lowering a lowered module changes nothing; building it builds the same code.
    assert tvmlite.structural_equal(tvmlite.lower(lowered, "llvm", pipeline), lowered)
    for source in (mod, lowered):
        ex = tvmlite.build(source, pipeline=pipeline, cache=False)
        np.testing.assert_allclose(ex["main"](*inputs()), want(*inputs()), rtol=1e-5)


def _calls(func: tir.PrimFunc) -> list[tir.Call]:
    class Calls(StmtExprVisitor):
        def __init__(self) -> None:
            super().__init__()
            self.found: list[tir.Call] = []

        def visit_Call(self, e: tir.Call) -> None:
            self.found.append(e)
            super().visit_Call(e)

    calls = Calls()
    calls.visit_stmt(func.body)
    return calls.found


def test_timing_sees_every_pass_and_every_stage_of_a_build() -> None:
    timing = PassTimingInstrument()
    with PassContext(instruments=[timing]):
        tvmlite.build(tvmlite.parse(MLP), cache=False)
    names = [name for _, name, _ in timing.records]
    order = ["LegalizeOps", "LowerTIR", *TIR_STEPS, "codegen", "LLVM optimization"]
    order += ["machine code", "link"]
    lower_tir = names.index("LowerTIR")
    positions = [names.index(n, lower_tir if n in TIR_STEPS else 0) for n in order]
    assert positions == sorted(positions), names
    # CheckStaticBounds also runs at the schedule point, on the loops as written.
    assert names.index("schedule") < names.index("CheckStaticBounds") < lower_tir
    depth = {name: d for d, name, _ in timing.records}
    assert all(depth[n] == depth["LowerTIR"] + 1 for n in TIR_STEPS)
    assert all(seconds >= 0 for _, _, seconds in timing.records)


def test_checked_builds_run_the_bound_checks_as_a_pass() -> None:
    timing = PassTimingInstrument()
    with PassContext(instruments=[timing], config={"tir.instrument_bound_checkers": True}):
        tvmlite.lower(tvmlite.parse(MLP))
    names = [name for _, name, _ in timing.records]
    assert names.index("LowerBlocks") < names.index("InstrumentBoundCheckers")
    assert names.index("InstrumentBoundCheckers") < names.index("FlattenBuffers")


def test_print_after_all_prints_after_tir_passes(capsys: pytest.CaptureFixture[str]) -> None:
    with PassContext(instruments=[PrintAfterAll()]):
        tvmlite.lower(tvmlite.parse(MLP))
    out = capsys.readouterr().out
    for name in TIR_STEPS:
        assert f"# IR after {name}\n" in out
    after_blocks = out.split("# IR after LowerBlocks\n")[1].split("# IR after")[0]
    assert "T.block" not in after_blocks and "T.prim_func" in after_blocks


def test_disabled_tir_passes_do_not_run() -> None:
    timing = PassTimingInstrument()
    with PassContext(instruments=[timing], disabled_pass=["Simplify"]):
        lowered = tvmlite.lower(tvmlite.parse(MLP))
    assert "Simplify" not in [name for _, name, _ in timing.records]
    assert all(shape_of(f).blocks == 0 for f in lowered.functions.values() if _prim(f))
    with PassContext(disabled_pass=["LowerBlocks"]):
        with pytest.raises(tvmlite.TVMLiteError, match="reached codegen: run LowerBlocks"):
            tvmlite.build(tvmlite.parse(MLP), cache=False)


def _prim(f: object) -> bool:
    return isinstance(f, tir.PrimFunc)


def test_verify_checks_the_module_after_every_tir_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    verified: list[str] = []
    real = transform.verify

    class Names(PrintAfterAll):
        def run_after_pass(self, mod: tvmlite.IRModule, info: transform.PassInfo) -> None:
            verified.append(info.name)

    def check(mod: tvmlite.IRModule, after: str | None = None) -> None:
        verified.append("verified")
        real(mod, after)

    monkeypatch.setattr(transform, "verify", check)
    with PassContext(instruments=[Names()], verify=True):
        tvmlite.lower(tvmlite.parse(MLP))
    for name in TIR_STEPS:
        assert verified[verified.index(name) + 1] == "verified"


def test_tir_passes_are_public_and_name_the_failing_function() -> None:
    from tvmlite.transform import FlattenBuffers, LowerBlocks

    good = tvmlite.parse(
        "from tvm.script import tir as T\n\n"
        "@T.prim_func\n"
        'def f(A: T.Buffer((4, 4), "float32")):\n'
        "    for i in range(4):\n"
        "        A[i, 0] = T.float32(0)\n"
    )

    class DropIndex(StmtExprMutator):  # IR no parser accepts: one index for two dims
        def visit_BufferStore(self, s: tir.BufferStore) -> tir.Stmt:
            return replace(s, indices=s.indices[:1])

    bad = DropIndex().visit_prim_func(good)
    with pytest.raises(tvmlite.TVMLiteError, match="cannot compile prim function 'f'.*2 dims"):
        FlattenBuffers()(LowerBlocks()(tvmlite.IRModule({"f": bad})))


def parallel_outer(mod: tvmlite.IRModule) -> tvmlite.IRModule:
    """A small schedule written with tvmlite.tir.Schedule: the outer loop of every
    block parallel (unless it carries a reduction), the function then marked
    `tir.is_scheduled`; functions already marked are left alone."""
    sch = Schedule(mod)
    todo = [n for n, f in mod.functions.items() if _prim(f) and not f.attr("tir.is_scheduled")]
    for name in todo:
        sch.work_on(name)
        for block in sch.get_child_blocks(sch.get_sblock("root")):
            with contextlib.suppress(ScheduleError):
                sch.parallel(sch.get_loops(block)[0])

    def mark(name: str, f: object) -> object:
        return replace(f, attrs=(*f.attrs, ("tir.is_scheduled", True))) if name in todo else f

    return transform.map_functions(sch.mod, mark)


@pytest.fixture
def scheduling_kind() -> Iterator[list[tvmlite.IRModule]]:
    """A target kind with `parallel_outer` at the schedule point; the list gets
    every module the point is given."""
    seen: list[tvmlite.IRModule] = []

    def schedule(mod: tvmlite.IRModule) -> tvmlite.IRModule:
        seen.append(mod)
        return parallel_outer(mod)

    register_target_kind(
        "parallel", passes={"schedule": (lambda t: transform.ModulePass(schedule, "Parallel"),)}
    )
    yield seen
    unregister_target_kind("parallel")


@pytest.mark.parametrize("pipeline", ["minimal", "default", "user"])
def test_the_schedule_point_sits_between_fusion_and_tir_lowering(
    scheduling_kind: list[tvmlite.IRModule], pipeline: str
) -> None:
    chosen = [LegalizeOps()] if pipeline == "user" else pipeline
    timing = PassTimingInstrument()
    with PassContext(instruments=[timing]):
        lowered = tvmlite.lower(tvmlite.parse(MLP), "llvm -libs=parallel", chosen)
    names = [name for _, name, _ in timing.records]
    before = ["LegalizeOps", "TIRToRuntime"] + (["FuseTIR"] if pipeline == "default" else [])
    assert max(names.index(n) for n in before) < names.index("schedule")
    # The schedule point checks static bounds on the loops as written, then runs the kinds' passes.
    assert (
        names.index("schedule") + 2
        == names.index("CheckStaticBounds") + 1
        == names.index("Parallel")
    )
    assert names.index("Parallel") < names.index("LowerTIR")
    depth = {name: d for d, name, _ in timing.records}
    assert depth["Parallel"] == depth["schedule"] + 1 == depth["LowerTIR"] + 1
    # The schedule point sees block-style prim functions (fused ones after
    # FuseTIR); what it returns is what TIR lowering lowers and codegen compiles.
    (given,) = scheduling_kind
    prims = {n: f for n, f in given.functions.items() if _prim(f)}
    assert prims and all(shape_of(f).blocks > 0 for f in prims.values())
    assert any(n.startswith("fused_") for n in prims) == (pipeline == "default")
    for name in prims:
        assert lowered[name].attr("tir.is_scheduled") is True
        found = shape_of(lowered[name])
        assert found.blocks == 0 and found.parallel_loops > 0
    ex = tvmlite.build(tvmlite.parse(MLP), "llvm -libs=parallel", chosen, cache=False)
    np.testing.assert_allclose(ex["main"](*inputs()), want(*inputs()), rtol=1e-5)


def test_the_schedule_point_is_a_pass_to_disable_and_runs_for_every_target() -> None:
    timing = PassTimingInstrument()
    with PassContext(instruments=[timing], disabled_pass=["schedule"]):
        tvmlite.lower(tvmlite.parse(MLP))
    assert "schedule" not in [name for _, name, _ in timing.records]
    timing = PassTimingInstrument()
    with PassContext(instruments=[timing]):
        tvmlite.lower(tvmlite.parse(MLP))
    assert "schedule" in [name for _, name, _ in timing.records]

# ruff: noqa: E501  (TVMScript texts)
"""Targets as data: `-mtriple`/`-mcpu`/`-mattr` parse and are checked, each
target carries the machine the schedule rules size vectors, register tiles and
cache-aware choices for (AVX-512, AVX2, SSE, NEON), and the schedules differ as
the machines do, computing the right thing where they run."""

from __future__ import annotations

import platform
import re

import numpy as np
import pytest

import tvmlite
from tvmlite.dsl import tir
from tvmlite.lowering.build import lower
from tvmlite.lowering.codegen.cpu_traits import Cache, CPUTraits, cpu_traits
from tvmlite.lowering.codegen.target import host_triple
from tvmlite.lowering.target import Target

X86 = platform.machine() == "x86_64"
needs_x86 = pytest.mark.skipif(not X86, reason="x86-64 CPU names (-mcpu=haswell...)")

AVX512 = "llvm -mcpu=skylake-avx512"
AVX2 = "llvm -mcpu=haswell"
SSE = "llvm -mcpu=x86-64"
NEON = "llvm -mtriple=aarch64-linux-gnu"

MODEL = """
@I.ir_module
class Module:
    @R.function
    def main(a: R.Tensor((48, 96), "float32"), b: R.Tensor((96, 64), "float32"), c: R.Tensor((64,), "float32"), x: R.Tensor((37, 300), "float32")):
        with R.dataflow():
            mm = R.nn.relu(R.add(R.matmul(a, b), c))
            sm = R.nn.softmax(x, axis=-1)
            gv = (mm, sm)
            R.output(gv)
        return gv
"""


def inputs(seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    shapes = [(48, 96), (96, 64), (64,), (37, 300)]
    return [rng.standard_normal(s).astype("float32") for s in shapes]


def expected(a: np.ndarray, b: np.ndarray, c: np.ndarray, x: np.ndarray) -> list[np.ndarray]:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return [np.maximum(a @ b + c, 0), e / e.sum(axis=-1, keepdims=True)]


def scheduled(target: str, stop: str = "schedule") -> dict[str, tir.PrimFunc]:
    """The prim functions of MODEL for `target` right after the schedule step."""
    from tvmlite.lowering.transform import PassContext, PassInstrument

    found: list[tvmlite.IRModule] = []

    class Capture(PassInstrument):
        def run_after_pass(self, mod: tvmlite.IRModule, info: object) -> None:
            if getattr(info, "name", None) == stop and not found:
                found.append(mod)

    with PassContext(instruments=[Capture()]):
        lower(tvmlite.parse(MODEL), Target(target), pipeline="default")
    (mod,) = found
    return {n: f for n, f in mod.functions.items() if isinstance(f, tir.PrimFunc)}


def scripts(target: str) -> dict[str, str]:
    return {n: f.script() for n, f in scheduled(target).items()}


def vector_widths(script: str) -> set[int]:
    return {int(w) for w in re.findall(r"T\.vectorized\(T\.int64\((\d+)\)\)", script)}


def unrolled(script: str) -> set[int]:
    return {int(w) for w in re.findall(r"T\.unroll\(T\.int64\((\d+)\)\)", script)}


# ------------------------------------------------------------ parsing and checks


def test_triple_cpu_and_features_parse_into_the_target() -> None:
    t = Target("llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1 -mattr=+sve")
    assert (t.mtriple, t.mcpu, t.mattr) == ("aarch64-linux-gnu", "neoverse-n1", ("+sve",))
    assert Target(str(t)) == t
    options = t.machine_options()
    assert (options.triple, options.cpu, options.features) == (
        "aarch64-linux-gnu",
        "neoverse-n1",
        "+sve",
    )
    assert Target("llvm", mtriple="aarch64-linux-gnu").mtriple == "aarch64-linux-gnu"
    assert Target("llvm").machine_options().triple is None  # the host's


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("llvm -mtriple", "-mtriple needs a value"),
        ("llvm -mtriple=", "-mtriple needs a value"),
        ("llvm -mtriple=foo-linux-gnu", "LLVM has no target for 'foo-linux-gnu'"),
        (
            "llvm -mtriple=riscv64-linux-gnu",
            "cannot generate code for 'riscv64-linux-gnu'.*x86_64, aarch64",
        ),
        ("llvm -mtriple=aarch64-apple-darwin", "system darwin"),
        (
            "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a99",
            "unknown CPU 'cortex-a99' for aarch64-linux-gnu.*did you mean",
        ),
        (
            "llvm -mtriple=aarch64-linux-gnu -mattr=+avx2",
            "unknown feature 'avx2' for aarch64-linux-gnu",
        ),
        ("llvm -mtriple=aarch64-linux-gnu -mattr=neon", "is not a feature flag: write \\+neon"),
        (
            "llvm -mtriples=aarch64-linux-gnu",
            "unknown option -mtriples \\(did you mean -mtriple\\?\\)",
        ),
    ],
)
def test_bad_machine_values_are_clear_errors(spec: str, message: str) -> None:
    with pytest.raises(tvmlite.TVMLiteError, match=message):
        Target(spec)


def test_a_bad_triple_keyword_is_a_clear_error() -> None:
    with pytest.raises(tvmlite.TVMLiteError, match="-mtriple: 42 is not a target triple"):
        Target("llvm", mtriple=42)


# ------------------------------------------------------------ the machines


@needs_x86
@pytest.mark.parametrize(
    ("spec", "width", "registers"),
    [
        (AVX512, 64, 32),
        (AVX2, 32, 16),
        (SSE, 16, 16),
        ("llvm -mcpu=x86-64 -mattr=+avx512f", 64, 32),
    ],
)
def test_x86_vector_width_follows_the_cpu(spec: str, width: int, registers: int) -> None:
    traits = Target(spec).traits
    assert (traits.arch, traits.vector_bytes, traits.vector_registers) == (
        "x86_64",
        width,
        registers,
    )
    assert traits.lanes("float32") == width // 4 and traits.lanes("float64") == width // 8


def test_aarch64_is_neon() -> None:
    traits = Target(NEON).traits
    assert (traits.arch, traits.vector_bytes, traits.vector_registers) == ("aarch64", 16, 32)
    assert traits.lanes("float32") == 4 and traits.lanes("float16") == 8
    # Another machine's caches are its architecture's typical ones, not this host's.
    assert traits.l1 == Cache(64 << 10, 4, 64) and traits.l1.alias_stride == 16 << 10


def test_host_caches_come_from_the_host() -> None:
    traits = Target("llvm").traits
    assert traits.l1.size >= 4 << 10 and traits.l1.line in (32, 64, 128, 256)
    assert traits.l2.size >= traits.l1.size


def test_traits_compare_as_data() -> None:
    made = CPUTraits("aarch64", 16, 32, Cache(64 << 10, 4, 64), Cache(1 << 20, 8, 64))
    assert cpu_traits(Target(NEON).machine_options()) == made


# ------------------------------------------------------------ schedules


@needs_x86
def test_schedules_follow_the_vector_width() -> None:
    """One vector of float32 is 16, 8 and 4 lanes: the elementwise and
    reduction loops are that wide; the matmul's register tile is two vectors
    wide (one vectorized loop of a power of two lanes), with as many rows (MR x 2
    accumulators) as three quarters of the registers hold: 32 of AVX-512 and
    NEON, 16 of AVX2."""
    for spec, lanes, rows in [(AVX512, 16, 12), (AVX2, 8, 6), (NEON, 4, 12)]:
        texts = scripts(spec)
        (matmul,) = [s for n, s in texts.items() if "matmul" in n]
        (softmax,) = [s for n, s in texts.items() if "softmax" in n]
        assert vector_widths(matmul) == {2 * lanes}, (spec, vector_widths(matmul))
        assert rows in unrolled(matmul), (spec, unrolled(matmul))
        assert max(vector_widths(softmax)) == lanes, (spec, vector_widths(softmax))


def test_schedules_for_different_machines_differ_only_in_sizes() -> None:
    """The same model scheduled for NEON and for the host: the same kernels,
    each still printing as TVMScript that parses back to itself."""
    neon, host = scheduled(NEON), scheduled("llvm")
    assert neon.keys() == host.keys()
    for func in neon.values():
        assert func.attr("tir.is_scheduled")
        assert tvmlite.structural_equal(tvmlite.parse(func.script()), func)
    assert any(not tvmlite.structural_equal(neon[n], host[n]) for n in neon)


def test_default_cpu_schedule_takes_its_target() -> None:
    from tvmlite.transform import DefaultCPUSchedule

    legalized = tvmlite.lowering.pipeline.get_pipeline("default").run(tvmlite.parse(MODEL))
    for spec, lanes in [(NEON, 4), ("llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-v1", 4)]:
        done = DefaultCPUSchedule(Target(spec))(legalized)
        widths = set().union(
            *(
                vector_widths(f.script())
                for f in done.functions.values()
                if isinstance(f, tir.PrimFunc)
            )
        )
        assert lanes in widths and 16 not in widths


# ------------------------------------------------------------ numerics


@needs_x86
@pytest.mark.parametrize("spec", [AVX2, SSE])
def test_narrower_x86_machines_compute_the_same(spec: str) -> None:
    """Code for Haswell (AVX2 + FMA) and plain x86-64 (SSE2), scheduled for
    their widths, runs here (every x86-64 CPU of these days has AVX2)."""
    if spec == AVX2 and not cpu_has("avx2"):
        pytest.skip("this CPU has no AVX2: Haswell code would not run")
    ex = tvmlite.build(tvmlite.parse(MODEL), target=spec, pipeline="default", cache=False)
    args = inputs()
    for got, want in zip(ex["main"](*args), expected(*args), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    if spec == AVX2:
        asm = ex.assembly()
        assert re.search(r"vfmadd\d+ps\s+%ymm", asm) and "zmm" not in asm


@needs_x86
def test_avx512_schedule_is_wide_and_runs_where_it_can() -> None:
    ex = tvmlite.build(tvmlite.parse(MODEL), target=AVX512, pipeline="default", cache=False)
    assert '"prefer-vector-width"="512"' in ex.llvm_ir()
    assert re.search(r"vfmadd\d+ps\s+.*%zmm", ex.assembly())
    if not cpu_has("avx512f"):
        return  # compiled for AVX-512, which this CPU cannot run: the structure is the test
    args = inputs(1)
    for got, want in zip(ex["main"](*args), expected(*args), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def cpu_has(feature: str) -> bool:
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    return bool(llvm.get_host_cpu_features().get(feature))


def test_host_triple_is_the_process_triple() -> None:
    assert host_triple().split("-")[0] == platform.machine().replace("arm64", "aarch64")

# ruff: noqa: E501  (TVMScript texts)
"""The matmul rule of the default CPU schedule (lowering/schedule_rules/gemm.py):
recognised from block structure (any operand order, batch axes, casts, epilogues,
hand-written or legalized), scheduled into packed, register-tiled code that
computes what NumPy computes, on shapes that do and do not divide the tiles."""

from __future__ import annotations

import re

import numpy as np
import pytest
from rules_common import AVX512, apply_rule, prim_funcs, random_inputs, run

import tvmlite
from tvmlite.lowering.build import lower
from tvmlite.lowering.schedule.tree import Tree
from tvmlite.lowering.schedule_rules.contraction import match_contraction
from tvmlite.lowering.schedule_rules.gemm import Gemm
from tvmlite.lowering.schedule_rules.tiling import Tiling, plan
from tvmlite.lowering.target import Target
from tvmlite.tir import Schedule

GEMM = Gemm()
AXES = {"b": "vb", "i": "vi", "j": "vj", "k": "vk"}


def contraction(
    spec: str, sizes: dict[str, int], dtype: str = "float32", epilogue: bool = False
) -> str:
    """A hand-written prim function computing `np.einsum(spec)` ("ik,kj->ij"), with
    a bias-add + relu stage after it when `epilogue`."""
    (a, b), c = spec.split("->")[0].split(","), spec.split("->")[1]
    order = [x for x in "bijk" if x in a + b + c]
    kinds = "".join("R" if x == "k" else "S" for x in order)

    def shape(axes: str) -> str:
        return "(" + ", ".join(str(sizes[x]) for x in axes) + ",)"

    def at(name: str, axes: str) -> str:
        return f"{name}[{', '.join(AXES[x] for x in axes)}]"

    out = "T_mm" if epilogue else "C"
    params = f'A: T.Buffer({shape(a)}, "{dtype}"), B: T.Buffer({shape(b)}, "{dtype}")'
    alloc = ""
    if epilogue:
        params += f', bias: T.Buffer(({sizes["j"]},), "{dtype}")'
        alloc = f'        T_mm = T.alloc_buffer({shape(c)}, "{dtype}")\n'
    params += f', C: T.Buffer({shape(c)}, "{dtype}")'
    grid = ", ".join(str(sizes[x]) for x in order)
    loop_vars = ", ".join(order)
    text = f"""
@T.prim_func
def main({params}):
{alloc}        for {loop_vars} in T.grid({grid}):
            with T.block("mm"):
                {", ".join(AXES[x] for x in order)} = T.axis.remap("{kinds}", [{loop_vars}])
                with T.init():
                    {at(out, c)} = T.{dtype}(0)
                {at(out, c)} = {at(out, c)} + {at("A", a)} * {at("B", b)}
"""
    if epilogue:
        spatial = [x for x in order if x != "k"]
        text += f"""        for {", ".join(spatial)} in T.grid({", ".join(str(sizes[x]) for x in spatial)}):
            with T.block("bias_relu"):
                {", ".join(AXES[x] for x in spatial)} = T.axis.remap("{"S" * len(spatial)}", [{", ".join(spatial)}])
                {at("C", c)} = T.max({at("T_mm", c)} + bias[vj], T.{dtype}(0))
"""
    return text


def scheduled(text: str) -> tuple[tvmlite.dsl.tir.PrimFunc, Schedule]:
    func = tvmlite.parse(text)
    sch = apply_rule(func, GEMM)
    assert sch is not None, "the gemm rule did not take the block"
    return func, sch


CASES = [
    ("ik,kj->ij", {"i": 37, "j": 45, "k": 19}),  # rows not divided: padded; columns padded
    ("ik,kj->ij", {"i": 12, "j": 53, "k": 6}),  # a prime column count
    ("ik,kj->ij", {"i": 97, "j": 197, "k": 64}),  # ViT's attention: padded panels of 16
    ("ik,kj->ij", {"i": 1, "j": 197, "k": 5}),  # one row: the operand read in place
    ("ik,jk->ij", {"i": 8, "j": 200, "k": 5}),  # 200 columns, packed weight
    ("ik,kj->ij", {"i": 48, "j": 90, "k": 5}),  # 90 columns
    ("ik,kj->ij", {"i": 24, "j": 64, "k": 8}),  # tiles divide: packed panels of 32
    ("ik,jk->ij", {"i": 16, "j": 48, "k": 5}),  # dense: x @ w.T, the weight packed across its rows
    ("ik,jk->ij", {"i": 33, "j": 47, "k": 5}),  # dense, padded: the weight transposed and padded
    ("ik,jk->ij", {"i": 37, "j": 64, "k": 48}),  # dense: both copies read a cache line per row
    ("ki,kj->ij", {"i": 9, "j": 32, "k": 7}),  # transposed left operand
    ("ki,jk->ij", {"i": 13, "j": 16, "k": 3}),  # both transposed
    ("bik,bkj->bij", {"b": 3, "i": 10, "j": 64, "k": 6}),  # batch matmul
    ("bik,bkj->bij", {"b": 3, "i": 29, "j": 37, "k": 6}),  # batch matmul, padded per batch
    ("bik,kj->bij", {"b": 2, "i": 7, "j": 32, "k": 4}),  # batch on one side only
    ("bik,kj->bij", {"b": 2, "i": 30, "j": 19, "k": 4}),  # ... padded: one panel for both
    ("ik,kj->ij", {"i": 5, "j": 10, "k": 4}),  # narrower than a register
    ("ik,kj->ij", {"i": 37, "j": 520, "k": 1030}),  # rows a page apart: packed and padded
]


@pytest.mark.parametrize(("spec", "sizes"), CASES)
def test_gemm_rule_matches_numpy(spec: str, sizes: dict[str, int]) -> None:
    func, sch = scheduled(contraction(spec, sizes))
    a, b = random_inputs(func)
    got = run(sch.mod["main"], [a, b])
    np.testing.assert_allclose(got, np.einsum(spec, a, b), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("sizes", [{"i": 20, "j": 64, "k": 9}, {"i": 7, "j": 21, "k": 3}])
def test_epilogue_is_fused_into_the_write_back(sizes: dict[str, int]) -> None:
    func, sch = scheduled(contraction("ik,kj->ij", sizes, epilogue=True))
    names = [b.name for b in Tree(sch.mod["main"]).blocks]
    assert "bias_relu" not in names  # inlined: C is written once, from the registers
    assert re.search(r"T\.max\(T_mm(_pad)?_local\[", sch.mod.script())  # padded: T_mm_pad
    a, b, bias = random_inputs(func)
    got = run(sch.mod["main"], [a, b, bias])
    np.testing.assert_allclose(got, np.maximum(a @ b + bias, 0), rtol=1e-4, atol=1e-4)


def test_padded_columns_are_read_per_step_and_only_the_write_back_is_guarded() -> None:
    _, sch = scheduled(contraction("ik,kj->ij", {"i": 96, "j": 197, "k": 64}))
    text = sch.mod.script()
    assert 'B_pad_local = T.alloc_buffer((64, 208), scope="local")' in text  # no copy of B
    assert "T.if_then_else(v1 < 197, B[v0, v1]" in text
    assert arith_true(sch)
    assert "T.where(" in text.split('T.block("C_pad")')[1]


def test_rows_a_page_apart_are_packed_and_padded() -> None:
    _, sch = scheduled(contraction("ik,kj->ij", {"i": 37, "j": 520, "k": 1030}))
    text = sch.mod.script()
    assert "A_pad = T.alloc_buffer((4, 1030, 10))" in text  # panels of 10 rows, 40 rows
    assert '"meta_schedule.layout_rewrite_preproc": T.bool(True)' in text  # hoistable
    assert arith_true(sch)  # no row of the micro-kernel is predicated


@pytest.mark.parametrize("m", [128, 37])
def test_rows_the_tile_does_not_divide_are_padded(m: int) -> None:
    # 128 rows in tiles of 12: a predicate on each unrolled row inside the
    # reduction loop would slow every tile, so the rows are padded instead
    _, sch = scheduled(contraction("ik,kj->ij", {"i": m, "j": 64, "k": 8}))
    found = re.search(r"A_pad = T\.alloc_buffer\(\((\d+), 8, (\d+)\)\)", sch.mod.script())
    assert found, "A is not padded into row panels"
    tiles, mr = int(found[1]), int(found[2])
    assert m % mr and tiles == -(-m // mr)
    assert arith_true(sch)


def arith_true(sch: Schedule) -> bool:
    """The micro-kernel's block (the update) has no predicate."""
    tree = Tree(sch.mod["main"])
    (block,) = [b for b in tree.blocks if b.name == "mm_update"]
    return tvmlite.dsl.arith.as_bool(tree.realize_of[id(block)].predicate) is True


def test_packed_micro_kernel_structure() -> None:
    # w[j, k]: the 32 values of one reduction step are 16 floats apart: packed
    _, sch = scheduled(contraction("ik,jk->ij", {"i": 48, "j": 64, "k": 16}))
    text = sch.mod.script()
    assert "B_global = T.alloc_buffer((2, 16, 32))" in text
    assert "T.unroll(12)" in text and "T.vectorized(32)" in text and "T.parallel(" in text
    assert '"mm_init"' in text and '"mm_update"' in text
    assert 'scope="local"' in text


def test_copies_of_operands_contiguous_along_the_reduction_read_whole_lines() -> None:
    # w[j, k] and x[i, k]: each row a panel gathers is read 16 floats (a cache
    # line) at a time, the lanes of the panel outside
    _, sch = scheduled(contraction("ik,jk->ij", {"i": 37, "j": 64, "k": 48}))
    lines = sch.mod.script().splitlines()
    for copy in ("A_pad", "B_global"):
        at = next(n for n, line in enumerate(lines) if f'T.block("{copy}")' in line)
        lanes, line = lines[at - 2].strip(), lines[at - 1].strip()
        assert re.fullmatch(r"for \w+_0, \w+_1 in T\.grid\(3, (10|32)\):", lanes), lanes
        assert re.fullmatch(r"for \w+_1 in T\.unroll\(16\):", line), line


@pytest.mark.parametrize(("n", "packed"), [(64, False), (1024, True)])
def test_contiguous_operand_is_packed_when_its_rows_are_a_page_apart(n: int, packed: bool) -> None:
    _, sch = scheduled(contraction("ik,kj->ij", {"i": 384, "j": n, "k": 3}))  # 32 row tiles
    assert ("B_global" in sch.mod.script()) == packed


def test_legalized_matmul_and_mlp_layers() -> None:
    text = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((6, 40), "float32"), w1: R.Tensor((40, 48), "float32"), b1: R.Tensor((48,), "float32"), w2: R.Tensor((48, 10), "float32")) -> R.Tensor((6, 10), "float32"):
        with R.dataflow():
            h = R.nn.relu(R.add(R.matmul(x, w1), b1))
            gv = R.matmul(h, w2)
            R.output(gv)
        return gv
"""
    funcs = prim_funcs(text)
    rng = np.random.default_rng(1)
    x, w1, b1, w2 = (
        rng.standard_normal(s).astype("float32") for s in [(6, 40), (40, 48), (48,), (48, 10)]
    )
    taken = 0
    for func in funcs.values():
        sch = apply_rule(func, GEMM)
        if sch is None:
            continue
        taken += 1
        if len(func.buffer_map) == 4:
            np.testing.assert_allclose(
                run(sch.mod["main"], [x, w1, b1]), np.maximum(x @ w1 + b1, 0), rtol=1e-4, atol=1e-4
            )
        else:
            h = rng.standard_normal((6, 48)).astype("float32")
            np.testing.assert_allclose(run(sch.mod["main"], [h, w2]), h @ w2, rtol=1e-4, atol=1e-4)
    assert taken == 2


def test_mixed_precision_cast_operands() -> None:
    text = """
@T.prim_func
def main(A: T.Buffer((9, 5), "float16"), B: T.Buffer((5, 33), "float16"), C: T.Buffer((9, 33), "float32")):
    for i, j, k in T.grid(9, 33, 5):
        with T.block("mm"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + T.Cast("float32", A[vi, vk]) * T.Cast("float32", B[vk, vj])
"""
    func, sch = scheduled(text)
    a, b = random_inputs(func)
    got = run(sch.mod["main"], [a, b])
    np.testing.assert_allclose(got, a.astype("float32") @ b.astype("float32"), rtol=1e-3, atol=1e-3)


REJECTED = {
    "elementwise": """
@T.prim_func
def main(A: T.Buffer((4, 4), "float32"), C: T.Buffer((4, 4), "float32")):
    for i, j in T.grid(4, 4):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] * T.float32(2)
""",
    "row sum": """
@T.prim_func
def main(A: T.Buffer((4, 4), "float32"), C: T.Buffer((4,), "float32")):
    for i, k in T.grid(4, 4):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + A[vi, vk]
""",
    "max instead of sum": """
@T.prim_func
def main(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32"), C: T.Buffer((4, 4), "float32")):
    for i, j, k in T.grid(4, 4, 4):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = T.max(C[vi, vj], A[vi, vk] * B[vk, vj])
""",
    "dot product (no output axis)": """
@T.prim_func
def main(x: T.Buffer((8,), "float32"), y: T.Buffer((8,), "float32"), C: T.Buffer((), "float32")):
    for k in range(8):
        with T.block("C"):
            vk = T.axis.remap("R", [k])
            with T.init():
                C[()] = T.float32(0)
            C[()] = C[()] + x[vk] * y[vk]
""",
    "matrix-vector (no row axis)": """
@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), x: T.Buffer((8,), "float32"), C: T.Buffer((4,), "float32")):
    for i, k in T.grid(4, 8):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + A[vi, vk] * x[vk]
""",
}


@pytest.mark.parametrize("name", sorted(REJECTED))
def test_rule_leaves_other_computations_alone(name: str) -> None:
    func = tvmlite.parse(REJECTED[name])
    assert apply_rule(func, GEMM) is None


def test_scheduled_block_is_not_taken_again() -> None:
    _, sch = scheduled(contraction("ik,kj->ij", {"i": 8, "j": 32, "k": 4}))
    assert not GEMM.accepts(sch, sch.get_sblock("mm_update"))


def tiling_of(m: int, n: int, spec: str = "ik,kj->ij") -> Tiling:
    func = tvmlite.parse(contraction(spec, {"i": m, "j": n, "k": 4}))
    sch = Schedule(func)
    c = match_contraction(sch, sch.get_sblock("mm"))
    assert c is not None
    roles = GEMM.roles(c)
    assert roles is not None
    return plan(c, roles, AVX512)


@pytest.mark.parametrize("n", [1, 5, 10, 24, 45, 53, 64, 90, 100, 197, 200, 511, 1000, 2047])
@pytest.mark.parametrize("m", [1, 12, 197, 1024])
def test_column_tiles_divide_the_columns_or_pad_them(m: int, n: int) -> None:
    """No predicate on the vector axis: NR divides the columns, or they are padded
    to a multiple of NR with whole (or, under half a register, power-of-two) vectors."""
    t = tiling_of(m, n).columns
    if t.pad:
        assert n % t.size
        assert t.size in (32, 16) or (n < t.size and t.size in (8, 4))
    else:
        assert n % t.size == 0


@pytest.mark.parametrize("n", [53, 197, 511, 2047])
def test_many_rows_pad_odd_columns_into_whole_registers(n: int) -> None:
    t = tiling_of(197, n).columns
    assert t.pad and t.size in (16, 32)


@pytest.mark.parametrize("n", [1000, 1024, 2047])
def test_few_rows_read_the_operand_in_place(n: int) -> None:
    """Packing costs a copy of the operand: a few rows of output do not repay it."""
    assert tiling_of(5, n).columns.packed is None


@pytest.mark.parametrize(("m", "mr"), [(24, 12), (14, 7), (197, 11), (5, 5), (1, 1)])
def test_row_tiles_waste_few_rows(m: int, mr: int) -> None:
    assert tiling_of(m, 64).rows.size == mr


def test_tile_sizes() -> None:
    t = tiling_of(24, 64)
    assert (t.rows.size, t.columns.size, t.rows.pad, t.columns.pad) == (12, 32, False, False)


def test_default_build_schedules_matmul_with_the_rule() -> None:
    text = """
@I.ir_module
class Module:
    @R.function
    def main(a: R.Tensor((20, 24), "float32"), b: R.Tensor((24, 64), "float32"), c: R.Tensor((64,), "float32")) -> R.Tensor((20, 64), "float32"):
        with R.dataflow():
            gv = R.nn.relu(R.add(R.matmul(a, b), c))
            R.output(gv)
        return gv
"""
    mod = tvmlite.parse(text)
    lowered = lower(mod, Target("llvm"), pipeline="default")  # fused: one kernel
    (func,) = [f for f in lowered.functions.values() if isinstance(f, tvmlite.dsl.tir.PrimFunc)]
    script = func.script()
    assert func.attr("tir.is_scheduled") and "T.unroll(T.int64(10))" in script
    assert "T.max(" in script.split("T.vectorized(T.int64(32))")[-1]  # relu in the write-back
    rng = np.random.default_rng(2)
    a, b, c = (rng.standard_normal(s).astype("float32") for s in [(20, 24), (24, 64), (64,)])
    for pipeline in ("default", None):  # fused, and one kernel per operator
        got = tvmlite.build(mod, pipeline=pipeline)["main"](a, b, c)
        np.testing.assert_allclose(got, np.maximum(a @ b + c, 0), rtol=1e-4, atol=1e-4)


TRANSPOSED_WEIGHT = """
@T.prim_func
def main(x: T.Buffer((384, 8), "float32"), w: T.Buffer((1024, 8), "float32"), C: T.Buffer((384, 1024), "float32")):
    wT = T.alloc_buffer((8, 1024))
    for k, j in T.grid(8, 1024):
        with T.block("T_transpose"):
            vk, vj = T.axis.remap("SS", [k, j])
            wT[vk, vj] = w[vj, vk]
    for i, j, k in T.grid(384, 1024, 8):
        with T.block("mm"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + x[vi, vk] * wT[vk, vj]
"""


def test_a_weight_transposed_in_the_kernel_is_packed_from_its_own_layout() -> None:
    """`matmul(x, permute_dims(w))` fused into one kernel: the transpose is inlined
    into the pack, which reads w once and is marked hoistable."""
    func, sch = scheduled(TRANSPOSED_WEIGHT)
    names = [b.name for b in Tree(sch.mod["main"]).blocks]
    assert "T_transpose" not in names and "wT_global" in names
    assert '"meta_schedule.layout_rewrite_preproc": T.bool(True)' in sch.mod.script()
    x, w = random_inputs(func)
    np.testing.assert_allclose(run(sch.mod["main"], [x, w]), x @ w.T, rtol=1e-4, atol=1e-4)

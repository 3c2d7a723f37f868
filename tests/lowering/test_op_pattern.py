# ruff: noqa: E501  (TVMScript texts)
"""AnnotateTIROpPattern: each pattern kind deduced from hand-written kernels,
agreement with LegalizeOps' kernels, and the attribute it leaves."""

from __future__ import annotations

import pytest

import tvmlite
from tvmlite.dsl import tir
from tvmlite.dsl.ops import OpPatternKind
from tvmlite.lowering.analysis import analyze_op_pattern
from tvmlite.lowering.passes.annotate_tir_op_pattern import AnnotateTIROpPattern
from tvmlite.transform import LegalizeOps

HEADER = "# from tvm.script import tir as T\n\n"

ELEMWISE = """@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((4, 8), "float32")):
    for i, j in T.grid(4, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] + B[vj]
"""

BROADCAST = """@T.prim_func
def main(B: T.Buffer((8,), "float32"), C: T.Buffer((4, 8), "float32")):
    for i, j in T.grid(4, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vj] * T.float32(2)
"""

INJECTIVE = """@T.prim_func
def main(A: T.Buffer((8, 4), "float32"), C: T.Buffer((4, 8), "float32")):
    for i, j in T.grid(4, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vj, vi]
"""

STRIDED_SLICE = """@T.prim_func
def main(A: T.Buffer((16,), "float32"), C: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = A[vi * 2 + 1]
"""

REDUCE = """@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4,), "float32")):
    for i, k in T.grid(4, 8):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + A[vi, vk]
"""

MATMUL = """@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8, 6), "float32"), C: T.Buffer((4, 6), "float32")):
    for i, j, k in T.grid(4, 6, 8):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""

POOL = """@T.prim_func
def main(A: T.Buffer((10,), "float32"), C: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 3):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = T.float32(-1e30)
            C[vi] = T.max(C[vi], A[vi + vk])
"""

SOFTMAX_LIKE = """@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32")):
    S = T.alloc_buffer((4,))
    for i, k in T.grid(4, 8):
        with T.block("S"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + A[vi, vk]
    for i, j in T.grid(4, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] / S[vi]
"""

WHILE_LOOP = """@T.prim_func
def main(A: T.Buffer((8,), "int32")):
    i = T.alloc_buffer((1,), "int32")
    while i[0] < 8:
        A[i[0]] = i[0]
        i[0] = i[0] + 1
"""

EXTERN = """@T.prim_func
def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = T.call_extern("float32", "my_fn", A[vi])
"""

NO_BLOCKS = """@T.prim_func
def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    for i in range(8):
        C[i] = A[i]
"""


def _func(text: str) -> tir.PrimFunc:
    parsed = tvmlite.parse(HEADER + text)
    return parsed["main"] if not isinstance(parsed, tir.PrimFunc) else parsed


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (ELEMWISE, OpPatternKind.kElemWise),
        (BROADCAST, OpPatternKind.kBroadcast),
        (INJECTIVE, OpPatternKind.kInjective),
        (STRIDED_SLICE, OpPatternKind.kInjective),
        (REDUCE, OpPatternKind.kCommReduce),
        (MATMUL, OpPatternKind.kOutEWiseFusable),
        (POOL, OpPatternKind.kOutEWiseFusable),
        (SOFTMAX_LIKE, OpPatternKind.kOutEWiseFusable),
        (WHILE_LOOP, OpPatternKind.kOpaque),
        (EXTERN, OpPatternKind.kOpaque),
        (NO_BLOCKS, OpPatternKind.kOpaque),
    ],
    ids=[
        "elemwise",
        "broadcast",
        "transpose",
        "strided_slice",
        "reduce",
        "matmul",
        "pool",
        "softmax_like",
        "while",
        "extern",
        "no_blocks",
    ],
)
def test_pattern_kind(text: str, kind: OpPatternKind) -> None:
    assert analyze_op_pattern(_func(text)) == kind


def test_enum_matches_tvm_numbers_and_names() -> None:
    assert [int(k) for k in OpPatternKind] == [0, 1, 2, 3, 4, 7, 8]
    assert OpPatternKind(4).spelling == "out_ewise_fusible"
    assert OpPatternKind.kOpaque.spelling == "opaque"


RELAX = """# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4, 8), dtype="float32"), w: R.Tensor((8, 8), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        with R.dataflow():
            a: R.Tensor((4, 8), dtype="float32") = R.matmul(x, w)
            b: R.Tensor((4, 8), dtype="float32") = R.nn.relu(a)
            c: R.Tensor((8, 4), dtype="float32") = R.permute_dims(b)
            d: R.Tensor((4,), dtype="float32") = R.sum(b, axis=[1])
            R.output(d)
        return d
"""


def test_annotates_legalized_kernels_consistently_with_op_kind() -> None:
    mod = AnnotateTIROpPattern()(LegalizeOps()(tvmlite.parse(RELAX)))
    kinds = {
        f.attr("op_name"): f.attr("op_pattern")
        for f in mod.functions.values()
        if isinstance(f, tir.PrimFunc)
    }
    assert kinds == {
        "relax.matmul": 4,
        "relax.nn.relu": 0,
        "relax.permute_dims": 2,
        "relax.sum": 3,
    }
    for f in mod.functions.values():
        if isinstance(f, tir.PrimFunc):
            assert OpPatternKind(f.attr("op_pattern")).spelling == f.attr("op_kind")


def test_idempotent_and_keeps_existing_attribute() -> None:
    mod = AnnotateTIROpPattern()(LegalizeOps()(tvmlite.parse(RELAX)))
    assert AnnotateTIROpPattern()(mod) is mod
    func = _func(MATMUL)
    forced = tir.PrimFunc(func.params, func.buffer_map, func.body, attrs=(("op_pattern", 8),))
    wrapped = tvmlite.dsl.module.IRModule({"k": forced})
    assert AnnotateTIROpPattern()(wrapped)["k"].attr("op_pattern") == 8


def test_annotated_module_prints_and_reparses() -> None:
    mod = AnnotateTIROpPattern()(LegalizeOps()(tvmlite.parse(RELAX)))
    again = tvmlite.parse(mod.script())
    assert tvmlite.structural_equal(mod, again)

"""More of TVM 0.27's printed TIR on a CPU build: mutable scalars, negative loop steps,
packed-call and pointer intrinsics. Expected values are TVM 0.27's results for the
same text (checked with TVM when the test was written) or worked out by hand."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tvmlite
from tvmlite.dsl import tir

GOLDEN = Path(__file__).parents[1] / "golden" / "tir"


def _golden(name: str) -> tvmlite.Executable:
    return tvmlite.build(tvmlite.parse((GOLDEN / name).read_text()))


def test_mutable_scalars_accumulate_as_in_tvm() -> None:
    """`x: T.float32 = 0` then `x = x + A[i]` in a loop is one mutable scalar in TVM
    0.27 (a local buffer): the sum survives the loop (TVM: [28, 56])."""
    lib = _golden("mutable_scalars.tvms")
    a = np.arange(8, dtype="float32")
    b = np.zeros(2, "float32")
    lib["total"](a, b)
    np.testing.assert_array_equal(b, [28.0, 56.0])
    c = np.zeros(8, "int32")
    lib["count"](a, c)  # a counter stored to in a branch and used as an index
    np.testing.assert_array_equal(c, [4, 5, 6, 7, 0, 0, 0, 4])
    d = np.zeros(8, "float32")
    lib["once"](a, d)
    np.testing.assert_array_equal(d, a * 2 + 1)


def test_assigned_once_stays_a_binding() -> None:
    """Only a name assigned again becomes a mutable scalar; `t: T.float32 = v` used
    once is a plain binding, and both print as TVM prints them."""
    mod = tvmlite.parse((GOLDEN / "mutable_scalars.tvms").read_text())
    once = mod["once"].body.body
    assert isinstance(once.seq[0], tir.Bind)
    total = mod["total"].body
    assert isinstance(total.seq[0], tir.AllocBuffer)
    assert isinstance(total.seq[1], tir.BufferStore)


def test_a_scalar_named_as_a_buffer_is_one() -> None:
    """`lo: T.float32 = v` assigned once but read as a region (`lo.source[0]`, as TVM
    0.27 prints the reads of its scalars in blocks) is the local buffer TVM makes."""
    text = """\
# from tvm.script import tirx as T

@T.prim_func(s_tir=True)
def clip(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    lo: T.float32 = T.float32(-1.0)
    for i in range(4):
        with T.sblock("c"):
            vi = T.axis.spatial(4, i)
            T.reads(A[vi], lo.source[0])
            T.writes(B[vi])
            B[vi] = T.max(A[vi], lo)
"""
    func = tvmlite.parse(text)
    body = func.body.block.body
    assert isinstance(body.seq[0], tir.AllocBuffer) and body.seq[0].buffer.name == "lo"
    assert tvmlite.structural_equal(tvmlite.parse(func.script()), func)
    a = np.array([-3.0, -0.5, 2.0, -1.5], "float32")
    b = np.zeros(4, "float32")
    tvmlite.build(func)["clip"](a, b)
    np.testing.assert_array_equal(b, np.maximum(a, -1.0))


def test_shuffle_picks_lanes() -> None:
    """`T.Shuffle` of scalars and vectors (TVM 0.27: [7, 5, 8, 5] for x=5, y=7)."""
    b = np.zeros(4, "int32")
    _golden("shuffle.tvms")["main"](5, 7, b)
    np.testing.assert_array_equal(b, [7, 5, 8, 5])


@pytest.mark.parametrize(
    ("function", "message"),
    [
        ("packed_value", "T.call_packed is not supported by the LLVM backend"),
        ("lowered", "T.tvm_stack_alloca is not supported by the LLVM backend"),
        ("addresses", "T.address_of of a variable is not supported by the LLVM backend"),
        ("offsets", "T.handle_add_byte_offset is not supported by the LLVM backend"),
    ],
)
def test_runtime_intrinsics_are_refused_by_name(function: str, message: str) -> None:
    mod = tvmlite.parse((GOLDEN / "packed_and_pointers.tvms").read_text())
    single = tvmlite.IRModule({function: mod[function]})
    with pytest.raises(tvmlite.TVMLiteError, match=message):
        tvmlite.build(single)


def test_decl_buffer_over_a_computed_pointer() -> None:
    """`T.decl_buffer((4,), data=T.address_of(A[4]))` views A from element 4 on
    (TVM 0.27: [0, 1, 2, 3, 0, 2, 4, 6])."""
    a = np.arange(8, dtype="float32")
    _golden("decl_buffer_pointer.tvms")["main"](a)
    np.testing.assert_array_equal(a, [0, 1, 2, 3, 0, 2, 4, 6])


def test_loop_steps_and_an_empty_negative_extent() -> None:
    """Stepped loops of every kind run as in TVM 0.27 ([3, 4, 13, 0, 4, 0, 3, 4]);
    `range(-1)` runs no iteration."""
    mod = tvmlite.parse((GOLDEN / "loop_steps.tvms").read_text())
    a = np.zeros(8, "float32")
    tvmlite.build(tvmlite.IRModule({"steps": mod["steps"]}))["steps"](a)
    np.testing.assert_array_equal(a, [3, 4, 13, 0, 4, 0, 3, 4])


def test_negative_step_is_refused_at_build() -> None:
    """TVM prints `range(0, 8, -3)` and refuses to build it; so does tvmlite, naming the loop."""
    mod = tvmlite.parse((GOLDEN / "loop_steps.tvms").read_text())
    with pytest.raises(tvmlite.TVMLiteError, match="loop 'i' has step -3: a loop step must be"):
        tvmlite.build(tvmlite.IRModule({"negative_step": mod["negative_step"]}))


@pytest.mark.parametrize("function", ["copy", "steps"])
def test_scalable_vectors_are_refused_by_name(function: str) -> None:
    """vscale is known only on an SVE/RVV device: a CPU build names the dtype (of the
    vector index, the first thing it meets)."""
    mod = tvmlite.parse((GOLDEN / "scalable_vectors.tvms").read_text())
    message = "the LLVM backend does not support scalable vector dtype int64xvscalex4"
    with pytest.raises(tvmlite.TVMLiteError, match=message):
        tvmlite.build(tvmlite.IRModule({function: mod[function]}))


def test_clz_counts_into_int32() -> None:
    """`T.clz` is int32 whatever its argument's width, as in TVM 0.27
    ([63, 23, 56, 1] and [31, 29, 24, 29])."""
    a = np.array([1, 2**40 + 5, 255, 2**62 + 7], "int64")
    b, c = np.zeros(4, "int32"), np.zeros(4, "int32")
    _golden("clz_int32.tvms")["main"](a, b, c)
    np.testing.assert_array_equal(b, [63, 23, 56, 1])
    np.testing.assert_array_equal(c, [31, 29, 24, 29])


def test_block_axis_with_a_bare_extent_over_int64_loops() -> None:
    """`vi = T.axis.spatial(8, i)` with an int64 `i`: an int32 domain, as TVM keeps it,
    and the blocks compute as in TVM 0.27."""
    a, b, c = np.arange(8, dtype="float32"), np.zeros(8, "float32"), np.zeros((), "float32")
    _golden("axis_bare_extent.tvms")["main"](a, b, c)
    np.testing.assert_array_equal(b, a * 2)
    assert c == 28.0


def test_one_bit_integers_are_refused_by_name() -> None:
    """int1/uint1 (binary tensor cores, LLVM flags) parse and print; a CPU build names them."""
    mod = tvmlite.parse((GOLDEN / "one_bit_ints.tvms").read_text())
    with pytest.raises(
        tvmlite.TVMLiteError, match="the LLVM backend does not support dtype u?int1"
    ):
        tvmlite.build(mod)


HEADER = "# from tvm.script import tirx as T\n\n@T.prim_func\n"
# (body of `main`, what a CPU build says): texts as TVM 0.27 prints them, which
# parse, print back line for line and round-trip; none can run on a CPU.
REFUSED = {
    # device operands packed into another width
    "reinterpret": (
        'def main(A: T.Buffer((8,), "float16"), B: T.Buffer((2,), "int32")):\n'
        '    B[0] = T.reinterpret("int32", A[T.Ramp(0, 1, 4)])\n',
        "float16x4 into int32: sizes differ",
    ),
    # pointer types as values: the type argument of TVM's lowered packed calls
    "pointer_types": (
        'def main(A: T.Buffer((4,), "int64"), h: T.handle):\n'
        '    shape: T.let[T.handle("int64", "global")] = '
        'T.tvm_struct_get(h, 0, 3, T.handle("int64", "global").ty)\n'
        "    data: T.let[T.handle] = T.tvm_struct_get(h, 0, 1, T.handle().ty)\n"
        "    A[0] = T.int64(1)\n",
        "T.tvm_struct_get is not supported",
    ),
    # the value of a void extern call
    "void_let": (
        'def main(A: T.Buffer((4,), "float32")):\n'
        '    x: T.let[T.void] = T.call_extern("void", "srand", T.uint32(1))\n'
        "    A[0] = T.float32(1.0)\n",
        "does not support dtype void",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_printed_forms_parse_and_are_refused_at_build(case: str) -> None:
    body, message = REFUSED[case]
    text = HEADER + body
    mod = tvmlite.parse(text)
    printed = mod.script(dialect="tvm-0.27")
    assert printed.splitlines()[3:] == text.splitlines()[2:]
    assert tvmlite.structural_equal(tvmlite.parse(printed), mod)
    with pytest.raises(tvmlite.TVMLiteError, match=message):
        tvmlite.build(mod)

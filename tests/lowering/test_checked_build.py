"""Checked builds (`build(mod, checked=True)`, PassContext config
`tir.instrument_bound_checkers`): every out-of-bounds load or store raises
TVMLiteError naming the function, buffer, index and extent before it touches
memory; programs that stay in bounds compute exactly what unchecked builds do,
and unchecked builds stay unchecked."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import op_cases_elementwise
import op_cases_nn
import op_cases_tensor
import pytest
from op_cases_common import Case

import tvmlite
from tvmlite.dsl import tir
from tvmlite.lowering.tir.pipeline import LowerTIR
from tvmlite.lowering.transform import PassContext

DATA = Path(__file__).parent / "data" / "checked"
Error = tvmlite.TVMLiteError
KEY = "tir.instrument_bound_checkers"
T_HEADER = "# from tvm.script import tir as T\n\n"
CASES = op_cases_elementwise.CASES + op_cases_tensor.CASES + op_cases_nn.CASES
GRAPH_HEADER = (
    "# from tvm.script import ir as I\n# from tvm.script import tir as T\n"
    "# from tvm.script import relax as R\n\n"
)

# The T.where (always true) hides the accesses from CheckStaticBounds, which refuses
# at compile time an access it can prove out of bounds on every call: these sources
# test the run-time checks (test_static_bounds.py tests the compile-time ones).
SHIFT_STORE = """@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            T.where(i < 16)
            B[vi + OFFSET] = A[vi]
"""
SHIFT_LOAD = """@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            T.where(i < 16)
            B[vi] = A[vi + OFFSET]
"""


def prim(source: str, offset: int = 0) -> tir.PrimFunc:
    return tvmlite.parse(T_HEADER + source.replace("OFFSET", str(offset)))


def run(source: str, *args: object, offset: int = 0, checked: bool = True) -> None:
    tvmlite.build(prim(source, offset), checked=checked)["main"](*args)


def lowered(func: tir.PrimFunc, checked: bool = True) -> str:
    with PassContext(config={KEY: checked}):
        return LowerTIR()(tvmlite.IRModule({"main": func}))["main"].script()


def f32(n: int) -> np.ndarray:
    return np.arange(n, dtype="float32")


# ---------------------------------------------------------------- the cases


def test_store_past_the_end_raises_before_writing() -> None:
    memory = np.full(20, -7.0, "float32")  # B is its first 16 elements
    message = r"^main: assertion failed: store to buffer B out of bounds: index vi \+ 1 = 16 is outside \[0, 16\)$"
    with pytest.raises(Error, match=message):
        run(SHIFT_STORE, f32(16), memory[:16], offset=1)
    np.testing.assert_array_equal(memory[1:16], np.arange(15))  # in-bounds stores ran
    assert memory[16] == -7.0  # the one past the end never happened


def test_unchecked_default_build_is_unchanged() -> None:
    assert "assert" not in lowered(prim(SHIFT_STORE, 1), checked=False)
    memory = np.full(20, -7.0, "float32")
    run(SHIFT_STORE, f32(16), memory[:16], offset=1, checked=False)
    assert memory[16] == 15.0  # what the issue reported: the write lands past B (unproven OOB)


def test_load_past_the_end_raises() -> None:
    with pytest.raises(
        Error, match=r"load from buffer A out of bounds: index vi \+ 4 = 16 is outside"
    ):
        run(SHIFT_LOAD, f32(16), np.zeros(16, "float32"), offset=4)


@pytest.mark.parametrize("source", [SHIFT_STORE, SHIFT_LOAD])
def test_far_out_of_bounds_raises_instead_of_crashing(source: str) -> None:
    with pytest.raises(Error, match=r"index vi \+ 100000000 = 100000000 is outside \[0, 16\)"):
        run(source, f32(16), np.zeros(16, "float32"), offset=100000000)


def test_negative_index_raises() -> None:
    with pytest.raises(
        Error, match=r"load from buffer A out of bounds: index vi \+ -1 = -1 is outside \[0, 16\)"
    ):
        run(SHIFT_LOAD, f32(16), np.zeros(16, "float32"), offset=-1)


CALL_TIR = (
    GRAPH_HEADER
    + """@I.ir_module
class Module:
    @T.prim_func(private=True)
    def shift(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        T.func_attr({"tir.noalias": True})
        for i in range(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                T.where(i < 16)  # as in SHIFT_STORE
                B[vi] = A[vi + OFFSET]

    @R.function
    def main(x: R.Tensor((16,), "float32")) -> R.Tensor((16,), "float32"):
        cls = Module
        with R.dataflow():
            y = R.call_tir(cls.shift, (x,), out_sinfo=R.Tensor((16,), "float32"))
            z = R.add(y, x)
            R.output(z)
        return z
"""
)


@pytest.mark.parametrize(
    ("pipeline", "kernel", "buffer"),
    [
        ("minimal", "shift", "A"),
        ("default", "fused_shift_add", "x"),
        ("fast", "fused_shift_add", "x"),
    ],
)
def test_call_tir_and_fused_kernels(pipeline: str, kernel: str, buffer: str) -> None:
    x = f32(16)
    ok = tvmlite.build(
        tvmlite.parse(CALL_TIR.replace("OFFSET", "0")), pipeline=pipeline, checked=True
    )
    np.testing.assert_array_equal(ok["main"](x), 2 * x)
    ex = tvmlite.build(
        tvmlite.parse(CALL_TIR.replace("OFFSET", "4")), pipeline=pipeline, checked=True
    )
    # The index is spelled as the (scheduled, so maybe inlined) kernel has it.
    message = (
        rf"^main: R.call_tir of '{kernel}': load from buffer {buffer} out of bounds: "
        r"index .+ \+ 4 = 16 is outside \[0, 16\) \(status 1\)$"
    )
    with pytest.raises(Error, match=message):
        ex["main"](x)


# ---------------------------------------------------------------- shapes and indices

SYMBOLIC = """@T.prim_func
def main(a: T.handle, b: T.handle):
    n = T.int64()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i in range(n):
        B[i] = A[i + T.int64(OFFSET)]
"""
# Two sizes: whether A[i + OFFSET] stays inside A depends on the arguments, so only
# the run can tell (with one size, `i + 1` over `range(n)` leaves A on every call:
# CheckStaticBounds refuses it at compile time).
SYMBOLIC_TWO_SIZES = """@T.prim_func
def main(a: T.handle, b: T.handle):
    n = T.int64()
    m = T.int64()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (m,), "float32")
    for i in range(m):
        B[i] = A[i + T.int64(OFFSET)]
"""


def test_symbolic_shapes() -> None:
    b = np.zeros(9, "float32")
    run(SYMBOLIC, f32(9), b)
    np.testing.assert_array_equal(b, f32(9))
    assert "assert" not in lowered(prim(SYMBOLIC))  # i < n holds in `range(n)`
    with pytest.raises(Error, match=r"load from buffer A is out of bounds whenever the loop"):
        run(SYMBOLIC, f32(9), b, offset=1)
    run(SYMBOLIC_TWO_SIZES, f32(10), b, offset=1)
    np.testing.assert_array_equal(b, f32(10)[1:])
    with pytest.raises(
        Error,
        match=r"load from buffer A out of bounds: index i \+ T.int64\(1\) = 9 is outside \[0, n\) \(n = 9\)$",
    ):
        run(SYMBOLIC_TWO_SIZES, f32(9), b, offset=1)


SYMBOLIC_GRAPH = (
    GRAPH_HEADER
    + """@I.ir_module
class Module:
    @T.prim_func(private=True)
    def tail(a: T.handle, b: T.handle):
        n = T.int64()
        m = T.int64()
        A = T.match_buffer(a, (n,), "float32")
        B = T.match_buffer(b, (m,), "float32")
        for i in range(m):
            B[i] = A[i + T.int64(OFFSET)]

    @R.function
    def main(
        x: R.Tensor(("n",), "float32"), like: R.Tensor(("m",), "float32")
    ) -> R.Tensor(("m",), "float32"):
        m = T.int64()
        cls = Module
        with R.dataflow():
            y = R.call_tir(cls.tail, (x,), out_sinfo=R.Tensor((m,), "float32"))
            R.output(y)
        return y
"""
)


def test_symbolic_shapes_through_call_tir() -> None:
    ex = tvmlite.build(tvmlite.parse(SYMBOLIC_GRAPH.replace("OFFSET", "1")), checked=True)
    np.testing.assert_array_equal(ex["main"](f32(7), f32(6)), f32(7)[1:])
    with pytest.raises(
        Error,
        match=r"R.call_tir of 'tail': load from buffer A .* = 7 is outside \[0, n\) \(n = 7\)",
    ):
        ex["main"](f32(7), f32(7))


RAMP = """@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"), s: T.int32):
    for i in range(4):
        B[i * 4:i * 4 + 4] = A[T.Ramp(i * 4 + s, 1, 4)]
"""


@pytest.mark.parametrize(
    ("shift", "lane"), [(1, "lane 3 = 16"), (-1, "lane 0 = -1"), (13, "lane 3 = 16")]
)
def test_vector_ramp_accesses(shift: int, lane: str) -> None:
    b = np.zeros(16, "float32")
    run(RAMP, f32(16), b, 0)
    np.testing.assert_array_equal(b, f32(16))
    with pytest.raises(
        Error,
        match=rf"load from buffer A out of bounds: index T.Ramp\(i \* 4 \+ s, 1, 4\) at {lane} is",
    ):
        run(RAMP, f32(16), b, shift)


def test_vector_store_ramp_with_stride() -> None:
    source = """@T.prim_func
def main(A: T.Buffer((16,), "float32"), s: T.int32):
    A[T.Ramp(s, 5, 4)] = T.Broadcast(T.float32(1), 4)
"""
    a = np.zeros(16, "float32")
    run(source, a, 0)  # lanes 0, 5, 10, 15
    np.testing.assert_array_equal(np.flatnonzero(a), [0, 5, 10, 15])
    with pytest.raises(
        Error, match=r"store to buffer A out of bounds: index T.Ramp\(s, 5, 4\) at lane 3 = 16 is"
    ):
        run(source, a, 1)  # lane 3 is 16


def test_vector_gather_is_checked_lane_by_lane() -> None:
    source = """@T.prim_func
def main(A: T.Buffer((16,), "float32"), I: T.Buffer((4,), "int32"), B: T.Buffer((4,), "float32")):
    B[0:4] = A[I[T.Ramp(0, 1, 4)]]
"""
    b = np.zeros(4, "float32")
    run(source, f32(16), np.array([0, 3, 15, 2], "int32"), b)
    np.testing.assert_array_equal(b, [0, 3, 15, 2])
    for bad, lane in (([0, 3, 16, 2], "lane 2 = 16"), ([-1, 0, 0, 0], "lane 0 = -1")):
        with pytest.raises(
            Error, match=rf"load from buffer A out of bounds: index I\[0:4\] at {lane} is"
        ):
            run(source, f32(16), np.array(bad, "int32"), b)


def test_multi_dim_checks_each_axis() -> None:
    source = """@T.prim_func
def main(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32")):
    for i, j in T.grid(4, 4):
        if i < 4:  # as the T.where of SHIFT_STORE
            B[i, j] = A[i, j + OFFSET]
"""
    a = f32(16).reshape(4, 4)
    b = np.zeros((4, 4), "float32")
    run(source, a, b)
    np.testing.assert_array_equal(b, a)
    # A[0, 4] is inside A's storage (it is A[1, 0]) but outside axis 1.
    with pytest.raises(Error, match=r"index j \+ 1 = 4 on axis 1 is outside \[0, 4\)$"):
        run(source, a, b, offset=1)


# ---------------------------------------------------------------- where checks go


def test_guarded_loads_are_checked_only_when_read() -> None:
    padded = """@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((10,), "float32")):
    for i in range(10):
        B[i] = T.if_then_else(1 <= i and i < 9, A[i - 1], T.float32(0))
"""
    b = np.zeros(10, "float32")
    run(padded, f32(8), b)
    np.testing.assert_array_equal(b, [0, *range(8), 0])
    wrong_guard = padded.replace("1 <= i and i < 9", "i < 9")
    with pytest.raises(Error, match=r"index i - 1 = -1 is outside \[0, 8\)$"):
        run(wrong_guard, f32(8), b)
    # T.Select evaluates both sides: its load is made whatever the condition.
    selected = padded.replace("T.if_then_else", "T.Select")
    with pytest.raises(Error, match=r"index i - 1 = -1 is outside \[0, 8\)$"):
        run(selected, f32(8), b)


def test_while_condition_is_checked_before_every_evaluation() -> None:
    source = """@T.prim_func
def main(A: T.Buffer((8,), "int32"), B: T.Buffer((1,), "int32")):
    k = T.alloc_buffer((1,), "int32")
    k[0] = 0
    while A[k[0]] != 0:
        k[0] = k[0] + 1
    B[0] = k[0]
"""
    out = np.zeros(1, "int32")
    run(source, np.array([1, 1, 1, 0, 1, 1, 1, 1], "int32"), out)
    assert out[0] == 3
    with pytest.raises(
        Error, match=r"load from buffer A out of bounds: index k\[0\] = 8 is outside"
    ):
        run(source, np.ones(8, "int32"), out)


def test_loads_under_a_let_see_its_binding() -> None:
    source = """@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    j = T.int32()
    for i in range(8):
        B[i] = T.Let(A[j] + A[j - 1], where={j: T.max(i, OFFSET)})
"""
    b = np.zeros(8, "float32")
    run(source, f32(8), b, offset=1)
    np.testing.assert_array_equal(b, [1, 1, 3, 5, 7, 9, 11, 13])
    with pytest.raises(Error, match=r"index j - 1 = -1 is outside \[0, 8\)$"):
        run(source, f32(8), b, offset=0)


def test_checks_that_cannot_fail_are_left_out() -> None:
    copy = prim(SHIFT_LOAD, 0)
    assert "assert" not in lowered(copy)
    text = lowered(prim(SHIFT_LOAD, 1))
    assert text.count("assert") == 1
    assert 'assert T.Cast("int64", vi + 1) < T.int64(16)' in text  # 0 <= vi + 1 is known
    address = prim(
        """@T.prim_func
def main(A: T.Buffer((16,), "float32")):
    T.evaluate(T.call_extern("int32", "use", T.address_of(A[16])))
"""
    )
    assert "assert" not in lowered(address)  # an address is not an access


# ---------------------------------------------------------------- the option


def test_pass_context_config_turns_checks_on() -> None:
    mod = prim(SHIFT_LOAD, 4)
    with PassContext(config={KEY: True}):
        ex = tvmlite.build(mod)
    with pytest.raises(Error, match="out of bounds"):
        ex["main"](f32(16), np.zeros(16, "float32"))


def test_bad_option_values_are_clear_errors() -> None:
    with pytest.raises(Error, match=r"build\(\): 'checked' must be True or False, got 'yes'"):
        tvmlite.build(prim(SHIFT_LOAD), checked="yes")
    with pytest.raises(Error, match=rf"config '{KEY}' must be True or False, got 1"):
        with PassContext(config={KEY: 1}):
            tvmlite.build(prim(SHIFT_LOAD))


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TVMLITE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TVMLITE_NO_CACHE", raising=False)
    return tmp_path / "cache"


def test_checked_and_unchecked_builds_are_different_cache_entries(cache_dir) -> None:
    source = CALL_TIR.replace("OFFSET", "4")
    tvmlite.build(tvmlite.parse(source))
    assert len(list(cache_dir.glob("*.so"))) == 1
    tvmlite.build(tvmlite.parse(source), checked=True)
    assert len(list(cache_dir.glob("*.so"))) == 2
    hit = tvmlite.build(tvmlite.parse(source), checked=True)
    assert "cache" in hit.timings  # the default build fuses shift with the add
    with pytest.raises(Error, match="'fused_shift_add': load from buffer x out of bounds"):
        hit["main"](f32(16))


def test_exported_library_keeps_its_checks(tmp_path) -> None:
    ex = tvmlite.build(tvmlite.parse(CALL_TIR.replace("OFFSET", "4")), checked=True)
    lib = tvmlite.load_module(ex.export_library(tmp_path / "shift.so"))
    with pytest.raises(Error, match=r"R.call_tir of 'fused_shift_add': load from buffer x out of"):
        lib["main"](f32(16))


def test_cli_checked_flag(tmp_path, capsys) -> None:
    from tvmlite.cli import main

    path = tmp_path / "shift.tvms"
    path.write_text(T_HEADER + SHIFT_LOAD.replace("OFFSET", "4"))
    assert main(["build", str(path), "-o", "-", "--emit", "tir", "--checked"]) == 0
    assert "load from buffer A out of bounds" in capsys.readouterr().out
    assert main(["build", str(path), "-o", "-", "--emit", "tir"]) == 0
    assert "assert" not in capsys.readouterr().out


# ---------------------------------------------------------------- in-bounds programs

SAMPLE = CASES[::16]


@pytest.mark.parametrize("case", SAMPLE, ids=[c.id for c in SAMPLE])
def test_operator_numerics_identical_to_unchecked(case: Case) -> None:
    """A sample of the operator cases (op_cases_*.py): same bits either way."""
    plain = tvmlite.build(case.module())["main"](*(a.copy() for a in case.inputs))
    checked = tvmlite.build(case.module(), checked=True)["main"](*(a.copy() for a in case.inputs))
    for got, want in zip(_leaves(checked), _leaves(plain), strict=True):
        np.testing.assert_array_equal(got, want)


def _leaves(value: object) -> list[np.ndarray]:
    if isinstance(value, tuple):
        return [leaf for item in value for leaf in _leaves(item)]
    return [np.asarray(value)]


SLICE_SCATTER = (
    GRAPH_HEADER
    + """@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((6, 4), dtype="float32"), y: R.Tensor((2, 4), dtype="float32")) -> R.Tensor((6, 4), dtype="float32"):
        with R.dataflow():
            gv: R.Tensor((6, 4), dtype="float32") = R.slice_scatter(x, y, 1, 5, 2, axis=0)
            R.output(gv)
        return gv
"""
)


def test_finds_the_out_of_bounds_read_in_tvms_slice_scatter() -> None:
    """TVM's legalization of R.slice_scatter (the corpus text) takes rows of `y` at
    indices up to 2 of its 2 rows; a Select then drops them, so unchecked builds
    print the right result computed from an out-of-bounds read. tvmlite's own
    legalization of the same call reads only in bounds."""
    x, y = f32(24).reshape(6, 4), -f32(8).reshape(2, 4)
    tvm = tvmlite.build(tvmlite.parse_file(DATA / "slice_scatter.legalized.tvms"), checked=True)
    # The index as the scheduled kernel spells it (`compute` is inlined into it).
    message = r"load from buffer y out of bounds: index .+ = 2 on axis 0 is outside \[0, 2\)"
    with pytest.raises(Error, match=message):
        tvm["main"](x, y)
    want = x.copy()
    want[1:5:2] = y
    ours = tvmlite.build(tvmlite.parse(SLICE_SCATTER), checked=True)
    np.testing.assert_array_equal(ours["main"](x, y), want)


def test_checked_build_keeps_the_instruments_of_the_context() -> None:
    from tvmlite.lowering.transform import PassInstrument

    class Record(PassInstrument):
        def __init__(self) -> None:
            self.entered, self.passes = 0, []

        def enter_pass_ctx(self) -> None:
            self.entered += 1

        def run_before_pass(self, mod: object, info: object) -> None:
            self.passes.append(info.name)

    record = Record()
    with PassContext(instruments=[record]):
        tvmlite.build(tvmlite.parse(CALL_TIR.replace("OFFSET", "0")), checked=True)
    assert record.entered == 1
    assert "LegalizeOps" in record.passes

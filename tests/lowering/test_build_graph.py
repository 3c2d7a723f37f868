"""Graph functions compiled to native host code: kernels, tuples, R.If, calls
between functions, constants, match_cast, symbolic shapes, prim-only modules."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tvmlite
from tvmlite.transform import PassContext

DATA = Path(__file__).parent / "data" / "build"
RNG = np.random.default_rng(0)
NO_LEGALIZE = {"relax.transform.apply_legalize_ops": False}
GRAPH = (DATA / "graph.tvms").read_text()
PRIM_ONLY = (DATA / "prim_only.tvms").read_text()


@pytest.fixture(scope="module")
def graph() -> tvmlite.Executable:
    return tvmlite.build(tvmlite.parse(GRAPH))


def _npz_case(name: str) -> tuple[tvmlite.Executable, list[np.ndarray], list[np.ndarray]]:
    mod = tvmlite.parse_file(DATA / f"{name}.legalized.tvms")
    with PassContext(config=NO_LEGALIZE):
        ex = tvmlite.build(mod)
    npz = np.load(DATA / f"{name}.npz")
    ins = [npz[f"in{k}"] for k in range(sum(f.startswith("in") for f in npz.files))]
    outs = [npz[f"out{k}"] for k in range(sum(f.startswith("out") for f in npz.files))]
    return ex, ins, outs


def test_several_kernels_nested_tuple_out_and_call(graph: tvmlite.Executable) -> None:
    x, y = RNG.standard_normal(5).astype("float32"), RNG.standard_normal(5).astype("float32")
    d, (s1, s2) = graph["main"](x, y)
    np.testing.assert_allclose(s1, x + y, rtol=1e-6)
    np.testing.assert_allclose(d, (x + y) * 3 * 2, rtol=1e-6)
    assert not np.shares_memory(s1, s2)  # one value returned twice: two owned arrays
    s1[0] = 100.0  # results are writable and independent
    assert s2[0] != 100.0


def test_symbolic_dims_follow_the_input(graph: tvmlite.Executable) -> None:
    for n in (1, 7, 64):
        x = np.ones(n, "float32")
        d, _ = graph["main"](x, x)
        assert d.shape == (n,)
        np.testing.assert_array_equal(d, np.full(n, 12.0, "float32"))


def test_if_on_a_bool_tensor(graph: tvmlite.Executable) -> None:
    x = np.arange(4, dtype="float32")
    np.testing.assert_array_equal(graph["pick"](np.array(True), x), x + x)
    np.testing.assert_array_equal(graph["pick"](np.array(False), x), x * 10)


def test_tuple_parameter_and_returned_input_is_copied(graph: tvmlite.Executable) -> None:
    a, b = np.arange(4, dtype="float32"), np.ones(4, "float32")
    s, a2 = graph["pair"]((a, b))
    np.testing.assert_array_equal(s, a + b)
    np.testing.assert_array_equal(a2, a)
    assert not np.shares_memory(a2, a)


def test_tensor_constant(graph: tvmlite.Executable) -> None:
    x = np.array([1, 1, 1], "float32")
    np.testing.assert_array_equal(graph["with_const"](x), [2, 3, 4])


def test_match_cast_binds_and_fails_cleanly(graph: tvmlite.Executable) -> None:
    np.testing.assert_array_equal(graph["cast_to"](np.ones(4, "float32")), np.full(4, 2.0))
    with pytest.raises(
        tvmlite.TVMLiteError, match=r"match_cast to 'y': expected shape \(4,\), got \(3,\)"
    ):
        graph["cast_to"](np.ones(3, "float32"))


def test_results_survive_the_executable() -> None:
    ex = tvmlite.build(tvmlite.parse(GRAPH))
    out = ex["pick"](np.array(True), np.ones(4, "float32"))
    del ex
    import gc

    gc.collect()
    np.testing.assert_array_equal(out, np.full(4, 2.0))


def test_corpus_dynamic_mlp() -> None:
    ex, ins, outs = _npz_case("model_mlp3_dynamic_batch")
    np.testing.assert_allclose(ex["main"](*ins), outs[0], rtol=1e-4, atol=1e-5)
    batch = [np.concatenate([ins[0], ins[0]]), *ins[1:]]
    assert ex["main"](*batch).shape == (2 * ins[0].shape[0], outs[0].shape[1])


@pytest.mark.parametrize("name", ["dyn_split_tuple", "graph_tuple_outputs"])
def test_corpus_tuple_outputs(name: str) -> None:
    ex, ins, outs = _npz_case(name)
    res = ex["main"](*ins)
    assert isinstance(res, tuple) and len(res) == len(outs)
    for got, want in zip(res, outs, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_prim_only_module_is_destination_passing() -> None:
    ex = tvmlite.build(tvmlite.parse(PRIM_ONLY))
    assert ex.functions == ["twice", "fill"]
    a, b = np.arange(8, dtype="float32"), np.zeros(8, "float32")
    assert ex["twice"](a, b) is None
    np.testing.assert_array_equal(b, a * 2)
    c = np.zeros(4, "int32")
    ex["fill"](c, 7)
    np.testing.assert_array_equal(c, 7)


def test_lone_prim_func_builds_as_main() -> None:
    func = tvmlite.parse(
        "@T.prim_func\n"
        'def main(A: T.Buffer((3,), "int64")):\n'
        "    for i in range(3):\n"
        "        A[i] = T.int64(5)\n"
    )
    ex = tvmlite.build(func)
    out = np.zeros(3, "int64")
    ex["main"](out)
    np.testing.assert_array_equal(out, 5)


def test_llvm_ir_is_available(graph: tvmlite.Executable) -> None:
    assert "tvmlite_entry_main" in graph.llvm_ir()
    assert graph.total_ms > 0

"""NumPy and DLPack interop of compiled functions: zero-copy inputs, any DLPack
producer through the native fast call for graph functions and accepted by prim
functions with the same messages, owned writable outputs freed by NumPy,
`with_output("torch")`, the pipeline argument of build. Torch is optional: its
tests are skipped, saying so, when it is not installed."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tvmlite
from tvmlite.dsl.module import IRModule
from tvmlite.lowering import compile_prim_funcs
from tvmlite.lowering.pipeline import get_pipeline
from tvmlite.transform import LegalizeOps, PassContext

DATA = Path(__file__).parent / "data" / "build"


class Producer:
    """A foreign DLPack producer (wraps an array, exposes only the protocol)."""

    def __init__(self, array: np.ndarray) -> None:
        self._array = array

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._array.__dlpack_device__()


@pytest.fixture(scope="module")
def ex() -> tvmlite.Executable:
    return tvmlite.build(tvmlite.parse((DATA / "graph.tvms").read_text()))


def test_dlpack_input(ex: tvmlite.Executable) -> None:
    x = np.arange(4, dtype="float32")
    np.testing.assert_array_equal(ex["pick"](np.array(True), Producer(x)), x * 2)


def test_outputs_are_owned_numpy_arrays(ex: tvmlite.Executable) -> None:
    out = ex["pick"](np.array(True), np.ones(4, "float32"))
    assert isinstance(out, np.ndarray) and out.flags.writeable and out.flags.c_contiguous
    assert out.ctypes.data % 64 == 0  # allocated aligned by native code
    for _ in range(2000):  # freed by NumPy: no growth over many calls
        ex["pick"](np.array(False), np.ones(4, "float32"))
    gc.collect()


def test_input_memory_is_not_copied() -> None:
    seen: list[np.ndarray] = []

    @tvmlite.register_func("test.capture", override=True)
    def capture(x: np.ndarray) -> None:
        seen.append(x)

    text = (DATA / "packed.tvms").read_text().split("    @R.function")[0] + (
        "    @R.function(pure=False)\n"
        '    def main(x: R.Tensor((3,), "float32")) -> R.Tensor((3,), "float32"):\n'
        '        _ = R.call_packed("test.capture", x, sinfo_args=R.Tuple())\n'
        "        return x\n"
    )
    ex = tvmlite.build(tvmlite.parse(text))
    x = np.ones(3, "float32")
    y = ex["main"](x)
    assert np.shares_memory(seen[0], x)
    assert not np.shares_memory(y, x)  # a returned input is a copy the caller owns


def test_pipeline_forms() -> None:
    mod = tvmlite.parse((DATA / "unlegalized.tvms").read_text())
    x = np.zeros(4, "float32")
    for pipeline in (None, "fast", "default", "minimal", LegalizeOps(), [LegalizeOps()]):
        np.testing.assert_array_equal(tvmlite.build(mod, pipeline=pipeline)["main"](x), 1.0)
    with PassContext(config={"relax.transform.apply_legalize_ops": False}):
        with pytest.raises(tvmlite.TVMLiteError, match="R.exp"):
            tvmlite.build(mod)
    with pytest.raises(tvmlite.TVMLiteError, match="unknown pipeline 'fastest'"):
        tvmlite.build(mod, pipeline="fastest")
    assert get_pipeline("default").name == "default"


def test_pipeline_function_and_target_checks() -> None:
    mod = tvmlite.parse((DATA / "prim_only.tvms").read_text())
    calls: list[str] = []

    def mark(m: IRModule) -> IRModule:
        calls.append("ran")
        return m

    tvmlite.build(mod, pipeline=mark)
    assert calls == ["ran"]
    with pytest.raises(tvmlite.TVMLiteError, match="unsupported target 'cuda'"):
        tvmlite.build(mod, target="cuda")
    with pytest.raises(tvmlite.TVMLiteError, match="takes an IRModule"):
        tvmlite.build("not a module")


# ------------------------------------------------------------ any DLPack producer

ADD_GRAPH = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32")) -> R.Tensor((2, 3), "float32"):
        z = R.add(x, y)
        return z

    @R.function
    def pair(x: R.Tensor((3,), "int64")) -> R.Tuple(R.Tensor((3,), "int64"), R.Prim("int64")):
        return (x, R.prim_value(T.int64(7)))
"""
SCALE = """
@T.prim_func
def scale(A: T.Buffer((2, 3), "float32"), B: T.Buffer((2, 3), "float32")):
    for i, j in T.grid(2, 3):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
"""


@pytest.fixture(scope="module")
def add_ex() -> tvmlite.Executable:
    return tvmlite.build(tvmlite.parse(ADD_GRAPH), cache=False)


@pytest.fixture(scope="module")
def scale() -> Any:
    return compile_prim_funcs({"scale": tvmlite.parse(SCALE)})["scale"]


def torch_or_skip() -> Any:
    return pytest.importorskip("torch", reason="torch is not installed (an optional test extra)")


def test_producers_take_the_fast_call(add_ex, monkeypatch) -> None:
    x, y = np.ones((2, 3), "float32"), np.arange(6, dtype="float32").reshape(2, 3)
    main = add_ex["main"]
    main(x, y)  # makes the native wrapper
    assert main._fast is not None
    # The wrapper hands producers to call_python, which imports them and calls the
    # wrapper again: the ctypes path (fill_tensor) is never reached.
    monkeypatch.setattr(tvmlite.runtime.dlpack, "fill_tensor", None)
    np.testing.assert_array_equal(main(Producer(x), Producer(y)), x + y)
    np.testing.assert_array_equal(main(x, Producer(y)), x + y)


def test_prim_functions_take_producers_and_write_through_them(scale) -> None:
    a = np.arange(6, dtype="float32").reshape(2, 3)
    b = np.zeros((2, 3), "float32")
    scale(Producer(a), Producer(b))
    np.testing.assert_array_equal(b, a * 2)


def test_graph_and_prim_functions_refuse_alike(add_ex, scale) -> None:
    bad = [[0.0] * 3] * 2
    with pytest.raises(tvmlite.TVMLiteError) as graph:
        add_ex["main"](bad, np.ones((2, 3), "float32"))
    with pytest.raises(tvmlite.TVMLiteError) as prim:
        scale(bad, np.ones((2, 3), "float32"))
    expected = "parameter 'x': expected a tensor (numpy.ndarray or an object with __dlpack__), got"
    assert str(graph.value).startswith("main: " + expected)
    assert str(prim.value) == str(graph.value).replace("main: ", "scale: ").replace("'x'", "'A'")


def test_with_output_numpy_and_bad_kinds(add_ex) -> None:
    x = np.ones((2, 3), "float32")
    assert isinstance(add_ex.with_output("numpy")["main"](x, x), np.ndarray)
    assert add_ex.with_output("numpy").functions == add_ex.functions
    with pytest.raises(tvmlite.TVMLiteError, match="kind must be one of numpy, torch, got 'jax'"):
        add_ex.with_output("jax")


def test_function_with_output_takes_the_module_kinds(add_ex) -> None:
    """`ex["main"].with_output("numpy")` is the kind the module's switch takes; a
    bad kind is refused when asked, not at the call."""
    x = np.ones((2, 3), "float32")
    main = add_ex["main"]
    np.testing.assert_array_equal(main.with_output("numpy")(x, x), x + x)
    doubled = main.with_output(lambda a: a * 2)(x, x)
    np.testing.assert_array_equal(doubled, (x + x) * 2)
    with pytest.raises(tvmlite.TVMLiteError, match="kind must be one of numpy, torch, got 'jax'"):
        main.with_output("jax")
    with pytest.raises(tvmlite.TVMLiteError, match="or a callable, got int"):
        main.with_output(3)


def test_torch_in_torch_out(add_ex) -> None:
    torch = torch_or_skip()
    x, y = torch.ones(2, 3), torch.arange(6, dtype=torch.float32).reshape(2, 3)
    plain = add_ex["main"](x, y)
    assert isinstance(plain, np.ndarray)
    np.testing.assert_array_equal(plain, (x + y).numpy())
    out = add_ex.with_output("torch")["main"](x, y)
    assert isinstance(out, torch.Tensor) and torch.equal(out, x + y)
    (a, seven) = add_ex.with_output("torch")["pair"](torch.tensor([1, 2, 3]))
    assert isinstance(a, torch.Tensor) and a.tolist() == [1, 2, 3] and seven == 7
    with pytest.raises(tvmlite.TVMLiteError, match="parameter 'y': expected dtype float32"):
        add_ex["main"](x, y.double())


def test_prim_function_writes_a_torch_tensor_in_place(scale) -> None:
    torch = torch_or_skip()
    a, b = torch.arange(6, dtype=torch.float32).reshape(2, 3), torch.zeros(2, 3)
    scale(a, b)
    assert torch.equal(b, a * 2)
    with pytest.raises(tvmlite.TVMLiteError, match="parameter 'B': expected a C-contiguous"):
        scale(a, torch.zeros(3, 2).t())

"""Any DLPack producer as an input, to graph functions (through the native fast
call) and prim functions alike, with the same messages for what is not a
tensor; `with_output("torch")` for torch tensors out. Torch is optional: its
tests are skipped, saying so, when it is not installed."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tvmlite
from tvmlite.lowering import compile_prim_funcs

GRAPH = """
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
PRIM = """
@T.prim_func
def scale(A: T.Buffer((2, 3), "float32"), B: T.Buffer((2, 3), "float32")):
    for i, j in T.grid(2, 3):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
"""


class Producer:
    """A tensor known only through DLPack."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = array

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.array.__dlpack_device__()


@pytest.fixture(scope="module")
def ex() -> tvmlite.Executable:
    return tvmlite.build(tvmlite.parse(GRAPH), cache=False)


@pytest.fixture(scope="module")
def scale() -> Any:
    return compile_prim_funcs({"scale": tvmlite.parse(PRIM)})["scale"]


def torch_or_skip() -> Any:
    return pytest.importorskip("torch", reason="torch is not installed (an optional test extra)")


def test_producers_take_the_fast_call(ex, monkeypatch) -> None:
    x, y = np.ones((2, 3), "float32"), np.arange(6, dtype="float32").reshape(2, 3)
    main = ex["main"]
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


def test_graph_and_prim_functions_refuse_alike(ex, scale) -> None:
    bad = [[0.0] * 3] * 2
    with pytest.raises(tvmlite.TVMLiteError) as graph:
        ex["main"](bad, np.ones((2, 3), "float32"))
    with pytest.raises(tvmlite.TVMLiteError) as prim:
        scale(bad, np.ones((2, 3), "float32"))
    expected = "parameter 'x': expected a tensor (numpy.ndarray or an object with __dlpack__), got"
    assert str(graph.value).startswith("main: " + expected)
    assert str(prim.value) == str(graph.value).replace("main: ", "scale: ").replace("'x'", "'A'")


def test_with_output_numpy_and_bad_kinds(ex) -> None:
    x = np.ones((2, 3), "float32")
    assert isinstance(ex.with_output("numpy")["main"](x, x), np.ndarray)
    assert ex.with_output("numpy").functions == ex.functions
    with pytest.raises(tvmlite.TVMLiteError, match="kind must be one of numpy, torch, got 'jax'"):
        ex.with_output("jax")


def test_torch_in_torch_out(ex) -> None:
    torch = torch_or_skip()
    x, y = torch.ones(2, 3), torch.arange(6, dtype=torch.float32).reshape(2, 3)
    plain = ex["main"](x, y)
    assert isinstance(plain, np.ndarray)
    np.testing.assert_array_equal(plain, (x + y).numpy())
    out = ex.with_output("torch")["main"](x, y)
    assert isinstance(out, torch.Tensor) and torch.equal(out, x + y)
    (a, seven) = ex.with_output("torch")["pair"](torch.tensor([1, 2, 3]))
    assert isinstance(a, torch.Tensor) and a.tolist() == [1, 2, 3] and seven == 7
    with pytest.raises(tvmlite.TVMLiteError, match="parameter 'y': expected dtype float32"):
        ex["main"](x, y.double())


def test_prim_function_writes_a_torch_tensor_in_place(scale) -> None:
    torch = torch_or_skip()
    a, b = torch.arange(6, dtype=torch.float32).reshape(2, 3), torch.zeros(2, 3)
    scale(a, b)
    assert torch.equal(b, a * 2)
    with pytest.raises(tvmlite.TVMLiteError, match="parameter 'B': expected a C-contiguous"):
        scale(a, torch.zeros(3, 2).t())

# ruff: noqa: E501  (TVMScript texts)
"""What the float32 math library is for: kernels of transcendental math come out
as vector code, with no libm call per lane, both written by hand and as the
default build makes them from the graph operators that use it (gelu in both
forms, silu, sigmoid, softmax, the norms, pow)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tvmlite

LIBM = re.compile(r"@(expf|exp2f|logf|log2f|log10f|log1pf|tanhf|erff|powf)\b")
# vector floating-point arithmetic: its lane counts
VECTOR_MATH = re.compile(
    r"(?:= f(?:mul|add|sub|div)[a-z ]* <|@llvm\.fma\.v)(\d+)(?: x )?(?:float|double|f32|f64)"
)

KERNEL = """
@T.prim_func
def main(A: T.Buffer((1024,), "float32"), C: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32")):
    T.func_attr({{"tir.noalias": True}})
    for i in T.vectorized(1024):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = {expr}
"""


def assert_vector_math(ir: str) -> None:
    assert not LIBM.findall(ir), sorted(set(LIBM.findall(ir)))
    widths = {int(n) for n in VECTOR_MATH.findall(ir)}
    assert widths and max(widths) >= 4, "no vector arithmetic: the math was not vectorized"


@pytest.mark.parametrize(
    "expr",
    [
        "T.exp(A[vi])",
        "T.exp2(A[vi])",
        "T.log(A[vi])",
        "T.log2(A[vi])",
        "T.log10(A[vi])",
        "T.log1p(A[vi])",
        "T.tanh(A[vi])",
        "T.erf(A[vi])",
        "T.sigmoid(A[vi])",
        "T.pow(A[vi], C[vi])",
    ],
)
def test_vectorized_loop_of_math_is_vector_code(expr: str) -> None:
    ex = tvmlite.build(tvmlite.parse(KERNEL.format(expr=expr)), cache=False)
    assert_vector_math(ex.llvm_ir())


GRAPH = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((64, 768), "float32"), g: R.Tensor((768,), "float32"), b: R.Tensor((768,), "float32")) -> R.Tensor((64, 768), "float32"):
        with R.dataflow():
{body}
            R.output(y)
        return y
"""
# GPT-2's MLP activation as torch.export writes it (power, tanh and the rest)
GPT2_GELU = """\
            h = R.multiply(x, R.const(0.5, "float32"))
            c = R.power(x, R.const(3.0, "float32"))
            d = R.multiply(c, R.const(0.044714998453855515, "float32"))
            e = R.add(x, d)
            f = R.multiply(e, R.const(0.79788458347320557, "float32"))
            t = R.tanh(f)
            u = R.add(t, R.const(1.0, "float32"))
            y = R.multiply(h, u)"""


def _gelu_tanh(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


def _erf(x: np.ndarray) -> np.ndarray:
    import math  # noqa: PLC0415

    return np.vectorize(math.erf)(x)


def _layer_norm(x: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(x.var(-1, keepdims=True) + 1e-5) * g + b


def _rms_norm(x: np.ndarray, g: np.ndarray) -> np.ndarray:
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-5) * g


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


CASES = {
    "gelu_tanh": ("            y = R.nn.gelu_tanh(x)", lambda x, g, b: _gelu_tanh(x)),
    "gpt2_gelu": (GPT2_GELU, lambda x, g, b: _gelu_tanh(x)),
    "gelu": ("            y = R.nn.gelu(x)", lambda x, g, b: 0.5 * x * (1 + _erf(x / np.sqrt(2)))),
    "silu": ("            y = R.nn.silu(x)", lambda x, g, b: x / (1 + np.exp(-x))),
    "sigmoid": ("            y = R.sigmoid(x)", lambda x, g, b: 1 / (1 + np.exp(-x))),
    "softmax": ("            y = R.nn.softmax(x, axis=-1)", lambda x, g, b: _softmax(x)),
    "layer_norm": ("            y = R.nn.layer_norm(x, g, b, axes=[-1])", _layer_norm),
    "rms_norm": ("            y = R.nn.rms_norm(x, g, axes=[-1])", lambda x, g, b: _rms_norm(x, g)),
    "power": ("            y = R.power(R.abs(x), x)", lambda x, g, b: np.abs(x) ** x),
}


@pytest.mark.parametrize("name", list(CASES))
def test_default_build_of_graph_math_is_vector_code(name: str) -> None:
    body, reference = CASES[name]
    ex = tvmlite.build(tvmlite.parse(GRAPH.format(body=body)), cache=False)
    assert_vector_math(ex.llvm_ir())
    rng = np.random.default_rng(0)
    x, g, b = (rng.standard_normal(s).astype("float32") for s in ((64, 768), (768,), (768,)))
    got = ex["main"](x, g, b)
    want = reference(*(a.astype(np.float64) for a in (x, g, b)))
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6)

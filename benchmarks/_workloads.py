"""The anchor workloads (benchmarks/workloads/: the shared reference/workloads/
with its workloads.json, and issue 22's gelu_mul and wide softmax): their texts,
their inputs and their NumPy references. Imports only NumPy, so every benchmark
process (the NumPy, tvmlite and TVM workers of run.py alike) makes the same
inputs from the same seed."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

HERE = Path(__file__).parent / "workloads"
MLP_WEIGHT_SCALE = 0.05  # workloads.json: "the MLP's weights scaled by 0.05"


@dataclass(frozen=True)
class Workload:
    """One entry of workloads.json."""

    name: str
    desc: str
    file: str
    inputs: tuple[tuple[tuple[int, ...], str], ...]
    numpy_reference: str
    uses_blas: bool
    flops: int | None
    bytes: int

    @property
    def text(self) -> str:
        return (HERE / self.file).read_text()

    def make_inputs(self, seed: int = 0) -> list[np.ndarray]:
        """Standard normal inputs (the MLP's weights and biases scaled down)."""
        rng = np.random.default_rng(seed)
        arrays = [rng.standard_normal(shape).astype(dtype) for shape, dtype in self.inputs]
        if self.name.startswith("mlp"):
            arrays[1:] = [(a * MLP_WEIGHT_SCALE).astype(a.dtype) for a in arrays[1:]]
        return arrays

    def reference(self) -> Callable[..., np.ndarray]:
        """The NumPy computation workloads.json names for this workload."""
        for prefix, make in FAMILIES:
            if self.name.startswith(prefix):
                return make(self)
        raise ValueError(f"workload {self.name!r}: no NumPy reference for its family")


def load(directory: Path = HERE) -> list[Workload]:
    """The workloads of workloads.json, in its order."""
    data = json.loads((directory / "workloads.json").read_text())
    return [
        Workload(
            name=w["name"],
            desc=w["desc"],
            file=w["file"],
            inputs=tuple((tuple(i["shape"]), i["dtype"]) for i in w["inputs"]),
            numpy_reference=w["numpy_reference"],
            uses_blas=w["uses_blas_in_numpy"],
            flops=w["flops"],
            bytes=w["bytes"],
        )
        for w in data["workloads"]
    ]


def by_name(name: str) -> Workload:
    for w in load():
        if w.name == name:
            return w
    raise KeyError(name)


def tolerance(dtype: np.dtype) -> float:
    """Largest error allowed relative to the reference's largest magnitude: the
    square root of the dtype's epsilon (3.5e-4 for float32) leaves room for a
    different summation order and still catches a wrong result; integers exact."""
    if np.issubdtype(dtype, np.floating):
        return float(np.sqrt(np.finfo(dtype).eps))
    return 0.0


def relative_error(out: np.ndarray, ref: np.ndarray) -> float:
    """max |out - ref| / max |ref| (inf on a shape or dtype mismatch or NaN)."""
    if out.shape != ref.shape or out.dtype != ref.dtype:
        return float("inf")
    diff = np.abs(out.astype(np.float64) - ref.astype(np.float64))
    scale = max(float(np.max(np.abs(ref), initial=0.0)), np.finfo(np.float64).tiny)
    err = float(np.max(diff, initial=0.0)) / scale
    return err if err == err else float("inf")


def _matmul(_: Workload) -> Callable[..., np.ndarray]:
    return lambda a, b: a @ b


def _conv2d(w: Workload) -> Callable[..., np.ndarray]:
    match = re.search(r"stride (\d+) pad (\d+)", w.desc)
    if match is None:
        raise ValueError(f"workload {w.name!r}: desc names no 'stride S pad P'")
    stride, pad = int(match[1]), int(match[2])

    def conv(x: np.ndarray, k: np.ndarray) -> np.ndarray:
        """pad + im2col copy + one sgemm (NCHW, OIHW)."""
        n, c, _, _ = x.shape
        o, _, kh, kw = k.shape
        xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
        win = sliding_window_view(xp, (kh, kw), axis=(2, 3))[:, :, ::stride, ::stride]
        oh, ow = win.shape[2], win.shape[3]
        cols = win.transpose(0, 1, 4, 5, 2, 3).reshape(n, c * kh * kw, oh * ow)
        return (k.reshape(o, -1) @ cols).reshape(n, o, oh, ow)

    return conv


def _mlp(_: Workload) -> Callable[..., np.ndarray]:
    def mlp(x: np.ndarray, *params: np.ndarray) -> np.ndarray:
        """x @ w + b per layer, relu between layers."""
        layers = list(zip(params[::2], params[1::2], strict=True))
        for i, (w, b) in enumerate(layers):
            x = x @ w + b
            if i < len(layers) - 1:
                x = np.maximum(x, 0)
        return x

    return mlp


def _softmax(_: Workload) -> Callable[..., np.ndarray]:
    def softmax(x: np.ndarray) -> np.ndarray:
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    return softmax


def _layernorm(_: Workload) -> Callable[..., np.ndarray]:
    def layernorm(x: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
        mean = x.mean(axis=-1, keepdims=True)
        var = x.var(axis=-1, keepdims=True)
        return (x - mean) / np.sqrt(var + np.float32(1e-5)) * g + b

    return layernorm


def _add_relu(_: Workload) -> Callable[..., np.ndarray]:
    return lambda a, b: np.maximum(a + b, 0)


def _gelu_mul(_: Workload) -> Callable[..., np.ndarray]:
    beta = np.float32(np.sqrt(2 / np.pi))
    kappa = np.float32(0.044715)

    def gelu_mul(x: np.ndarray, g: np.ndarray) -> np.ndarray:
        """PyTorch's tanh gelu (x cubed as x * x * x, as its CPU kernel does), times g."""
        inner = beta * (x + kappa * (x * x * x))
        return np.float32(0.5) * x * (np.float32(1) + np.tanh(inner)) * g

    return gelu_mul


def _add(_: Workload) -> Callable[..., np.ndarray]:
    return lambda a, b: a + b


# name prefix -> the reference's maker; the first prefix that matches wins
FAMILIES: tuple[tuple[str, Callable[[Workload], Callable[..., Any]]], ...] = (
    ("matmul", _matmul),
    ("bmm", _matmul),
    ("conv2d", _conv2d),
    ("mlp", _mlp),
    ("softmax", _softmax),
    ("layernorm", _layernorm),
    ("add_relu", _add_relu),
    ("gelu_mul", _gelu_mul),
    ("add", _add),
)

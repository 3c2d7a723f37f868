"""The generated modules of `compile_scaling.py`, each with its inputs and
NumPy's result for `main` (one binding per line of the graph function):

  mix          a transformer encoder layer (layer norms, projections as
               matmul + bias, reshapes and transposes into heads, scaled
               softmax attention, a GELU MLP, residuals), repeated with fresh
               weights per layer;
  elementwise  a chain of add / multiply / relu / tanh / subtract / sigmoid;
  matmul       a chain of (16, 32) x (32, 32) matmuls;
  reshape      a chain of reshapes through four shapes;
  functions    n graph functions of three bindings each, and a `main` calling
               the last.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

Array = np.ndarray
F32 = 'dtype="float32"'


@dataclass
class Program:
    """A generated module: its text, its inputs, and NumPy's result for `main`."""

    params: list[tuple[str, tuple[int, ...]]] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    inputs: list[Array] = field(default_factory=list)
    values: dict[str, Array] = field(default_factory=dict)
    rng: np.random.Generator = field(default_factory=lambda: np.random.default_rng(0))
    count: int = 0

    def param(
        self, name: str, shape: tuple[int, ...], scale: float = 1.0, offset: float = 0.0
    ) -> str:
        self.params.append((name, shape))
        value = (self.rng.standard_normal(shape) * scale + offset).astype("float32")
        self.inputs.append(value)
        self.values[name] = value
        return name

    def bind(self, expr: str, value: Array) -> str:
        """`lvK: R.Tensor(shape) = expr`, whose NumPy value is `value`."""
        name = f"lv{self.count}"
        self.count += 1
        self.lines.append(f"{name}: {tensor(value.shape)} = {expr}")
        self.values[name] = value.astype("float32")
        return name

    def text(self, out: str) -> str:
        sig = ", ".join(f"{p}: {tensor(s)}" for p, s in self.params)
        ret = tensor(self.values[out].shape)
        body = "\n".join(f"            {line}" for line in self.lines)
        return (
            "@I.ir_module\nclass Module:\n    @R.function\n"
            f"    def main({sig}) -> {ret}:\n        with R.dataflow():\n{body}\n"
            f"            R.output({out})\n        return {out}\n"
        )


def tensor(shape: tuple[int, ...]) -> str:
    dims = ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "")
    return f"R.Tensor(({dims}), {F32})"


def shape_expr(shape: tuple[int, ...]) -> str:
    return f"R.shape([{', '.join(map(str, shape))}])"


def elementwise(n: int) -> tuple[str, list[Array], Array]:
    p = Program()
    x = p.param("x", (16, 32))
    v = p.values
    ops: list[tuple[str, Callable[[Array], Array]]] = [
        ("R.add({0}, {0})", lambda a: a + a),
        ('R.multiply({0}, R.const(0.5, "float32"))', lambda a: a * np.float32(0.5)),
        ("R.nn.relu({0})", lambda a: np.maximum(a, 0)),
        ("R.tanh({0})", np.tanh),
        ('R.subtract({0}, R.const(1.0, "float32"))', lambda a: a - np.float32(1)),
        ("R.sigmoid({0})", lambda a: 1 / (1 + np.exp(-a))),
    ]
    for i in range(n):
        text, fn = ops[i % len(ops)]
        x = p.bind(text.format(x), fn(v[x]))
    return p.text(x), p.inputs, v[x]


def matmul(n: int) -> tuple[str, list[Array], Array]:
    p = Program()
    x = p.param("x", (16, 32))
    w = p.param("w", (32, 32))
    p.values[w][:] = np.eye(32, dtype="float32")[p.rng.permutation(32)]  # exact
    p.inputs[1] = p.values[w]
    for _ in range(n):
        x = p.bind(f'R.matmul({x}, {w}, out_dtype="float32")', p.values[x] @ p.values[w])
    return p.text(x), p.inputs, p.values[x]


def reshape(n: int) -> tuple[str, list[Array], Array]:
    p = Program()
    x = p.param("x", (16, 32))
    shapes = [(2, 8, 32), (512,), (4, 128), (16, 32)]
    for i in range(n):
        shape = shapes[i % 4] if i < n - 1 else (16, 32)
        x = p.bind(f"R.reshape({x}, {shape_expr(shape)})", p.values[x].reshape(shape))
    return p.text(x), p.inputs, p.values[x]


def _layer_norm(p: Program, x: str, k: int, name: str) -> str:
    gamma = p.param(f"{name}_w{k}", (32,), 0.1, offset=1.0)
    beta = p.param(f"{name}_b{k}", (32,), 0.1)
    a, v = p.values[x], p.values
    norm = (a - a.mean(-1, keepdims=True)) / np.sqrt(a.var(-1, keepdims=True) + 1e-5)
    expr = f"R.nn.layer_norm({x}, {gamma}, {beta}, axes=[-1], epsilon=1e-05)"
    return p.bind(expr, norm * v[gamma] + v[beta])


def _linear(p: Program, x: str, k: int, name: str, d_in: int, d_out: int) -> str:
    """x (16, d_in) @ W^T + b, TVM's frontend style: permute_dims, matmul, add."""
    w = p.param(f"{name}_w{k}", (d_out, d_in), 1 / math.sqrt(d_in))
    b = p.param(f"{name}_b{k}", (d_out,), 0.1)
    v = p.values
    wt = p.bind(f"R.permute_dims({w}, axes=[1, 0])", v[w].T)
    y = p.bind(f'R.matmul({x}, {wt}, out_dtype="float32")', v[x] @ v[wt])
    return p.bind(f"R.add({y}, {b})", v[y] + v[b])


def _heads(p: Program, x: str) -> str:
    """(16, 32) -> (8, 8, 4): batch 2 x heads 4 by sequence 8 by head dim 8."""
    v = p.values
    a = p.bind(f"R.reshape({x}, {shape_expr((2, 8, 4, 8))})", v[x].reshape(2, 8, 4, 8))
    t = p.bind(f"R.permute_dims({a}, axes=[0, 2, 1, 3])", v[a].transpose(0, 2, 1, 3))
    return p.bind(f"R.reshape({t}, {shape_expr((8, 8, 8))})", v[t].reshape(8, 8, 8))


def _erf(a: Array) -> Array:
    return np.vectorize(math.erf, otypes=["float64"])(a.astype("float64"))


def mix(n: int) -> tuple[str, list[Array], Array]:
    """Transformer encoder layers (46 bindings each) until there are n bindings."""
    p = Program()
    v = p.values
    h = p.param("x", (2, 8, 32))
    k = 0
    while p.count < n:
        x2 = p.bind(f"R.reshape({h}, {shape_expr((16, 32))})", v[h].reshape(16, 32))
        ln = _layer_norm(p, x2, k, "ln1")
        q, kk, vv = (_heads(p, _linear(p, ln, k, m, 32, 32)) for m in ("q", "k", "v"))
        kt = p.bind(f"R.permute_dims({kk}, axes=[0, 2, 1])", v[kk].transpose(0, 2, 1))
        s = p.bind(f'R.matmul({q}, {kt}, out_dtype="float32")', v[q] @ v[kt])
        scale = 'R.const(0.35355339, "float32")'
        s = p.bind(f"R.multiply({s}, {scale})", v[s] * np.float32(0.35355339))
        e = np.exp(v[s] - v[s].max(-1, keepdims=True))
        s = p.bind(f"R.nn.softmax({s}, axis=-1)", e / e.sum(-1, keepdims=True))
        o = p.bind(f'R.matmul({s}, {vv}, out_dtype="float32")', v[s] @ v[vv])
        o = p.bind(f"R.reshape({o}, {shape_expr((2, 4, 8, 8))})", v[o].reshape(2, 4, 8, 8))
        o = p.bind(f"R.permute_dims({o}, axes=[0, 2, 1, 3])", v[o].transpose(0, 2, 1, 3))
        o = p.bind(f"R.reshape({o}, {shape_expr((16, 32))})", v[o].reshape(16, 32))
        o = _linear(p, o, k, "o", 32, 32)
        r = p.bind(f"R.add({x2}, {o})", v[x2] + v[o])
        ln = _layer_norm(p, r, k, "ln2")
        f = _linear(p, ln, k, "fc1", 32, 64)
        g = 0.5 * v[f] * (1 + _erf(v[f] / math.sqrt(2)))
        f = p.bind(f"R.nn.gelu({f})", g)
        f = _linear(p, f, k, "fc2", 64, 32)
        r = p.bind(f"R.add({r}, {f})", v[r] + v[f])
        h = p.bind(f"R.reshape({r}, {shape_expr((2, 8, 32))})", v[r].reshape(2, 8, 32))
        k += 1
    return p.text(h), p.inputs, v[h]


def functions(n: int) -> tuple[str, list[Array], Array]:
    """n graph functions `f{i}` (add, relu, multiply; shapes vary with i) and a
    `main` calling the last one."""
    parts = ["@I.ir_module\nclass Module:\n"]
    for i in range(n):
        t = tensor((4, 8 + i % 8))
        parts.append(
            f"    @R.function\n    def f{i}(x: {t}) -> {t}:\n        with R.dataflow():\n"
            f"            a: {t} = R.add(x, x)\n            b: {t} = R.nn.relu(a)\n"
            f'            c: {t} = R.multiply(b, R.const({i % 5 + 1}.0, "float32"))\n'
            f"            R.output(c)\n        return c\n"
        )
    t = tensor((4, 8 + (n - 1) % 8))
    parts.append(
        f"    @R.function\n    def main(x: {t}) -> {t}:\n"
        f"        y: {t} = Module.f{n - 1}(x)\n        return y\n"
    )
    x = np.random.default_rng(0).standard_normal((4, 8 + (n - 1) % 8)).astype("float32")
    return "".join(parts), [x], np.maximum(x + x, 0) * np.float32((n - 1) % 5 + 1)


WORKLOADS: dict[str, Callable[[int], tuple[str, list[Array], Array]]] = {
    "mix": mix,
    "elementwise": elementwise,
    "matmul": matmul,
    "reshape": reshape,
    "functions": functions,
}

"""How does build time grow with the size of a module? Generated modules of n
bindings in one graph function (n = 250 ... 4000) and of many graph functions,
built with the "minimal" and the "default" (fusing) pipelines; times per stage,
the exponent fitted to the total (time ~ n^k: k = 1 is linear), and TVM's
`tvm.compile(mod, target="llvm")` on the same text when apache-tvm is importable.

  python benchmarks/compile_scaling.py [--sizes 250 500 1000 2000 4000]
      [--functions 250 500 1000 2000] [--kinds mix elementwise matmul reshape]
      [--pipelines minimal default] [--repeat 1] [--max-seconds 60] [--no-tvm]

Workloads (one binding per line of the graph function):
  mix          a transformer encoder layer (layer norms, projections as
               matmul + bias, reshapes and transposes into heads, scaled
               softmax attention, a GELU MLP, residuals), repeated with fresh
               weights per layer;
  elementwise  a chain of add / multiply / relu / tanh / subtract / sigmoid;
  matmul       a chain of (16, 32) x (32, 32) matmuls;
  reshape      a chain of reshapes through four shapes;
  functions    n graph functions of three bindings each (the sizes of
               `--functions`).

Each build's output is checked against NumPy before it is timed. Times are in
ms, the best of `--repeat` builds (tvmlite and TVM alternate round by round);
the stages are the parse of the text (not part of the build), the passes
(`lower`), then code generation: kernels lowered to flat TIR, LLVM IR built
(`codegen`) and printed, parsed by LLVM, optimized, compiled to machine code.
Builds bypass the compile cache. A workload stops growing once one build
takes longer than `--max-seconds`. TVM is imported only here, and only if
present; its parse of the text is not timed either.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import tvmlite
from tvmlite.lowering.build import lower
from tvmlite.lowering.target import Target
from tvmlite.runtime.executable import Executable

Array = np.ndarray
STAGES = ("lower", "kernels", "codegen", "print", "parse", "optimize", "machine_code")
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


# ---------------------------------------------------------------- workloads


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


# ---------------------------------------------------------------- timing


def build_stages(text: str, pipeline: str) -> tuple[dict[str, float], Any]:
    """ms per stage of one build (parse of the text included, not in `total`)."""
    start = time.perf_counter()
    mod = tvmlite.parse(text)
    parsed = time.perf_counter()
    lowered = lower(mod, Target.of("llvm"), pipeline)
    passes = time.perf_counter()
    ex = Executable(lowered)
    done = time.perf_counter()
    ms = {"text": (parsed - start) * 1e3, "lower": (passes - parsed) * 1e3}
    ms |= {"kernels" if k == "lower" else k: t for k, t in ex.timings.items()}
    ms["total"] = (done - parsed) * 1e3
    return ms, ex


def tvm_compile() -> Callable[[str], float] | None:
    """ms of `tvm.compile` on a text (its parse not timed), or None without TVM."""
    try:
        import tvm  # noqa: PLC0415 - optional, benchmark only
    except ImportError:
        return None

    def run(text: str) -> float:
        mod = tvm.script.from_source(text)
        start = time.perf_counter()
        tvm.compile(mod, target="llvm")
        return (time.perf_counter() - start) * 1e3

    return run


def fit_exponent(sizes: list[int], times: list[float]) -> float | None:
    """k of the least-squares fit log t = k log n + c."""
    if len(sizes) < 2:
        return None
    xs, ys = [math.log(s) for s in sizes], [math.log(t) for t in times]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / den


def check(ex: Any, inputs: list[Array], want: Array, what: str) -> None:
    got = ex["main"](*inputs)
    if not np.allclose(got, want, rtol=2e-3, atol=2e-3):
        worst = float(np.max(np.abs(got - want)))
        raise SystemExit(f"{what}: wrong result (max abs error {worst:.3g})")


def run_workload(kind: str, sizes: list[int], pipeline: str, args: Any, tvm: Any) -> None:
    print(f"\n{kind}, pipeline={pipeline}")
    header = f"{'n':>5} {'text':>7} " + " ".join(f"{s[:8]:>8}" for s in STAGES)
    print(header + f" {'total':>8}" + (f" {'tvm':>8} {'tvm/tl':>7}" if tvm else ""))
    done_sizes: list[int] = []
    totals: list[float] = []
    for n in sizes:
        text, inputs, want = WORKLOADS[kind](n)
        ms, ex = build_stages(text, pipeline)
        check(ex, inputs, want, f"{kind} n={n} {pipeline}")
        best, ref = ms, None
        for _ in range(args.repeat):
            ms, _ = build_stages(text, pipeline)
            best = ms if ms["total"] < best["total"] else best
            if tvm is not None:
                t = tvm(text)
                ref = t if ref is None else min(ref, t)
        row = f"{n:5d} {best['text']:7.0f} " + " ".join(f"{best.get(s, 0):8.0f}" for s in STAGES)
        row += f" {best['total']:8.0f}"
        if ref is not None:
            row += f" {ref:8.0f} {ref / best['total']:7.2f}"
        print(row, flush=True)
        done_sizes.append(n)
        totals.append(best["total"])
        if best["total"] > args.max_seconds * 1e3:
            print(f"  (stopped: over {args.max_seconds} s)")
            break
    k = fit_exponent(done_sizes, totals)
    if k is not None:
        print(f"  fitted exponent of the total: {k:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[250, 500, 1000, 2000, 4000])
    ap.add_argument("--functions", type=int, nargs="+", default=[250, 500, 1000, 2000])
    ap.add_argument("--kinds", nargs="+", default=list(WORKLOADS), choices=list(WORKLOADS))
    ap.add_argument("--pipelines", nargs="+", default=["minimal", "default"])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--max-seconds", type=float, default=60.0)
    ap.add_argument("--no-tvm", action="store_true")
    args = ap.parse_args()
    tvm = None if args.no_tvm else tvm_compile()
    build_stages(elementwise(2)[0], "minimal")  # warm up: LLVM, support library
    for kind in args.kinds:
        sizes = args.functions if kind == "functions" else args.sizes
        for pipeline in args.pipelines:
            run_workload(kind, sizes, pipeline, args, tvm)


if __name__ == "__main__":
    main()

"""Do contractions keep their speed when M, N or K divides no tile? Matmuls,
dense layers, batch matmuls and conv2d of odd sizes (random M, N, K in 1..2048
plus named shapes from real models), built with `tvmlite.build(mod)`, each
against NumPy and against its nearest neighbour whose sizes are multiples of
64, as ratios from one run.

  python benchmarks/odd_shapes.py [--random 12] [--seed 0] [--threads 1] [--rounds 15]
                                  [--min-ms 20] [--only NAME]... [--no-random] [--cpu-time]

Per shape: tvmlite's build and NumPy's reference (`a @ b`, `x @ w.T`; conv2d as
pad + im2col + one sgemm) each run once and are checked against each other
(error relative to the largest reference magnitude at most sqrt(eps)) before
anything is timed. Then tvmlite on the shape, tvmlite on the neighbour (M, N
and K rounded to the nearest multiple of 64, at least 64) and NumPy are timed
interleaved, round by round in rotating order, each run a batch of calls
lasting at least `--min-ms`; the figures are medians over `--rounds` (best in
brackets; `--cpu-time`: processor time, which leaves out the time other
processes preempt this one on a shared machine). Printed per shape: GFLOP/s
and % of the peak (`--threads` x the FMA peak of one core that
benchmarks/_peak.py measures), time / NumPy's time, and GFLOP/s / the
neighbour's GFLOP/s (issue 22's target: at least 0.7).

`--threads` sets TVMLITE_NUM_THREADS and OpenBLAS's thread count before either
loads (default 1: the kernels' quality, least disturbed by a busy machine; with
more, BLAS threads that spin after a call slow whatever runs next).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass


def _threads_from_argv() -> int:
    """--threads, read before NumPy and tvmlite load (their pools size on import)."""
    for n, arg in enumerate(sys.argv):
        if arg == "--threads" and n + 1 < len(sys.argv):
            return int(sys.argv[n + 1])
        if arg.startswith("--threads="):
            return int(arg.split("=", 1)[1])
    return 1


THREADS = _threads_from_argv()
for _var in ("TVMLITE_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = str(THREADS)

import numpy as np  # noqa: E402  (after the thread counts are set)
from _peak import fma_peak  # noqa: E402
from _timing import autorange, interleaved_samples, stopwatch  # noqa: E402
from _workloads import relative_error, tolerance  # noqa: E402
from numpy.lib.stride_tricks import sliding_window_view  # noqa: E402

import tvmlite  # noqa: E402

HEADER = "@I.ir_module\nclass Module:\n    @R.function\n"


@dataclass(frozen=True)
class Shape:
    """One workload: `kind` is matmul (M, N, K), dense (M, N, K: x[M, K] @ w[N, K].T),
    bmm (B, M, N, K) or conv (N, C, H, W, F, KH, KW, stride, pad)."""

    name: str
    kind: str
    dims: tuple[int, ...]

    def text(self) -> str:
        return TEXTS[self.kind](*self.dims)

    def inputs(self, seed: int = 0) -> list[np.ndarray]:
        rng = np.random.default_rng(seed)
        return [rng.standard_normal(s).astype("float32") for s in INPUTS[self.kind](*self.dims)]

    @property
    def flops(self) -> int:
        if self.kind == "conv":
            n, c, h, w, f, kh, kw, stride, pad = self.dims
            oh, ow = (h + 2 * pad - kh) // stride + 1, (w + 2 * pad - kw) // stride + 1
            return 2 * n * f * oh * ow * c * kh * kw
        return 2 * int(np.prod(self.dims))

    def neighbour(self) -> Shape | None:
        """M, N and K rounded to the nearest multiple of 64 (at least 64); None
        for a convolution, or when the shape is one already."""
        if self.kind == "conv":
            return None
        batch = 1 if self.kind == "bmm" else 0  # the batch keeps its size
        dims = self.dims[:batch] + tuple(max(64, round(d / 64) * 64) for d in self.dims[batch:])
        return None if dims == self.dims else Shape(f"{self.name}~64", self.kind, dims)


def _tensor(shape: tuple[int, ...]) -> str:
    return f'R.Tensor(({", ".join(map(str, shape))}), "float32")'


def _module(params: dict[str, tuple[int, ...]], out: tuple[int, ...], expr: str) -> str:
    args = ", ".join(f"{k}: {_tensor(s)}" for k, s in params.items())
    return (
        f"{HEADER}    def main({args}) -> {_tensor(out)}:\n"
        "        with R.dataflow():\n"
        f"            y = {expr}\n"
        "            R.output(y)\n"
        "        return y\n"
    )


def _conv_out(h: int, w: int, kh: int, kw: int, stride: int, pad: int) -> tuple[int, int]:
    return (h + 2 * pad - kh) // stride + 1, (w + 2 * pad - kw) // stride + 1


TEXTS: dict[str, Callable[..., str]] = {
    "matmul": lambda m, n, k: _module({"a": (m, k), "b": (k, n)}, (m, n), "R.matmul(a, b)"),
    # nn.Linear as torch.export prints it: the weight transposed, then a matmul
    "dense": lambda m, n, k: _module(
        {"x": (m, k), "w": (n, k)}, (m, n), "R.matmul(x, R.permute_dims(w, axes=[1, 0]))"
    ),
    "bmm": lambda b, m, n, k: _module(
        {"a": (b, m, k), "c": (b, k, n)}, (b, m, n), "R.matmul(a, c)"
    ),
    "conv": lambda n, c, h, w, f, kh, kw, s, p: _module(
        {"x": (n, c, h, w), "k": (f, c, kh, kw)},
        (n, f, *_conv_out(h, w, kh, kw, s, p)),
        f"R.nn.conv2d(x, k, strides=[{s}, {s}], padding=[{p}, {p}, {p}, {p}])",
    ),
}

INPUTS: dict[str, Callable[..., list[tuple[int, ...]]]] = {
    "matmul": lambda m, n, k: [(m, k), (k, n)],
    "dense": lambda m, n, k: [(m, k), (n, k)],
    "bmm": lambda b, m, n, k: [(b, m, k), (b, k, n)],
    "conv": lambda n, c, h, w, f, kh, kw, s, p: [(n, c, h, w), (f, c, kh, kw)],
}


def _conv_reference(stride: int, pad: int) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    def conv(x: np.ndarray, k: np.ndarray) -> np.ndarray:
        n, c, _, _ = x.shape
        o, _, kh, kw = k.shape
        xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
        win = sliding_window_view(xp, (kh, kw), axis=(2, 3))[:, :, ::stride, ::stride]
        oh, ow = win.shape[2], win.shape[3]
        cols = win.transpose(0, 1, 4, 5, 2, 3).reshape(n, c * kh * kw, oh * ow)
        return (k.reshape(o, -1) @ cols).reshape(n, o, oh, ow)

    return conv


def reference(shape: Shape) -> Callable[..., np.ndarray]:
    if shape.kind == "dense":
        return lambda x, w: x @ w.T
    if shape.kind == "conv":
        return _conv_reference(*shape.dims[-2:])
    return lambda a, b: a @ b


NAMED = (
    Shape("vit_scores", "bmm", (12, 197, 197, 64)),  # softmax(q @ k.T): ViT-B/16's attention
    Shape("vit_context", "bmm", (12, 197, 64, 197)),  # attention @ v
    Shape("vit_qkv", "matmul", (197, 2304, 768)),
    Shape("vit_mlp", "matmul", (197, 3072, 768)),
    Shape("dense_100x1000x300", "dense", (100, 1000, 300)),
    # one token through a layer (generation, a classifier head): M = 1
    Shape("token_dense_3072x768", "dense", (1, 3072, 768)),
    Shape("token_dense_4096x4096", "dense", (1, 4096, 4096)),
    Shape("token_matmul_3072x768", "matmul", (1, 3072, 768)),
    Shape("matmul_127x511x300", "matmul", (127, 511, 300)),
    Shape("matmul_1000", "matmul", (1000, 1000, 1000)),
    Shape("matmul_2047", "matmul", (2047, 2047, 2047)),
    Shape("conv1x1_128x28x28", "conv", (1, 128, 28, 28, 128, 1, 1, 1, 0)),
    Shape("conv3x3_256x14x14", "conv", (1, 256, 14, 14, 256, 3, 3, 1, 1)),
)


def random_shapes(count: int, seed: int) -> list[Shape]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        m, n, k = (rng.randint(1, 2048) for _ in range(3))
        out.append(Shape(f"rand_{m}x{n}x{k}", "matmul", (m, n, k)))
    return out


def _runner(
    fn: Callable[..., object], args: list[np.ndarray], min_ms: float, cpu: bool
) -> Callable[[], float]:
    def call() -> object:
        return fn(*args)

    clock = time.process_time if cpu else time.perf_counter
    return stopwatch(call, autorange(call, min_ms), clock)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--random", type=int, default=12, help="random matmul shapes (default 12)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-random", action="store_true", help="only the named shapes")
    ap.add_argument("--threads", type=int, default=THREADS)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--min-ms", type=float, default=20.0)
    ap.add_argument(
        "--cpu-time", action="store_true", help="processor time of the process, not wall time"
    )
    ap.add_argument("--only", action="append", default=[], help="shapes whose name contains this")
    args = ap.parse_args()
    shapes = list(NAMED) + ([] if args.no_random else random_shapes(args.random, args.seed))
    if args.only:
        shapes = [s for s in shapes if any(o in s.name for o in args.only)]
    peak = fma_peak() * args.threads
    print(
        f"{args.threads} thread(s); peak {peak:.0f} GFLOP/s ({args.threads} x the FMA peak of one "
        f"core); medians of {args.rounds} interleaved rounds, best in brackets; load "
        f"{os.getloadavg()[0]:.1f}"
    )
    print(
        f"{'shape':<24} {'dims':<24} {'GFLOP/s':>16} {'% peak':>7} {'/ NumPy':>8} "
        f"{'/ ~64':>8} {'neighbour':<18}"
    )
    failed = False
    for shape in shapes:
        inputs = shape.inputs()
        want = reference(shape)(*inputs)
        got = tvmlite.build(tvmlite.parse(shape.text()))["main"]
        err = relative_error(np.asarray(got(*inputs)), want)
        if err > tolerance(want.dtype):
            print(f"{shape.name}: WRONG (relative error {err:.2e}), not timed")
            failed = True
            continue
        runs = {
            "tvmlite": _runner(got, inputs, args.min_ms, args.cpu_time),
            "numpy": _runner(reference(shape), inputs, args.min_ms, args.cpu_time),
        }
        near = shape.neighbour()
        if near is not None:
            near_inputs = near.inputs()
            near_fn = tvmlite.build(tvmlite.parse(near.text()))["main"]
            near_want = reference(near)(*near_inputs)
            near_err = relative_error(np.asarray(near_fn(*near_inputs)), near_want)
            if near_err > tolerance(want.dtype):
                print(f"{near.name}: WRONG (relative error {near_err:.2e}), not timed")
                failed = True
                near = None
            else:
                runs["near"] = _runner(near_fn, near_inputs, args.min_ms, args.cpu_time)
        res = interleaved_samples(runs, args.rounds)
        rate = shape.flops / res["tvmlite"].median / 1e6
        best = shape.flops / res["tvmlite"].best / 1e6
        vs_numpy = res["tvmlite"].median / res["numpy"].median
        line = (
            f"{shape.name:<24} {'x'.join(map(str, shape.dims)):<24} {rate:7.1f} ({best:6.1f}) "
            f"{100 * rate / peak:6.0f}% {vs_numpy:8.2f} "
        )
        if near is not None:
            near_rate = near.flops / res["near"].median / 1e6
            line += f"{rate / near_rate:8.2f} {'x'.join(map(str, near.dims))} {near_rate:.1f}"
        print(line, flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

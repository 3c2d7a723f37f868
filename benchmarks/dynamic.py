"""Dynamic against static builds of real models, at the same size: issue 22's
target is a dynamic build within 1.15x of the static one, per sample.

    python benchmarks/dynamic.py [--only NAME]... [--rounds 7] [--min-ms 200] [--batch 2]

Each architecture of benchmarks/_torch_models.py (random weights, seeded) is
exported twice by torch.export: with fixed sizes, and with its batch (the image
models) or its sequence (the transformers) a `torch.export.Dim`. tvmlite's
importer (tvmlite.frontend, weights as constants) turns both into modules, which
the default build compiles. Both builds run on the same inputs, the export's
example, and their outputs are checked against PyTorch's before any timing;
then they are timed interleaved, round by round (batches of calls lasting at
least --min-ms), in this process. The table gives ms per call as median (min),
the ratio of medians, and how many kernels of each build the default schedule
made parallel or vectorized. Needs torch (and torchvision, transformers for the
architectures that use them).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from typing import Any

import _torch_models
import numpy as np
from _timing import autorange, interleaved_samples, stopwatch
from run import fmt, table

import tvmlite
from tvmlite.dsl import tir
from tvmlite.transform import PassContext

TARGET = 1.15
IMAGES = ("resnet18", "mobilenet_v2", "vit")


def _inputs(name: str, batch: int) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Example inputs, and the dynamic shapes of the dynamic export."""
    import torch

    gen = torch.Generator().manual_seed(2)
    if name in IMAGES:
        dim = torch.export.Dim("batch", min=1, max=64)
        return (torch.randn(batch, 3, 224, 224, generator=gen),), {"x": {0: dim}}
    ids = torch.randint(0, 8192, (1, 128), generator=gen)
    dim = torch.export.Dim("seq", min=2, max=128)
    return (ids, torch.ones(1, 128, dtype=torch.int64)), {"args": ({1: dim}, {1: dim})}


def _imported(model: Any, args: tuple[Any, ...], dynamic: dict[str, Any] | None) -> Any:
    import torch

    from tvmlite.frontend import from_exported_program

    program = torch.export.export(model, args, dynamic_shapes=dynamic)
    return from_exported_program(program)


def _scheduled(mod: tvmlite.IRModule) -> str:
    """How many of the module's kernels the default schedule runs in parallel or
    vectorized (lowered up to, not including, TIR lowering)."""
    with PassContext(disabled_pass=["LowerTIR"]):
        lowered = tvmlite.lower(mod)
    kernels = [f for f in lowered.functions.values() if isinstance(f, tir.PrimFunc)]
    busy = sum(
        any(k in tvmlite.IRModule({"k": f}).script() for k in ("T.parallel", "T.vectorized"))
        for f in kernels
    )
    return f"{busy}/{len(kernels)}"


def _error(got: Any, want: list[np.ndarray]) -> float:
    outs = got if isinstance(got, (tuple, list)) else (got,)
    return max(
        float(np.abs(np.asarray(o) - w).max() / max(float(np.abs(w).max()), 1e-30))
        for o, w in zip(outs, want, strict=True)
    )


def measure(name: str, args: argparse.Namespace) -> list[str]:
    import torch

    _torch_models.import_torchvision()
    torch.manual_seed(0)
    model = _torch_models.ARCHITECTURES[name]().eval()
    with torch.no_grad():  # torchvision's ViT zeroes its head: its output would check nothing
        for param in model.parameters():
            if not param.any():
                param.normal_(0.0, 0.02)
    inputs, dynamic = _inputs(name, args.batch)
    symbolic = "batch" if name in IMAGES else "sequence"
    return compare(name, symbolic, model, inputs, dynamic, args)


def compare(
    name: str,
    symbolic: str,
    model: Any,
    inputs: tuple[Any, ...],
    dynamic: dict[str, Any],
    args: argparse.Namespace,
) -> list[str]:
    """The table row of `model` exported with fixed sizes and with `dynamic`
    shapes, both run on `inputs`."""
    import torch

    with torch.no_grad():
        ref = model(*inputs)
    want = [r.numpy() for r in (ref if isinstance(ref, tuple) else (ref,))]
    data = [x.numpy() for x in inputs]
    builds, calls = {}, {}
    for label, shapes in (("static", None), ("dynamic", dynamic)):
        mod = _imported(model, inputs, shapes)
        start = time.perf_counter()
        ex = tvmlite.build(mod)
        seconds = time.perf_counter() - start
        err = _error(ex["main"](*data), want)
        if not err <= args.rtol:
            raise SystemExit(f"{name} {label}: error {err:.2e} against PyTorch (rtol {args.rtol})")
        builds[label] = (_scheduled(mod), seconds, err)

        def call(ex: Any = ex) -> Any:
            return ex["main"](*data)

        calls[label] = stopwatch(call, autorange(call, args.min_ms))
    times = interleaved_samples(calls, args.rounds)
    static, dynamic_ = times["static"], times["dynamic"]
    ratio = dynamic_.median / static.median
    shape = "x".join(str(d) for d in data[0].shape)
    return [
        name,
        f"{symbolic} ({shape})",
        f"{fmt(static.median)} ({fmt(static.best)})",
        f"{fmt(dynamic_.median)} ({fmt(dynamic_.best)})",
        f"{ratio:.2f}x" + ("" if ratio <= TARGET else " (miss)"),
        f"{builds['static'][0]} / {builds['dynamic'][0]}",
        f"{builds['static'][1]:.1f} / {builds['dynamic'][1]:.1f}",
        f"{builds['static'][2]:.0e} / {builds['dynamic'][2]:.0e}",
    ]


def options(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", default=[], help="a model (repeatable)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--min-ms", type=float, default=200.0)
    parser.add_argument("--batch", type=int, default=2, help="the image models' batch")
    parser.add_argument("--rtol", type=float, default=1e-4)
    args = parser.parse_args(argv)
    unknown = sorted(set(args.only) - set(_torch_models.ARCHITECTURES))
    if unknown:
        parser.error(f"unknown model(s) {unknown}: one of {sorted(_torch_models.ARCHITECTURES)}")
    return args


def main() -> int:
    args = options()
    warnings.simplefilter("ignore")  # torch's and transformers' deprecation notices
    head = ["model", "symbolic", "static ms", "dynamic ms", "dynamic / static",
            "parallel or vector kernels", "build s", "error vs PyTorch"]  # fmt: skip
    rows = [head]
    for name in args.only or list(_torch_models.ARCHITECTURES):
        rows.append(measure(name, args))
        print(f"[{name}] done", file=sys.stderr, flush=True)
    print(table(rows))
    print(f"ms: median (min) of {args.rounds} interleaved rounds; target: dynamic / static"
          f" <= {TARGET}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())

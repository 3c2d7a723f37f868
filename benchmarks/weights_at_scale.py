"""What do a model's weights add to a build (docs/constants.md, "Weights at scale")?

A chain of `--layers` matmuls of 4096x4096 float32 weights (64 MiB each: 8 layers
are 512 MiB) is built in fresh processes, interleaved round by round:

  without   the weights are parameters of main (nothing bound): the baseline
  bound     build(mod, params="w.npz"): the weights bound from a file tvmlite wrote
            (mapped, not read), compiled into the JIT's code by address
  cached    the same with the compile cache on: the key hashes the weights and the
            cache stores the library, weights linked in (cold: an empty cache)
  export    bound, then export_library: the weights written into the library
  load      load_module of that library (what loading a model costs)

Every contender's output is checked against NumPy (one call on a random input)
after its step. Per contender, medians over the rounds: wall and processor
seconds of the step (+: over `without`), processor seconds of its children (the
C compiler), and the peak resident memory of the process above its resident size
just before the step (+peak/W: over `without`, in units of the weights' size),
and of its largest child (the linker). Pages of the weights file the step reads
count as resident (they are mapped, shared with the page cache).

  python benchmarks/weights_at_scale.py [--layers 8] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

DIM = 4096
CONTENDERS = ("without", "bound", "cached", "export", "load")


def module_text(layers: int) -> str:
    tensor = f'R.Tensor(({DIM}, {DIM}), dtype="float32")'
    vector = f'R.Tensor((1, {DIM}), dtype="float32")'
    params = ", ".join(f"w{k}: {tensor}" for k in range(layers))
    inputs = ["x", *(f"y{k}" for k in range(layers - 1))]
    body = [f"            y{k} = R.matmul({inputs[k]}, w{k})" for k in range(layers)]
    return "\n".join(
        [
            "@I.ir_module",
            "class Module:",
            "    @R.function",
            f"    def main(x: {vector}, {params}) -> {vector}:",
            '        R.func_attr({"num_input": 1})',
            "        with R.dataflow():",
            *body,
            f"            R.output(y{layers - 1})",
            f"        return y{layers - 1}",
            "",
        ]
    )


def _rss_kib() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def child(mode: str, folder: Path) -> dict[str, float]:
    """One step in this fresh process; what it cost."""
    import tvmlite

    mod = tvmlite.parse_file(folder / "model.tvms")
    weights = folder / "weights.npz"
    x = np.load(folder / "x.npy")
    if mode == "load":
        before, start, cpu = _rss_kib(), time.perf_counter(), time.process_time()
        ex = tvmlite.load_module(folder / "model.so")
    else:
        if mode == "cached":
            os.environ.pop("TVMLITE_NO_CACHE", None)
            os.environ["TVMLITE_CACHE_DIR"] = str(folder / f"cache-{os.getpid()}")
        before, start, cpu = _rss_kib(), time.perf_counter(), time.process_time()
        if mode == "without":
            ex = tvmlite.build(mod)
        else:
            ex = tvmlite.build(mod, params=weights)
            if mode == "export":
                ex.export_library(folder / "model.so")
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB, since the start
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    if mode == "without":
        arrays = np.load(weights)
        out = ex["main"](x, *(arrays[f"w{k}"] for k in range(len(arrays.files))))
    else:
        out = ex["main"](x)
    return {
        "wall": wall,
        "cpu": cpu,
        "child_cpu": children.ru_utime + children.ru_stime,
        "peak_mib": (peak - before) / 1024,
        "child_peak_mib": children.ru_maxrss / 1024,
        "out": out.tolist(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child", choices=CONTENDERS)
    parser.add_argument("--folder", type=Path)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.folder)))
        return
    from tvmlite.array_file import save_arrays

    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory(prefix="tvmlite-weights-") as tmp:
        folder = Path(tmp)
        (folder / "model.tvms").write_text(module_text(args.layers))
        scale = np.float32(1 / np.sqrt(DIM))
        weights = {
            f"w{k}": (rng.standard_normal((DIM, DIM), dtype=np.float32) * scale)
            for k in range(args.layers)
        }
        save_arrays(folder / "weights.npz", weights)
        x = rng.standard_normal((1, DIM), dtype=np.float32)
        np.save(folder / "x.npy", x)
        ref = x.astype(np.float64)
        for k in range(args.layers):
            ref = ref @ weights[f"w{k}"]
        size_mib = sum(w.nbytes for w in weights.values()) / 2**20
        del weights
        env = {**os.environ, "TVMLITE_NO_CACHE": "1"}
        results: dict[str, list[dict[str, float]]] = {c: [] for c in CONTENDERS}
        for r in range(args.rounds):
            order = CONTENDERS[:-1][r % 4 :] + CONTENDERS[:-1][: r % 4]
            for mode in (*order, "load"):  # load reads what export wrote this round
                cmd = [sys.executable, __file__, "--child", mode, "--folder", str(folder)]
                done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
                if done.returncode != 0:
                    raise SystemExit(f"{mode}: failed\n{done.stderr[-2000:]}")
                got = json.loads(done.stdout.strip().splitlines()[-1])
                err = np.abs(np.array(got.pop("out")) - ref).max() / np.abs(ref).max()
                if err > 1e-4:
                    raise SystemExit(f"{mode}: WRONG (relative error {err:.2g})")
                results[mode].append(got)
    load = os.getloadavg()[0]
    print(f"weights: {args.layers} x {DIM}x{DIM} float32 = {size_mib:.0f} MiB; load {load:.1f}")
    med = {
        mode: {k: statistics.median(r[k] for r in rows) for k in rows[0]}
        for mode, rows in results.items()
    }
    base = med["without"]
    print(
        f"{'':8} {'wall s':>7} {'+wall':>6} {'cpu s':>6} {'+cpu':>6} {'cc cpu':>6} "
        f"{'peak MiB':>8} {'+peak/W':>7} {'cc peak':>7}"
    )
    for mode, m in med.items():
        over = mode not in ("without", "load")
        print(
            f"{mode:8} {m['wall']:7.2f} "
            + (f"{m['wall'] - base['wall']:+6.2f} " if over else f"{'':6} ")
            + f"{m['cpu']:6.2f} "
            + (f"{m['cpu'] - base['cpu']:+6.2f} " if over else f"{'':6} ")
            + f"{m['child_cpu']:6.2f} {m['peak_mib']:8.0f} "
            + (f"{(m['peak_mib'] - base['peak_mib']) / size_mib:+7.2f} " if over else f"{'':7} ")
            + f"{m['child_peak_mib']:7.0f}"
        )


if __name__ == "__main__":
    main()

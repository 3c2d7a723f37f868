"""Build time of whole modules: the corpus models and single-operator modules,
against TVM's `tvm.compile(mod, target="llvm")` on the same text when apache-tvm
is importable, as ratios from one run.

  python benchmarks/compile_time.py [--corpus DIR] [--ops 12] [--repeat 3]

Both sides start from the text TVM 0.27 printed (`NAME.tvms`) and legalize it
themselves; a module whose high-level form tvmlite cannot build yet is timed
from its `NAME.legalized.tvms` instead (marked `L`). Times are the best of
`--repeat` builds, in milliseconds. tvm is imported only here, and only if present.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import tvmlite

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
SINGLE_OPS = (
    "unary_log",
    "binary_add_bcast",
    "matmul_2d",
    "nn_conv2d",
    "graph_softmax_attention_scores",
    "nn_layer_norm",
    "nn_max_pool2d",
    "sum_axis1",
    "strided_slice",
    "take_axis1_2d_idx",
    "argmax_axis1",
    "concat_axis1",
)


def best_of(repeat: int, fn: Any) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def ours(text: str, legalized: str | None, repeat: int) -> tuple[float, str]:
    """(ms, note): the high-level text if it builds, else the legalized one."""
    mod = tvmlite.parse(text)
    try:
        tvmlite.build(mod, cache=False)
        return best_of(repeat, lambda: tvmlite.build(tvmlite.parse(text), cache=False)), ""
    except tvmlite.TVMLiteError:
        if legalized is None:
            return float("nan"), "fail"
    return best_of(repeat, lambda: tvmlite.build(tvmlite.parse(legalized), cache=False)), "L"


def theirs(text: str, repeat: int) -> float | None:
    try:
        import tvm  # noqa: PLC0415 - optional, benchmark only
    except ImportError:
        return None

    def run() -> None:
        mod = tvm.script.from_source(text)
        tvm.compile(mod, target="llvm")

    try:
        return best_of(repeat, run)
    except Exception:  # noqa: BLE001 - report, do not stop the run
        return float("nan")


def cases(corpus: Path, n_ops: int) -> list[tuple[str, Path, Path | None]]:
    manifest = json.loads((corpus / "manifest.json").read_text())
    by_name = {c["name"]: c for c in manifest["cases"]}
    out = []
    for c in manifest["cases"]:
        if c["kind"] == "model":
            out.append((c["name"], c["files"]["tvms"], c["files"].get("legalized")))
    for name in SINGLE_OPS[:n_ops]:
        c = by_name.get(name)
        if c is not None:
            out.append((name, c["files"]["tvms"], c["files"].get("legalized")))
    return [(n, corpus / t, corpus / lg if lg else None) for n, t, lg in out]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--ops", type=int, default=len(SINGLE_OPS))
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if not (args.corpus / "manifest.json").exists():
        raise SystemExit(f"no corpus at {args.corpus} (pass --corpus DIR)")
    print(f"{'module':36} {'tvmlite ms':>11} {'tvm ms':>9} {'tvm/tvmlite':>12}")
    ratios = []
    for name, path, legalized in cases(args.corpus, args.ops):
        text = path.read_text()
        if "metadata[" in text:
            continue
        mine, note = ours(text, legalized.read_text() if legalized else None, args.repeat)
        ref = theirs(text, args.repeat)
        ratio = ref / mine if ref and mine == mine and ref == ref else None
        if ratio:
            ratios.append(ratio)
        ref_text = f"{ref:9.1f}" if ref is not None else "        -"
        ratio_text = f"{ratio:11.2f}x" if ratio else "           -"
        print(f"{name:34} {note:1} {mine:11.1f} {ref_text} {ratio_text}")
    if ratios:
        geo = 1.0
        for r in ratios:
            geo *= r
        geo **= 1 / len(ratios)
        print(f"geometric mean of tvm/tvmlite build time: {geo:.2f}x ({len(ratios)} modules)")


if __name__ == "__main__":
    main()

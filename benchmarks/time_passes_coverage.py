"""How much of `tvms build`'s wall time `--time-passes` accounts for.

  python benchmarks/time_passes_coverage.py [FILE ...] [--rounds 5] [--pipeline NAME]

Each round runs `tvms build FILE -o OUT.so --time-passes` in a fresh process per
file (files interleaved round by round), times the process from outside, and
sums the top-level lines it printed (start-up, parse, the passes, code
generation's stages, write; not the closing total). The build is checked
first: exit status 0 and a library written. Prints, per file, the median
outside wall time, the median sum of the lines and their ratio; what is left is
process creation before the kernel's start record and the exit.
Defaults: examples/mlp.tvms and the corpus's transformer encoder block.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_FILES = (
    ROOT / "examples" / "mlp.tvms",
    ROOT.parents[1] / "shared" / "corpus" / "models" / "model_transformer_encoder_block.tvms",
)
TOTAL = "total (since the process started)"


def command() -> list[str]:
    """The installed `tvms` next to this interpreter, as a user runs it."""
    script = Path(sys.executable).with_name("tvms")
    found = str(script) if script.exists() else shutil.which("tvms")
    return [found] if found else [sys.executable, "-m", "tvmlite"]


def accounted_ms(stderr: str) -> float:
    """Sum of the top-level `name: X ms` lines of --time-passes, total excluded."""
    total = 0.0
    for line in stderr.splitlines():
        name, sep, value = line.rpartition(": ")
        if sep and value.endswith(" ms") and not line.startswith(" ") and name != TOTAL:
            total += float(value[:-3])
    return total


def build_once(file: Path, out: Path, extra: list[str]) -> tuple[float, float]:
    """(outside wall ms, accounted ms) of one build; raises when it failed."""
    out.unlink(missing_ok=True)
    argv = [*command(), "build", str(file), "-o", str(out), "--time-passes", *extra]
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    wall = (time.perf_counter() - start) * 1e3
    if done.returncode != 0 or not out.exists():
        raise SystemExit(f"{file}: build failed ({done.returncode}): {done.stderr[-2000:]}")
    return wall, accounted_ms(done.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, default=list(DEFAULT_FILES))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--pipeline", default=None)
    args = parser.parse_args()
    extra = ["--pipeline", args.pipeline] if args.pipeline else []
    samples: dict[Path, list[tuple[float, float]]] = {f: [] for f in args.files}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.so"
        for file in args.files:  # checked (and its caches warm) before any timing
            build_once(file, out, extra)
        for _ in range(args.rounds):
            for file in args.files:
                samples[file].append(build_once(file, out, extra))
    print(f"{'file':<44} {'wall ms':>9} {'lines ms':>9} {'covered':>8}")
    for file, runs in samples.items():
        wall = statistics.median(w for w, _ in runs)
        lines = statistics.median(a for _, a in runs)
        ratio = statistics.median(a / w for w, a in runs)
        print(f"{file.name:<44} {wall:>9.1f} {lines:>9.1f} {ratio:>8.1%}")


if __name__ == "__main__":
    main()

"""Parse time of this checkout against another git revision (main by default).

  python benchmarks/parse_revisions.py [--base main] [--rounds 8] [--repeat 3]

Both trees are staged as plain packages in a temporary folder (git archive for the
base, the checkout's files for this one) and run by this Python. The texts are
parse_print.py's: (a) a Relax function of 4000 bindings, (b) 500 legalized prim
functions, and (c) text (b) with a comment above and after every statement. For
every round and text, each contender parses in a fresh process (order alternating
round by round), after checking that the text parses and prints back to an equal
module; the best CPU time of all rounds is kept, and the ratio printed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Runs in the child, with the contender's package first on the path.
CHILD = r"""
import importlib.util, json, sys, time
spec = importlib.util.spec_from_file_location("pp", sys.argv[1])
pp = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pp)
import tvmlite
from tvmlite.printer import script

key, repeat, bindings, funcs = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
if key == "a":
    text = pp.relax_chain(bindings)
else:
    text = pp.legalized_module(funcs)
if key == "c":
    lines = []
    for line in text.split("\n"):
        code = line.strip()
        if code and not code.startswith(("#", "@")) and not code.endswith(":"):
            lines.append(line[: len(line) - len(code)] + "# about the next line")
            line += "  # about this line"
        lines.append(line)
    text = "\n".join(lines)
mod = tvmlite.parse(text)
assert tvmlite.structural_equal(tvmlite.parse(script(mod)), mod)
del mod
best = float("inf")
for _ in range(repeat):
    start = time.process_time()
    tvmlite.parse(text)
    best = min(best, time.process_time() - start)
print(json.dumps(best))
"""
TEXTS = {"a": "Relax function", "b": "prim functions", "c": "(b), commented"}


def stage(files: Path, into: Path) -> Path:
    """`files` (a source tree) laid out as the installed package, under `into`."""
    config = tomllib.loads((files / "pyproject.toml").read_text())
    for package, folder in config["tool"]["setuptools"]["package-dir"].items():
        shutil.copytree(files / folder, into / package.replace(".", "/"), dirs_exist_ok=True)
    return into


def checkout_files(into: Path) -> Path:
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    for name in listed:
        if (ROOT / name).is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, into / name)
    return into


def revision_files(rev: str, into: Path) -> Path:
    archive = subprocess.run(["git", "archive", rev], cwd=ROOT, capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", default="main")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--bindings", type=int, default=4000)
    ap.add_argument("--funcs", type=int, default=500)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="tvmlite-revisions-") as tmp:
        work = Path(tmp)
        for name in ("base-src", "this-src", "base", "this"):
            (work / name).mkdir()
        paths = {
            args.base: stage(revision_files(args.base, work / "base-src"), work / "base"),
            "this": stage(checkout_files(work / "this-src"), work / "this"),
        }
        bench = str(ROOT / "benchmarks" / "parse_print.py")
        best: dict[tuple[str, str], float] = {}
        for round_ in range(args.rounds):
            for key in TEXTS:
                order = list(paths) if round_ % 2 == 0 else list(reversed(paths))
                for who in order:
                    env = dict(os.environ, PYTHONPATH=str(paths[who]))
                    argv = [bench, key, args.repeat, args.bindings, args.funcs]
                    out = subprocess.run(
                        [sys.executable, "-c", CHILD, *map(str, argv)],
                        env=env, capture_output=True, text=True, check=True,
                    ).stdout  # fmt: skip
                    seconds = json.loads(out)
                    best[who, key] = min(best.get((who, key), seconds), seconds)
    base = args.base
    print(f"parse, best CPU time of {args.rounds} rounds x {args.repeat}:")
    for key, label in TEXTS.items():
        old, new = best[base, key], best["this", key]
        print(
            f"  ({key}) {label:16s} {base} {old * 1e3:7.1f} ms   this {new * 1e3:7.1f} ms"
            f"   this/{base} {new / old:5.3f}"
        )


if __name__ == "__main__":
    main()

"""A held-out set of TVMScript modules from Apache TVM's own test suite: the modules that
test files other than the public corpus's parse, printed by TVM 0.27.

    python tools/tvm_heldout.py --tvm-repo GITDIR --public MANIFEST --out DIR [--jobs 2]

Runs with the Python that has TVM 0.27 and pytest (only tools import TVM). GITDIR is a
git directory of apache/tvm (its `tests/python` at --commit are exported to DIR/src);
MANIFEST is the public corpus's manifest.json, whose test files are left out. The other
test files run under pytest, a few to a worker process (CPU only: tests that need a GPU
skip themselves, whole GPU-only areas are not run at all), with TVM's script parser hooked so
that every IRModule, PrimFunc or Relax function it parses is printed by TVM
(`IRModule.from_expr(f).script()`, as the public corpus is). Texts are deduplicated (by
their SHA-1, also against the public corpus's texts), texts with `metadata[...]` are left
out, and DIR gets one `.tvms` per text and a manifest.json in the public corpus's format
(`python check_tvm_tests.py --corpus DIR` measures tvmlite on it).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tarfile
import time
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

# Areas that need a GPU, a remote device, a network or a cluster for everything they do,
# or that tune for minutes: not run.
SKIPPED_PARTS = (
    "/ci/", "/disco/", "rpc", "/nvshmem/", "flashinfer", "cutlass", "cublas", "cudnn",
    "hipblas", "tensorrt", "coreml", "/adreno/", "/test_android/", "clml", "vllm",
    "test_meta_schedule_tune", "test_meta_schedule_runner", "test_meta_schedule_builder",
    "test_meta_schedule_task_scheduler", "test_meta_schedule_relax_integration",
    "test_runtime_builtin_paged_attention", "test_runtime_builtin_kv_cache",
    "test_benchmark.py", "test_tvmjs", "test_ccache", "test_popen_pool",
)  # fmt: skip


SCRIPT_WORDS = ("prim_func", "ir_module", "R.function", "from_source")


def test_files(src: Path, public: set[str]) -> list[Path]:
    """Test files of tests/python that the public corpus does not draw on and that write
    TVMScript, those that write the most first (a run cut short keeps the most)."""
    found = []
    for path in sorted((src / "tests" / "python").rglob("test_*.py")):
        rel = path.relative_to(src / "tests" / "python").as_posix()
        if rel.replace("-", "_") in public or any(p in "/" + rel for p in SKIPPED_PARTS):
            continue
        code = path.read_text()
        weight = sum(code.count(word) for word in SCRIPT_WORDS)
        if weight:
            found.append((-weight, path))
    return [path for _, path in sorted(found)]


def export_tests(repo: str, commit: str, dest: Path) -> None:
    if (dest / "tests" / "python").is_dir():
        return
    dest.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(
        ["git", "--git-dir", repo, "archive", "--format=tar", commit, "tests/python"],
        check=True,
        capture_output=True,
    ).stdout
    tar_path = dest / "tests.tar"
    tar_path.write_bytes(archive)
    with tarfile.open(tar_path) as tar:
        tar.extractall(dest, filter="data")
    tar_path.unlink()


def _capture(out_file: str, tests_root: str, test_files: list[str]) -> int:
    """In a worker process: hook TVM's parser, run some test files under pytest. Each
    capture names the test file whose code (at module level or in a test) asked for it."""
    import pytest
    import tvm
    import tvm.script  # noqa: F401  (imports every parser module that binds `parse`)
    from tvm.script.parser.core import entry

    original = entry.parse
    root = str(Path(tests_root).resolve()) + os.sep
    sink = open(out_file, "a")  # noqa: SIM115  (written to until the process ends)

    def parse(program, *args, **kwargs):
        result = original(program, *args, **kwargs)
        frame = sys._getframe(1)
        while frame is not None and not (
            frame.f_code.co_filename.startswith(root)
            and os.path.basename(frame.f_code.co_filename).startswith("test_")
        ):
            frame = frame.f_back
        if frame is None:
            return result
        try:
            mod = result if isinstance(result, tvm.IRModule) else tvm.IRModule.from_expr(result)
            entry_ = {
                "test_file": frame.f_code.co_filename[len(root) :],
                "name": getattr(program, "__name__", "from_source"),
                "text": mod.script(),
            }
            sink.write(json.dumps(entry_) + "\n")
            sink.flush()
        except Exception:  # noqa: BLE001  (a text TVM cannot print is no case)
            pass
        return result

    for module in list(sys.modules.values()):
        if module is not None and getattr(module, "__name__", "").startswith("tvm"):
            for attr, value in list(vars(module).items()):
                if value is original:
                    setattr(module, attr, parse)
    return int(
        pytest.main(
            [
                *test_files,
                "-q",
                "-p",
                "no:cacheprovider",
                "--no-header",
                "--continue-on-collection-errors",
            ]
        )
    )


def run_batch(
    batch: tuple[int, list[Path]], src: Path, work: Path, timeout: float
) -> tuple[int, str, float]:
    index, paths = batch
    out = work / f"batch{index:03d}.jsonl"
    if out.exists():
        out.unlink()
    start = time.time()
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", TVM_NUM_THREADS="1", OMP_NUM_THREADS="1")
    root = src / "tests" / "python"
    try:
        proc = subprocess.run(
            [sys.executable, __file__, "--capture", str(out), str(root), *map(str, paths)],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        status = (proc.stdout.strip().splitlines() or ["?"])[-1][:100]
    except subprocess.TimeoutExpired:
        status = "timeout"
    return index, status, time.time() - start


def collect(work: Path, public_dir: Path, out: Path) -> int:
    seen = {hashlib.sha1(p.read_text().encode()).hexdigest() for p in public_dir.glob("*.tvms")}
    cases = []
    for part in sorted(work.glob("batch*.jsonl")):
        for line in part.read_text().splitlines():
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:  # a line cut by a timeout
                continue
            text = entry["text"]
            digest = hashlib.sha1(text.encode()).hexdigest()
            if digest in seen or "metadata[" in text:
                continue
            seen.add(digest)
            rel = entry["test_file"].replace("-", "_")
            stem = rel[: -len(".py")].replace("/", "__")
            name = f"{stem}__{digest[:12]}.tvms"
            (out / name).write_text(text)
            cases.append({"file": name, "test_file": rel, "name": entry["name"]})
    about = (
        "Held-out TVMScript modules: parsed by tests of Apache TVM (tests/python) that the "
        "public corpus does not draw on, printed by TVM "
        f"{_tvm_version()} (IRModule.from_expr(f).script()); deduplicated, also against the "
        "public corpus; texts with metadata[...] left out. Made by tools/tvm_heldout.py."
    )
    (out / "manifest.json").write_text(json.dumps({"about": about, "cases": cases}, indent=1))
    return len(cases)


def _tvm_version() -> str:
    import tvm

    return tvm.__version__


def main() -> int:
    if len(sys.argv) > 4 and sys.argv[1] == "--capture":
        return _capture(sys.argv[2], sys.argv[3], sys.argv[4:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tvm-repo", required=True, help="git directory of apache/tvm")
    ap.add_argument("--commit", default="HEAD")
    ap.add_argument("--public", required=True, help="the public corpus's manifest.json")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--batch", type=int, default=8, help="test files per worker process")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per batch")
    ap.add_argument("--only", default="", help="substring filter on test files")
    ap.add_argument("--collect-only", action="store_true", help="rebuild DIR from past runs")
    args = ap.parse_args()
    public_manifest = Path(args.public)
    public = {c["test_file"] for c in json.loads(public_manifest.read_text())["cases"]}
    src, work = args.out / "src", args.out / "captured"
    export_tests(args.tvm_repo, args.commit, src)
    work.mkdir(parents=True, exist_ok=True)
    files = [p for p in test_files(src, public) if args.only in p.as_posix()]
    # batches of heavy and light files alike: file i goes to batch i mod count
    count = max(1, -(-len(files) // args.batch))
    batches = [(i, files[i::count]) for i in range(count)]
    if not args.collect_only:
        with ThreadPoolExecutor(args.jobs) as pool:
            run = partial(run_batch, src=src, work=work, timeout=args.timeout)
            for index, status, took in pool.map(run, batches):
                print(f"{took:6.1f}s  batch {index} ({len(batches[index][1])} files): {status}",
                      flush=True)  # fmt: skip
    for old in args.out.glob("*.tvms"):
        old.unlink()
    n = collect(work, public_manifest.parent, args.out)
    print(f"{n} held-out modules from {len(files)} test files in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

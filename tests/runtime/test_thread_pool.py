"""The thread pool from outside: how many threads it has (TVMLITE_NUM_THREADS,
else the CPUs), static chunks, after fork, in an exported library called from
Python and from C, and unloading a library with live workers. Each case runs
pool_probe.py (or a C program) in a fresh process: the pool is made once per
process. A probe call runs 8 iterations whose tasks each take milliseconds, so
sleeping workers have time to wake even on a busy machine."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import tvmlite
from tvmlite.lowering.codegen.llvm_thread_pool import STALE

PROBE = Path(__file__).with_name("pool_probe.py")
sys.path.insert(0, str(PROBE.parent))
from pool_probe import PROBE as PROBE_SOURCE  # noqa: E402


def probe(*args: str, threads: str | None) -> dict:
    env = dict(os.environ)
    env.pop("TVMLITE_NUM_THREADS", None)
    if threads is not None:
        env["TVMLITE_NUM_THREADS"] = threads
    done = subprocess.run(
        [sys.executable, str(PROBE), *args], capture_output=True, text=True, env=env,
        timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def chunks(run: list[int], tasks: int) -> list[set[int]]:
    """The thread ids of each static chunk of 8 iterations cut into `tasks`."""
    size, rest = divmod(len(run), tasks)
    out, start = [], 0
    for k in range(tasks):
        end = start + size + (k < rest)
        out.append(set(run[start:end]))
        start = end
    return out


def test_threads_from_the_environment_and_static_chunks() -> None:
    report = probe("jit", "6", threads="3")
    assert report["right"]
    ids: set[int] = set()
    for run in report["runs"]:
        parts = chunks(run, 3)  # 3, 3 and 2 iterations
        assert all(len(p) == 1 for p in parts), run  # one thread runs a whole chunk
        ids |= set().union(*parts)
    assert len(ids) <= 3
    assert ids - {report["caller"]}, "no task ran on a worker thread"


def test_one_thread_runs_everything_on_the_caller() -> None:
    report = probe("jit", "3", threads="1")
    assert report["right"]
    assert {i for run in report["runs"] for i in run} == {report["caller"]}


@pytest.mark.parametrize("value", ["0", "2x"])
def test_a_bad_thread_count_means_the_cpus(value: str) -> None:
    report = probe("jit", "2", threads=value)
    assert report["right"]
    cpus = len(os.sched_getaffinity(0))
    assert len({i for run in report["runs"] for i in run}) <= min(cpus, 8)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_makes_its_own_pool() -> None:
    report = probe("fork", "14", threads="2")
    assert report["child_status"] == 0 and report["right"] and report["parent_right"]
    # The first calls find no workers (they stayed in the parent) and run alone,
    # until one drops the pool (STALE launches); later calls get the child's own.
    assert set(report["runs"][0]) == {report["caller"]}
    later = {i for run in report["runs"][STALE + 1 :] for i in run}
    assert later - {report["caller"]}


@pytest.fixture(scope="module")
def probe_library(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("pool") / "probe.so"
    tvmlite.build(tvmlite.parse(PROBE_SOURCE), cache=False).export_library(path)
    return path


def test_exported_library_has_threads_and_unloads_cleanly(probe_library: Path) -> None:
    report = probe("library", str(probe_library), "4", threads="2")
    assert report["right"] and report["unmapped"]
    assert {i for run in report["runs"] for i in run} - {report["caller"]}


C_PROGRAM = r"""
#include <pthread.h>
#include <stdio.h>
#include "probe.h"

int main(void) {
  float xs[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  int64_t shape[1] = {8};
  DLTensor x = {xs, {1, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0};
  DLTensor* args[1] = {&x};
  int others = 0, wrong = 0;
  for (int call = 0; call < 4; ++call) {
    DLManagedTensorVersioned* out[2];
    char err[256];
    if (probe_entry_main(args, 1, out, 2, err, sizeof err) != TVMLITE_OK) {
      fprintf(stderr, "%s\n", err);
      return 1;
    }
    const uint64_t* ids = (const uint64_t*)out[0]->dl_tensor.data;
    const float* y = (const float*)out[1]->dl_tensor.data;
    for (int i = 0; i < 8; ++i) {
      others += ids[i] != (uint64_t)pthread_self();
      wrong += y[i] != 2 * xs[i];
    }
    out[0]->deleter(out[0]);
    out[1]->deleter(out[1]);
  }
  printf("%d %d\n", others, wrong);
  return 0;
}
"""


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
def test_c_callers_get_threads(probe_library: Path) -> None:
    folder = probe_library.parent
    (folder / "main.c").write_text(C_PROGRAM)
    exe = folder / "main"
    subprocess.run(
        ["cc", "-o", str(exe), str(folder / "main.c"), "-I", str(folder), str(probe_library),
         f"-Wl,-rpath,{folder}"],
        check=True,
    )  # fmt: skip
    env = dict(os.environ, TVMLITE_NUM_THREADS="2")
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True, env=env)
    others, wrong = map(int, out.stdout.split())
    assert wrong == 0
    assert others > 0, "every task ran on the calling thread"


@pytest.mark.skipif(shutil.which("readelf") is None, reason="needs readelf")
def test_exported_library_needs_only_libc_and_libm(probe_library: Path) -> None:
    out = subprocess.run(
        ["readelf", "-d", str(probe_library)], capture_output=True, text=True, check=True
    ).stdout
    needed = {line.split("[")[1].split("]")[0] for line in out.splitlines() if "(NEEDED)" in line}
    assert needed <= {"libc.so.6", "libm.so.6"}, needed

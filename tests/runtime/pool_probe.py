"""A probe of the thread pool, run in a fresh process by test_thread_pool.py
(the pool is made once per process, sized by TVMLITE_NUM_THREADS then).

`python pool_probe.py jit CALLS` builds PROBE and calls it CALLS times;
`python pool_probe.py fork CALLS` does so in a forked child after a call in the
parent; `python pool_probe.py library PATH CALLS` loads an exported PROBE
library, calls it, then unloads it. Each prints one JSON line: the caller's
thread id, the ids of the threads that ran the 8 tasks of each call, whether
every result was right (and whether the library was unmapped).
"""

from __future__ import annotations

import gc
import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np

import tvmlite

TASKS = 8
PROBE = """
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def probe(x: T.Buffer((8,), "float32"), ids: T.Buffer((8,), "uint64"), y: T.Buffer((8,), "float32")):
        for t in T.parallel(8):
            ids[t] = T.call_extern("uint64", "pthread_self")
            y[t] = x[t]
            for k in range(1000000):
                y[t] = y[t] * T.float32(0.5) + x[t]

    @R.function
    def main(x: R.Tensor((8,), "float32")) -> R.Tuple(R.Tensor((8,), "uint64"), R.Tensor((8,), "float32")):
        cls = Module
        with R.dataflow():
            out = R.call_tir(cls.probe, (x,), out_sinfo=[R.Tensor((8,), "uint64"), R.Tensor((8,), "float32")])
            R.output(out)
        return out
"""


def calls(fn: Any, count: int) -> dict[str, Any]:
    x = np.arange(1, TASKS + 1, dtype="float32")
    runs, right = [], True
    for _ in range(count):
        ids, y = fn(x)
        right = right and bool(np.array_equal(y, 2 * x))
        runs.append([int(v) for v in ids])
    return {"caller": threading.get_ident(), "runs": runs, "right": right}


def main(argv: list[str]) -> int:
    mode = argv[1]
    if mode == "library":
        path, count = argv[2], int(argv[3])
        lib = tvmlite.load_module(path)
        report = calls(lib["main"], count)
        del lib
        gc.collect()  # unloads it: its workers must be gone, or they run unmapped code
        report["unmapped"] = Path(path).name not in Path("/proc/self/maps").read_text()
        print(json.dumps(report))
        return 0
    fn = tvmlite.build(tvmlite.parse(PROBE), cache=False)["main"]
    count = int(argv[2])
    if mode == "jit":
        print(json.dumps(calls(fn, count)))
        return 0
    parent = calls(fn, 2)  # the pool exists now, its workers in this process only
    read, write = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(read)
        os.write(write, json.dumps(calls(fn, count)).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        report = json.loads(pipe.read())
    _, status = os.waitpid(child, 0)
    report["child_status"] = status
    report["parent_right"] = parent["right"]
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

"""TVM's side of `compile_scaling.py`, run by a Python that has apache-tvm (it
imports no tvmlite). Reads requests from stdin, one JSON object a line:
{"text": path of a module, "data": path of an .npz with inputs `in0..` and the
expected `want`}; for each, parses the text (not timed), times
`tvm.compile(mod, target="llvm")` (wall and processor time), runs `main` on
the VM, checks the result and answers one JSON line: {"ms": ..., "cpu": ...}
or {"error": ...}."""

from __future__ import annotations

import json
import sys
import time

import numpy as np
import tvm
from tvm import relax


def serve() -> None:
    for line in sys.stdin:
        request = json.loads(line)
        try:
            ms, cpu = compile_and_check(request["text"], request["data"])
            answer = {"ms": ms, "cpu": cpu}
        except Exception as err:  # reported to the parent, which stops
            answer = {"error": f"{type(err).__name__}: {err}"}
        print(json.dumps(answer), flush=True)


def compile_and_check(text_path: str, data_path: str) -> tuple[float, float]:
    with open(text_path) as f:
        mod = tvm.script.from_source(f.read())
    start, cpu = time.perf_counter(), time.process_time()
    built = tvm.compile(mod, target="llvm")
    cpu = (time.process_time() - cpu) * 1e3
    ms = (time.perf_counter() - start) * 1e3
    data = np.load(data_path)
    count = len([k for k in data.files if k.startswith("in")])
    to_tensor = getattr(tvm.runtime, "tensor", None) or tvm.nd.array
    vm = relax.VirtualMachine(built, tvm.cpu())
    got = vm["main"](*(to_tensor(data[f"in{k}"]) for k in range(count))).numpy()
    if not np.allclose(got, data["want"], rtol=2e-3, atol=2e-3):
        raise ValueError(f"wrong result (max abs error {np.max(np.abs(got - data['want'])):.3g})")
    return ms, cpu


if __name__ == "__main__":
    serve()

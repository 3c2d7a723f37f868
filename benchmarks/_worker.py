"""One contender of benchmarks/run.py in its own process, driven over a pipe.

  python benchmarks/_worker.py numpy|tvmlite|tvmlite-unplanned|tvm

A process of its own gives each contender its own environment (NumPy's BLAS
thread count is read once, when OpenBLAS loads: OPENBLAS_NUM_THREADS), its own
interpreter (TVM may live in another virtual environment than tvmlite), and
keeps TVM's LLVM and llvmlite's out of one address space. The worker times its
own calls, so the pipe costs nothing measured.

Protocol: one JSON object a line each way. The worker first says hello
({"ok": true, "value": {...}} or {"ok": false, "error": ...} when its contender
cannot be imported), then answers each request {"cmd": ..., ...} with
{"ok": true, "value": ...} or {"ok": false, "error": "..."}:
  load {name}       make the workload's inputs (the same seed in every worker)
  compile           text -> callable; value: ms (None for NumPy)
  run {out}         one call, output saved to the .npy file `out`
  calibrate {min_ms} choose the calls per timed run; value: that number
  time              one timed run; value: ms per call
  memory {reset}    resident and peak MB, minor page faults (benchmarks/memory.py)
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

import numpy as np
from _timing import autorange, stopwatch
from _workloads import Workload, by_name


class Contender:
    """What each kind of worker knows: how to compile a workload and call it."""

    def info(self) -> dict[str, Any]:
        return {}

    def compile(self, w: Workload, inputs: list[np.ndarray]) -> Callable[[], Any]:
        raise NotImplementedError

    def to_numpy(self, out: Any) -> np.ndarray:
        return out


class NumPy(Contender):
    def info(self) -> dict[str, Any]:
        return {"numpy": np.__version__, "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS")}

    def compile(self, w: Workload, inputs: list[np.ndarray]) -> Callable[[], Any]:
        ref = w.reference()
        return lambda: ref(*inputs)


class TVMLite(Contender):
    def __init__(self) -> None:
        import tvmlite  # noqa: PLC0415 - only this worker needs it

        self.tvmlite = tvmlite

    def info(self) -> dict[str, Any]:
        return {"tvmlite": self.tvmlite.__version__}

    def compile(self, w: Workload, inputs: list[np.ndarray]) -> Callable[[], Any]:
        main = self.tvmlite.build(self.tvmlite.parse(w.text), cache=False)["main"]
        return lambda: main(*inputs)


class TVMLiteUnplanned(TVMLite):
    """tvmlite with every kernel output allocated on its own (no memory plan)."""

    def compile(self, w: Workload, inputs: list[np.ndarray]) -> Callable[[], Any]:
        from tvmlite.lowering.codegen.memory_plan import PLAN_KEY  # noqa: PLC0415

        with self.tvmlite.transform.PassContext(config={PLAN_KEY: False}):
            return super().compile(w, inputs)


class TVMLiteUnscheduled(TVMLite):
    """The default build with DefaultCPUSchedule off: plain loop nests."""

    def compile(self, w: Workload, inputs: list[np.ndarray]) -> Callable[[], Any]:
        from tvmlite.transform import PassContext  # noqa: PLC0415

        with PassContext(config={"tir.default_cpu_schedule": False}):
            return super().compile(w, inputs)


class TVM(Contender):
    def __init__(self) -> None:
        import tvm  # noqa: PLC0415 - optional, benchmark only
        from tvm import relax  # noqa: PLC0415

        self.tvm, self.relax = tvm, relax
        # TVM 0.27 builds a target from a dict ("llvm -mcpu=..." strings are refused)
        self.mcpu = tvm.target.codegen.llvm_get_system_cpu()
        self.target = tvm.target.Target({"kind": "llvm", "mcpu": self.mcpu})

    def info(self) -> dict[str, Any]:
        return {"tvm": self.tvm.__version__, "target": f"llvm -mcpu={self.mcpu}"}

    def compile(self, w: Workload, inputs: list[np.ndarray]) -> Callable[[], Any]:
        tvm = self.tvm
        executable = tvm.compile(tvm.script.from_source(w.text), target=self.target)
        main = self.relax.VirtualMachine(executable, tvm.cpu())["main"]
        to_tensor = getattr(tvm.runtime, "tensor", None) or tvm.nd.array
        args = [to_tensor(a) for a in inputs]
        return lambda: main(*args)

    def to_numpy(self, out: Any) -> np.ndarray:
        return out.numpy()


KINDS: dict[str, type[Contender]] = {
    "numpy": NumPy,
    "tvmlite": TVMLite,
    "tvmlite-unplanned": TVMLiteUnplanned,
    "tvmlite-unscheduled": TVMLiteUnscheduled,
    "tvm": TVM,
}


def memory(reset: bool) -> dict[str, float]:
    """This process's resident and peak resident MB and its minor page faults so
    far (Linux); `reset` first sets the peak to the current size (clear_refs 5),
    so the peak read later is that of what ran in between."""
    if reset:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    fields = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                fields[key] = int(value.split()[0]) / 1024
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    return {"rss_mb": fields["VmRSS"], "peak_mb": fields["VmHWM"], "faults": faults}


class Worker:
    def __init__(self, contender: Contender) -> None:
        self.contender = contender
        self.workload: Workload | None = None
        self.inputs: list[np.ndarray] = []
        self.call: Callable[[], Any] | None = None
        self.timed: Callable[[], float] | None = None

    def info(self) -> dict[str, Any]:
        return self.contender.info()

    def handle(self, request: dict[str, Any]) -> Any:
        cmd = request["cmd"]
        if cmd == "memory":
            return memory(request.get("reset", False))
        if cmd == "load":
            self.workload = by_name(request["name"])
            self.inputs = self.workload.make_inputs(request.get("seed", 0))
            self.call = self.timed = None
            return None
        if self.workload is None:
            raise RuntimeError(f"{cmd} before load")
        if cmd == "compile":
            start = time.perf_counter()
            self.call = self.contender.compile(self.workload, self.inputs)
            ms = (time.perf_counter() - start) * 1e3
            return None if isinstance(self.contender, NumPy) else ms
        if self.call is None:
            raise RuntimeError(f"{cmd} before compile")
        if cmd == "run":
            out = self.contender.to_numpy(self.call())
            np.save(request["out"], np.ascontiguousarray(out))
            return None
        if cmd == "calibrate":
            number = autorange(self.call, request["min_ms"])
            self.timed = stopwatch(self.call, number)
            return number
        if cmd == "time":
            if self.timed is None:
                raise RuntimeError("time before calibrate")
            return self.timed()
        raise ValueError(f"unknown command {cmd!r}")


def serve(start: Callable[[], Any], proto: TextIO) -> None:
    """Answer requests on stdin until "quit": `start()` makes the handler, whose
    `info()` goes into the hello and whose `handle(request)` gives each answer."""

    def say(reply: dict[str, Any]) -> None:
        proto.write(json.dumps(reply) + "\n")
        proto.flush()

    try:
        handler = start()
    except Exception as exc:  # noqa: BLE001 - reported to the driver, which goes on without
        say({"ok": False, "error": f"{type(exc).__name__}: {exc}"})
        return
    say({"ok": True, "value": {"python": sys.executable, **handler.info()}})
    for line in sys.stdin:
        request = json.loads(line)
        if request["cmd"] == "quit":
            return
        try:
            say({"ok": True, "value": handler.handle(request)})
        except Exception as exc:  # noqa: BLE001 - a failed build is a result, not a crash
            say({"ok": False, "error": f"{type(exc).__name__}: {exc}"})


def run_worker(start: Callable[[], Any]) -> None:
    """`serve` over this process's stdout; the protocol gets its own copy of it and
    whatever the compilers print goes to stderr instead of into the protocol."""
    proto = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    serve(start, proto)


if __name__ == "__main__":
    run_worker(lambda: Worker(KINDS[sys.argv[1]]()))

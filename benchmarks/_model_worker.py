"""One contender of benchmarks/models.py in its own process, driven over a pipe
(the JSON-lines protocol of _worker.py).

  python benchmarks/_model_worker.py tvmlite|torch|tvm

A process per contender gives each its own threads (PyTorch's count is set
once, OpenMP's pool is per process), its own interpreter (TVM may live in
another virtual environment, and never shares an address space with
llvmlite's LLVM) and its own peak resident size, so the peak memory of a call
is measured the same way for all. The worker times its own calls.

Requests ({"cmd": ..., ...}), after the hello:
  load {dir, name, options}  read NAME.tvms and NAME.npz (arg0.. main's arguments,
                             out0.. PyTorch's outputs); options: tvmlite's
                             {"target", "pipeline"}, PyTorch's {"threads"}
  compile                    build the model; value {"wall_ms", "cpu_ms"} (None for PyTorch,
                             whose model is made from the npz, not compiled)
  check                      one call; value: each output's error relative to the
                             largest magnitude of the npz's output
  calibrate {min_ms}, time   as _worker.py: calls per timed run, then ms per call
  memory {reset}             resident and peak MB (_worker.memory)
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from _timing import autorange, stopwatch
from _worker import memory, run_worker
from _workloads import relative_error


@dataclass(frozen=True)
class Model:
    """NAME.tvms and NAME.npz: the text, main's arguments, the expected outputs."""

    name: str
    text: str
    arrays: list[np.ndarray]
    expected: list[np.ndarray]

    @staticmethod
    def load(directory: Path, name: str) -> Model:
        data = np.load(directory / f"{name}.npz")
        arrays = [data[f"arg{i}"] for i in range(_count(data.files, "arg"))]
        expected = [data[f"out{i}"] for i in range(_count(data.files, "out"))]
        return Model(name, (directory / f"{name}.tvms").read_text(), arrays, expected)


def _count(keys: list[str], prefix: str) -> int:
    return sum(1 for k in keys if k.startswith(prefix) and k[len(prefix) :].isdigit())


Call = Callable[[], list[np.ndarray]]


class TVMLite:
    def __init__(self) -> None:
        import tvmlite  # noqa: PLC0415 - only this kind needs it

        self.tvmlite = tvmlite

    def info(self) -> dict[str, Any]:
        return {"tvmlite": self.tvmlite.__version__, "from": str(Path(self.tvmlite.__file__))}

    def compile(self, model: Model, options: dict[str, Any]) -> Call:
        mod = self.tvmlite.parse(model.text, f"{model.name}.tvms")
        target = options.get("target", "llvm")
        arrays, params = model.arrays, None
        if options.get("params") == "bound":  # the weights bound at build time
            num_input, names = options["num_input"], options["param_names"]
            params = dict(zip(names[num_input:], arrays[num_input:], strict=True))
            arrays = arrays[:num_input]
        built = self.tvmlite.build(mod, target, options.get("pipeline"), cache=False, params=params)
        main = built["main"]
        return lambda: _outputs(main(*arrays))


class PyTorch:
    """PyTorch eager on the architecture _torch_models defines for the model's name,
    with the npz's weights, in inference mode."""

    def __init__(self) -> None:
        import torch  # noqa: PLC0415

        self.torch = torch

    def info(self) -> dict[str, Any]:
        return {"torch": self.torch.__version__}

    def compile(self, model: Model, options: dict[str, Any]) -> Call:
        import _torch_models  # noqa: PLC0415 - imports torchvision / transformers

        torch = self.torch
        torch.set_num_threads(options["threads"])
        num_input, names = options["num_input"], options["param_names"]
        weights = dict(zip(names[num_input:], model.arrays[num_input:], strict=True))
        module = _torch_models.make(model.name, weights)
        data = [torch.from_numpy(a) for a in model.arrays[:num_input]]

        def call() -> list[np.ndarray]:
            with torch.inference_mode():
                return _outputs(module(*data))

        return call


class TVM:
    """TVM's default build (`tvm.compile` for the host CPU) run by the Relax VM."""

    def __init__(self) -> None:
        import tvm  # noqa: PLC0415 - optional, benchmark only
        from tvm import relax  # noqa: PLC0415

        self.tvm, self.relax = tvm, relax
        self.mcpu = tvm.target.codegen.llvm_get_system_cpu()

    def info(self) -> dict[str, Any]:
        return {"tvm": self.tvm.__version__, "target": f"llvm -mcpu={self.mcpu}"}

    def compile(self, model: Model, options: dict[str, Any]) -> Call:
        tvm = self.tvm
        target = tvm.target.Target({"kind": "llvm", "mcpu": self.mcpu})
        # TVM 0.27 prints a non-finite constant as a string, R.const("-inf", "float32"),
        # which its own parser refuses: give it Python's spelling.
        text = re.sub(r'R\.const\("(-?)(inf|nan)"', r'R.const(\1float("\2")', model.text)
        built = tvm.compile(tvm.script.from_source(text), target=target)
        main = self.relax.VirtualMachine(built, tvm.cpu())["main"]
        args = [tvm.runtime.tensor(a) for a in model.arrays]
        return lambda: _outputs(main(*args))


def _outputs(value: Any) -> list[np.ndarray]:
    """A call's result as a flat list of arrays (tuples of any kind flattened)."""
    if isinstance(value, np.ndarray):
        return [value]
    if hasattr(value, "numpy"):  # a torch or TVM tensor
        return [np.asarray(value.numpy())]
    return [array for item in value for array in _outputs(item)]


KINDS = {"tvmlite": TVMLite, "torch": PyTorch, "tvm": TVM}


class ModelWorker:
    def __init__(self, contender: Any) -> None:
        self.contender = contender
        self.model: Model | None = None
        self.options: dict[str, Any] = {}
        self.call: Call | None = None
        self.timed: Callable[[], float] | None = None

    def info(self) -> dict[str, Any]:
        return self.contender.info()

    def handle(self, request: dict[str, Any]) -> Any:
        cmd = request["cmd"]
        if cmd == "memory":
            return memory(request.get("reset", False))
        if cmd == "load":
            self.call = self.timed = None
            self.model = Model.load(Path(request["dir"]), request["name"])
            self.options = request.get("options", {})
            return None
        if self.model is None:
            raise RuntimeError(f"{cmd} before load")
        if cmd == "compile":
            wall, cpu = time.perf_counter(), time.process_time()
            self.call = self.contender.compile(self.model, self.options)
            if isinstance(self.contender, PyTorch):
                return None
            cpu_ms = (time.process_time() - cpu) * 1e3
            return {"wall_ms": (time.perf_counter() - wall) * 1e3, "cpu_ms": cpu_ms}
        if self.call is None:
            raise RuntimeError(f"{cmd} before compile")
        if cmd == "check":
            outs, expected = self.call(), self.model.expected
            if len(outs) != len(expected):
                raise ValueError(f"{len(outs)} outputs, the npz has {len(expected)}")
            return [relative_error(o, e) for o, e in zip(outs, expected, strict=True)]
        if cmd == "calibrate":
            call = self.call
            number = autorange(call, request["min_ms"])
            self.timed = stopwatch(call, number)
            return number
        if cmd == "time":
            if self.timed is None:
                raise RuntimeError("time before calibrate")
            return self.timed()
        raise ValueError(f"unknown command {cmd!r}")


if __name__ == "__main__":
    run_worker(lambda: ModelWorker(KINDS[sys.argv[1]]()))

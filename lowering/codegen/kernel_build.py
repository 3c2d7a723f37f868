"""The kernels of one build, each compiled once: identical kernels share one unit,
units in the compile cache are loaded, the rest are compiled here or in worker
processes, in parallel.

    units = compile_kernels(prims, machine, store)   # name -> KernelUnit

Identical kernels are structurally equal prim functions (names do not count:
their calling conventions differ in names only), hashed only when their
parameters agree; the first of them, in module order, is compiled and the
others call it. The units to compile are LLVM IR text
(`kernel_unit.py`): the Python side of code generation runs here, LLVM's
optimization and machine code (most of the time) wherever there is a free core.

Parallelism: the PassContext config `tvmlite.build_workers` (an int), else
$TVMLITE_BUILD_WORKERS, else the cores this process may run on, is how many
processes compile at once, this one included. Below MIN_PARALLEL units, or with
one worker, everything compiles in this process: a small module or a one-core
machine pays nothing. Above, this process compiles from the same queue as the
workers, so a first build never waits for them; an uncached build of a
large module starts them before it lowers the module (`prestart`), to have
them ready (a cached build may find most kernels in the cache: it starts them
when it has at least MIN_PARALLEL to compile). Workers are
`python .../kernel_worker.py` processes (llvmlite only), started on first
need and kept for the process's life (their LLVM state and target machines
are reused by every later build); a worker that dies is not replaced,
its unit compiled here. Whoever compiles a unit, its object is the same bytes
(same IR, same machine, same LLVM), and units are linked in module order: the
output does not depend on the number of workers.
"""

from __future__ import annotations

import atexit
import os
import pickle
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import relax, tir
from tvmlite.dsl.module import IRModule
from tvmlite.dsl.structural import structural_equal, structural_hash
from tvmlite.lowering.codegen import kernel_worker
from tvmlite.lowering.codegen.kernel_unit import (
    KernelSource,
    KernelUnit,
    compile_ir,
    kernel_source,
)
from tvmlite.lowering.codegen.target import MachineOptions, resolved
from tvmlite.lowering.transform import PassContext
from tvmlite.runtime.abi import KernelSignature, kernel_symbol

WORKERS_KEY = "tvmlite.build_workers"  # registered in transform.CONFIG_OPTIONS
WORKERS_ENV = "TVMLITE_BUILD_WORKERS"
MIN_PARALLEL = 8  # units to compile; fewer compile in this process


class KernelStore(Protocol):
    """Where compiled units are kept between builds (`lowering/cache/kernels.py`),
    by what a unit is compiled from: its LLVM IR text, or its lowered function's
    content key and name (`compile_kernels`)."""

    def load(self, source: str, machine: MachineOptions, symbol: str) -> KernelUnit | None: ...

    def save(self, source: str, machine: MachineOptions, unit: KernelUnit) -> None: ...


def compile_kernels(
    prims: Mapping[str, tuple[tir.PrimFunc, KernelSignature]],
    machine: MachineOptions,
    store: KernelStore | None = None,
    keys: Mapping[str, str] | None = None,
) -> tuple[dict[str, KernelUnit], dict[str, int]]:
    """The unit of every kernel of `prims` (name -> lowered function and its
    signature), compiled for `machine`; also the counts: distinct units,
    loaded from `store`, compiled. `keys`, when it has every kernel, gives each
    lowered function's content key (lowering/incremental.py: equal keys, equal
    functions, names included): kernels of one key share a unit, and a unit is
    looked up in `store` by key and name, its IR made only if it must be compiled."""
    if keys is not None and not all(name in keys for name in prims):
        keys = None
    same_as = _identical(prims) if keys is None else _same_key(keys, prims)
    names = [name for name in prims if same_as[name] == name]
    sources: dict[str, KernelSource] = {}

    def source(name: str) -> KernelSource:
        if name not in sources:
            sources[name] = kernel_source(*prims[name])
        return sources[name]

    def made_from(name: str) -> str:
        return source(name).text if keys is None else f"lowered {keys[name]} {name}"

    units: dict[str, KernelUnit] = {}
    for name in names if store is not None else ():
        assert store is not None
        found = store.load(made_from(name), machine, kernel_symbol(prims[name][1].name))
        if found is not None:
            units[name] = found
    todo = [name for name in names if name not in units]
    compiled = compile_sources([source(n).text for n in todo], machine)
    for name, (obj, optimized) in zip(todo, compiled, strict=True):
        src = source(name)
        units[name] = KernelUnit(src.symbol, src.can_fail, obj, optimized)
        if store is not None:
            store.save(made_from(name), machine, units[name])
    counts = {"units": len(names), "cached": len(names) - len(todo), "compiled": len(todo)}
    return {name: units[same_as[name]] for name in prims}, counts


def _same_key(keys: Mapping[str, str], prims: Mapping[str, Any]) -> dict[str, str]:
    """Each kernel's first kernel of the same content key, in module order."""
    first: dict[str, str] = {}
    return {name: first.setdefault(keys[name], name) for name in prims}


def _identical(prims: Mapping[str, tuple[tir.PrimFunc, KernelSignature]]) -> dict[str, str]:
    """Each kernel's first identical kernel in module order (itself if none).
    Only kernels whose parameters agree (kind, dtype, buffer shape) are hashed."""
    groups: dict[Any, list[str]] = {}
    for name, (_, sig) in prims.items():
        params = tuple(
            (p.var.dtype, None if p.buffer is None else repr(p.buffer.shape)) for p in sig.params
        )
        groups.setdefault((params, len(sig.sym_vars), sig.noalias, sig.reports), []).append(name)
    same_as = {name: name for name in prims}
    for names in groups.values():
        by_hash: dict[int, list[str]] = {}
        for name in names if len(names) > 1 else ():
            func = prims[name][0]
            found = by_hash.setdefault(structural_hash(func), [])
            same = next((n for n in found if structural_equal(prims[n][0], func)), None)
            if same is None:
                found.append(name)
            same_as[name] = same or name
    return same_as


def configured_workers() -> int:
    """How many processes may compile at once (this one included)."""
    given = PassContext.current().get(WORKERS_KEY)
    where = f"PassContext config '{WORKERS_KEY}'"
    if given is None:
        text = os.environ.get(WORKERS_ENV, "").strip()
        if not text:
            return len(os.sched_getaffinity(0))
        where = f"${WORKERS_ENV}"
        try:
            given = int(text)
        except ValueError:
            raise TVMLiteError(f"{where} must be a whole number, got {text!r}") from None
    if given < 1:
        raise TVMLiteError(f"{where} must be at least 1, got {given}")
    return given


def prestart(mod: IRModule) -> None:
    """Start the workers a build of `mod` will likely use, so that they start
    while it is lowered: when more than one may compile and `mod` has at least
    MIN_PARALLEL prim functions and graph bindings (most become kernels)."""
    workers = configured_workers()
    if workers < 2:
        return
    size = 0
    for func in mod.functions.values():
        body = getattr(func, "body", None)
        if isinstance(body, relax.SeqExpr):
            size += sum(len(block.bindings) for block in body.blocks)
        else:
            size += 1
    if size >= MIN_PARALLEL:
        _pool.get(workers - 1)


def compile_sources(texts: Sequence[str], machine: MachineOptions) -> list[tuple[bytes, str]]:
    """(object, optimized IR) of each kernel module text, in order."""
    workers = min(configured_workers(), len(texts))
    if workers < 2 or len(texts) < MIN_PARALLEL:
        return [compile_ir(text, machine) for text in texts]
    return _Batch(texts, machine).run(_pool.get(workers - 1))


class _Worker:
    """One worker process: requests and replies are pickles, length-prefixed,
    over its stdin and stdout."""

    def __init__(self) -> None:
        # By path: the worker imports llvmlite, none of tvmlite (kernel_worker.py).
        # Its error output is the build's to give: a unit it fails is compiled here.
        self.process = subprocess.Popen(
            [sys.executable, str(Path(kernel_worker.__file__))],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.alive = True
        self.lock = threading.Lock()  # one batch at a time: builds in threads share it

    def compile(self, text: str, machine: kernel_worker.Machine) -> tuple[bytes, str] | None:
        """The unit compiled by the worker; None if it failed (or died)."""
        assert self.process.stdin is not None and self.process.stdout is not None
        try:
            kernel_worker.send(self.process.stdin, (text, machine))
            reply = kernel_worker.receive(self.process.stdout)
        except (OSError, EOFError, pickle.UnpicklingError):  # a dead worker, a torn reply
            self.alive = False
            return None
        return reply if isinstance(reply, tuple) else None

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()  # the worker's loop ends at end of input
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()


class _Pool:
    """The process's workers, started on first need, closed at exit."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.workers: list[_Worker] = []
        self.pid = os.getpid()
        atexit.register(self.close)

    def get(self, count: int) -> list[_Worker]:
        with self.lock:
            if self.pid != os.getpid():  # a forked child: its parent's workers are not its own
                self.workers, self.pid = [], os.getpid()
            self.workers = [w for w in self.workers if w.alive]
            while len(self.workers) < count:
                self.workers.append(_Worker())
            return self.workers[:count]

    def close(self) -> None:
        with self.lock:
            for worker in self.workers:
                worker.close()
            self.workers = []


_pool = _Pool()


class _Batch:
    """Texts compiled by workers and this process, each taking the next unit."""

    def __init__(self, texts: Sequence[str], machine: MachineOptions) -> None:
        self.texts = texts
        self.machine = machine
        self.resolved = resolved(machine)
        self.results: list[tuple[bytes, str] | None] = [None] * len(texts)
        self.next = 0
        self.lock = threading.Lock()

    def take(self) -> int | None:
        with self.lock:
            if self.next == len(self.texts):
                return None
            self.next += 1
            return self.next - 1

    def serve(self, worker: _Worker) -> None:
        with worker.lock:
            while worker.alive and (k := self.take()) is not None:
                self.results[k] = worker.compile(self.texts[k], self.resolved)

    def run(self, workers: list[_Worker]) -> list[tuple[bytes, str]]:
        threads = [threading.Thread(target=self.serve, args=(w,)) for w in workers]
        for thread in threads:
            thread.start()
        while (k := self.take()) is not None:
            self.results[k] = compile_ir(self.texts[k], self.machine)
        for thread in threads:
            thread.join()
        # What a worker could not compile is compiled here: its error is raised here.
        return [
            compile_ir(text, self.machine) if found is None else found
            for text, found in zip(self.texts, self.results, strict=True)
        ]

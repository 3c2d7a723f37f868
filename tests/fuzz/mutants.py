"""Mutants of valid modules, and a harness that parses, builds and runs each one in
a forked child process.

A mutant must give a located `ParseError`, or parse; one that parses must build or
raise `TVMLiteError`; every function it builds is called on random inputs and must
return or raise `TVMLiteError`. Anything else (another exception, a signal, a child
that does not finish) is a bug. The child is forked from the test process, so a
mutant costs its build and run, not an interpreter start and an import.
"""

from __future__ import annotations

import faulthandler
import multiprocessing
import os
import random
import re
import traceback
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import tvmlite
from tvmlite.dsl import relax, tir
from tvmlite.lowering.analysis.relax_util import tir_vars
from tvmlite.runtime.args import evaluate

LOCATED = re.compile(r"mutant\.tvms:\d+:\d+: error: ")
# The numbers a number mutation writes: beyond int32, beyond int64, beyond every
# integer dtype, non-integral, non-finite as float32, and the small edge cases.
NUMBERS = ("2**31", "2**63", "10**30", "99999999999", "1e308", "0.5", "-1", "0", "2**31 - 1")
STRAY = ("\x00", "\u200b", "é", "(", "]", ":", "\t", "\\", "'''")
# Symbolic dims get this value when a mutant's function is called.
SYM_VALUE = 3
MAX_ELEMENTS = 1 << 16
# Outcomes a mutant may have; anything else is a bug.
CLEAN = frozenset(["rejected", "clean error at build", "built", "ran", "clean error at run"])


def mutate(text: str, rng: random.Random) -> str:
    """One random change: a line deleted, duplicated or re-indented, the text cut,
    a token deleted or two words swapped, a stray character, a bad name or dtype,
    a number replaced by one out of range or of the wrong kind, deep nesting."""
    lines = text.splitlines()
    tokens = re.findall(r"\w+|[^\w\s]", text)
    op = rng.randrange(12)
    if op == 0:
        del lines[rng.randrange(len(lines))]
    elif op == 1:
        i = rng.randrange(len(lines))
        lines.insert(i, lines[i])
    elif op == 2:
        i = rng.randrange(len(lines))
        lines[i] = " " * rng.choice([1, 3, 5, 12]) + lines[i].lstrip()
    elif op == 3:
        return text[: rng.randrange(len(text))]
    elif op == 4:
        return text.replace(rng.choice(tokens), "", 1)
    elif op == 5:
        i = rng.randrange(len(text))
        return text[:i] + rng.choice(STRAY) + text[i:]
    elif op == 6:
        words = [t for t in tokens if t.isidentifier()]
        a, b = rng.sample(words, 2)
        return text.replace(a, "\0", 1).replace(b, a, 1).replace("\0", b, 1)
    elif op == 7:
        return rng.choice(
            [
                text.replace("R.", "R.nosuch_", 1),
                text.replace('"float32"', '"float33"', 1),
                text.replace('"float32"', '"float32x0"', 1),
                text.replace("T.", "Q.", 1),
                text.replace("T.int64(", "T.int64(-", 1),
            ]
        )
    elif op == 8:
        return text + "\nx = " + "(" * 600 + "1" + ")" * 600 + "\n"
    else:  # numbers: the most common way a valid-looking module goes wrong
        numbers = list(re.finditer(r"(?<![\w.])\d+(?![\w.])", text))
        if not numbers:
            return text
        m = rng.choice(numbers)
        return text[: m.start()] + rng.choice(NUMBERS) + text[m.end() :]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- in the child


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return f"{type(err).__name__}: {text.splitlines()[0] if text else ''}"[:200]


def _array(shape: tuple[int, ...], dtype: str, rng: np.random.Generator) -> np.ndarray:
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if np.issubdtype(np.dtype(dtype), np.integer):
        return rng.integers(-3, 4, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


class _Unrunnable(Exception):
    """A parameter this harness cannot make a value for (the function is skipped)."""


@dataclass
class _Inputs:
    """Random arguments for a function's parameters; every symbolic var is SYM_VALUE."""

    rng: np.random.Generator
    env: dict[tir.Var, int] = field(default_factory=dict)

    def dim(self, e: tir.PrimExpr) -> int:
        for var in tir_vars(e):
            self.env.setdefault(var, SYM_VALUE)
        value = evaluate(e, self.env)
        if value is None or not 0 <= value <= MAX_ELEMENTS:
            raise _Unrunnable
        return value

    def tensor(self, dims: Iterable[tir.PrimExpr], dtype: str) -> np.ndarray:
        shape = tuple(self.dim(d) for d in dims)
        if dtype in ("void", "handle") or int(np.prod(shape)) > MAX_ELEMENTS:
            raise _Unrunnable
        return _array(shape, dtype, self.rng)

    def scalar(self, dtype: str) -> Any:
        return _array((), dtype, self.rng).item()

    def relax(self, sinfo: relax.StructInfo) -> Any:
        if isinstance(sinfo, relax.TensorStructInfo) and isinstance(sinfo.shape, tuple):
            return self.tensor(sinfo.shape, sinfo.dtype)
        if isinstance(sinfo, relax.TupleStructInfo):
            return tuple(self.relax(f) for f in sinfo.fields)
        if isinstance(sinfo, relax.ShapeStructInfo):
            if sinfo.values is not None:
                return tuple(self.dim(v) for v in sinfo.values)
            if sinfo.ndim >= 0:
                return (SYM_VALUE,) * sinfo.ndim
        if isinstance(sinfo, relax.PrimStructInfo):
            if isinstance(sinfo.value, tir.PrimExpr):
                return self.dim(sinfo.value)
            return self.scalar(sinfo.dtype)
        raise _Unrunnable

    def prim(self, func: tir.PrimFunc) -> list[Any]:
        buffers = dict(func.buffer_map)
        args = []
        for p in func.params:
            if p in buffers:
                args.append(self.tensor(buffers[p].shape, buffers[p].dtype))
            elif p.dtype == "handle":
                raise _Unrunnable
            else:
                args.append(
                    self.env.setdefault(p, SYM_VALUE) if _is_int(p) else self.scalar(p.dtype)
                )
        return args


def _is_int(var: tir.Var) -> bool:
    return var.dtype.startswith(("int", "uint"))


def _call_all(mod: Any, ex: Any, rng: np.random.Generator) -> str:
    """Call every public function that has runnable parameters."""
    functions = mod.functions if isinstance(mod, tvmlite.IRModule) else {"main": mod}
    outcome = "built"
    for name in ex.functions:
        func = functions.get(name)
        inputs = _Inputs(rng)
        try:
            if isinstance(func, relax.Function):
                args = [inputs.relax(p.struct_info) for p in func.params]
            elif isinstance(func, tir.PrimFunc):
                args = inputs.prim(func)
            else:
                continue
        except _Unrunnable:
            continue
        try:
            ex[name](*args)
        except tvmlite.TVMLiteError:
            outcome = "clean error at run"
            continue
        if outcome == "built":
            outcome = "ran"
    return outcome


def build_and_run(text: str, seed: int = 0) -> str:
    """The outcome of one mutant, in this process (the harness calls it in a child)."""
    try:
        mod = tvmlite.parse(text, filename="mutant.tvms")
    except tvmlite.ParseError as err:
        return "rejected" if LOCATED.match(str(err)) else f"unlocated ParseError: {err}"[:200]
    try:
        ex = tvmlite.build(mod, cache=False, checked=True)
    except tvmlite.TVMLiteError:
        return "clean error at build"
    return _call_all(mod, ex, np.random.default_rng(seed))


def _child(text: str, seed: int, conn: Any) -> None:
    faulthandler.disable()  # pytest's would print the crash the parent reports anyway
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    try:
        conn.send(build_and_run(text, seed))
    except BaseException as err:  # noqa: BLE001 - the bug being looked for
        where = traceback.extract_tb(err.__traceback__)[-1]
        conn.send(f"internal exception: {_first_line(err)} ({where.filename}:{where.lineno})")
    os._exit(0)  # no atexit handlers of the parent's (pytest's) in the child


def run_in_child(text: str, seed: int = 0, timeout: float = 120.0) -> str:
    """`build_and_run` in a forked child: a crash or a hang is an outcome too."""
    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_child, args=(text, seed, send))
    child.start()
    send.close()
    outcome = None
    if receive.poll(timeout):
        try:
            outcome = receive.recv()
        except EOFError:  # the child died before it could answer
            pass
    child.join(5 if outcome is not None else 0.1)
    if child.exitcode is None:
        child.kill()
        child.join()
        return outcome or "hang"
    if outcome is None:
        code = child.exitcode
        return f"crash (signal {-code})" if code < 0 else f"child died (exit {code})"
    return outcome


@dataclass
class Report:
    counts: Counter[str] = field(default_factory=Counter)
    bad: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return ", ".join(f"{k}: {v}" for k, v in sorted(self.counts.items()))


def fuzz(seeds: list[str], n: int, seed: int = 0, timeout: float = 120.0) -> Report:
    """`n` mutants of the seed texts, each parsed, built and run in a child."""
    rng = random.Random(seed)
    report = Report()
    for i in range(n):
        text = mutate(rng.choice(seeds), rng)
        outcome = run_in_child(text, seed=i, timeout=timeout)
        key = outcome if outcome in CLEAN else outcome.split(":")[0]
        report.counts[key] += 1
        if outcome not in CLEAN:
            report.bad.append(f"mutant {i} (seed {seed}): {outcome}\n{text}")
    return report

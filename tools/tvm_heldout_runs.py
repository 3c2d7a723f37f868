"""Runs what TVM runs: of the corpus modules (a directory tools/tvm_heldout.py wrote, or
the public corpus), those TVM 0.27 builds and runs on a CPU are built and run by tvmlite
on the same random inputs, and the outputs compared.

    python tools/tvm_heldout_runs.py record DIR [--only S]   # the Python with TVM 0.27
    python tools/tvm_heldout_runs.py check DIR [--only S]    # the Python with tvmlite

`record` parses each module with TVM, builds it (`tvm.compile(mod, "llvm")`) and calls
every public function of it: a Relax function on TVM's VM when the module has one (its
prim functions are its kernels), else every public prim function. Inputs are random
(seeded by the module's name; symbolic dims are 3 unless a shape pins them); what TVM
returns (a Relax function's outputs, depth first; every buffer of a prim function after
the call) goes to DIR/runs/NAME.npz with the inputs, and the list to DIR/runs/manifest.json.
A module TVM does not parse, build or run in 60 s is not a case. `check` builds each
recorded module with tvmlite, calls it with the same inputs and compares; it prints the
misses grouped by class and a summary line.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import multiprocessing
import re
import signal
import sys
import traceback
from pathlib import Path
from typing import Any

import numpy as np

DEFAULT_DIM = 3
TIMEOUT = 60


# ------------------------------------------------------------------ record (TVM)


def _dims(shape: Any, env: dict[str, int]) -> list[int] | None:
    """Static extents of a TVM shape, its symbolic vars bound in `env` (first use: 3)."""
    import tvm
    from tvm.sym.analyzer import Analyzer

    out = []
    for dim in shape:
        value = getattr(dim, "value", None)
        if isinstance(value, int):
            out.append(value)
            continue
        analyzer = Analyzer()
        for var in tvm.tirx.analysis.undefined_vars(dim):
            size = env.setdefault(var.name, DEFAULT_DIM)
            analyzer.bind(var, tvm.tirx.IntImm(str(var.ty.dtype), size))
        value = getattr(analyzer.simplify(dim), "value", None)
        if not isinstance(value, int):
            return None
        out.append(value)
    return out


_RANDOM_DTYPES = ("bool", "float16", "float32", "float64", "int8", "int16", "int32", "int64",
                  "uint8", "uint16", "uint32", "uint64")  # fmt: skip


def _random(shape: list[int], dtype: str, rng: np.random.Generator) -> np.ndarray:
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.startswith(("int", "uint")):
        return rng.integers(0, 2, shape).astype(dtype)  # in range as an index of any axis
    return rng.uniform(-1.0, 1.0, shape).astype(dtype)


def _scalar(dtype: str, name: str, env: dict[str, int], rng: np.random.Generator) -> Any:
    if dtype.startswith(("int", "uint")):
        return env.setdefault(name, DEFAULT_DIM)
    if dtype.startswith("float"):
        return float(rng.uniform(-1, 1))
    return None


def _relax_inputs(func: Any, rng: np.random.Generator) -> list[Any] | None:
    from tvm import relax

    env: dict[str, int] = {}
    args: list[Any] = []
    for param in func.params:
        ty = param.ty
        if isinstance(ty, relax.TensorType) and ty.shape is not None:
            dims = _dims(ty.shape.values, env)
            if dims is None or str(ty.dtype) not in _RANDOM_DTYPES:
                return None
            args.append(_random(dims, str(ty.dtype), rng))
        elif isinstance(ty, relax.ShapeType) and ty.values is not None:
            dims = _dims(ty.values, env)
            if dims is None:
                return None
            args.append(tuple(dims))
        elif type(ty).__name__ == "PrimType" and str(ty.dtype) in _RANDOM_DTYPES:
            args.append(_scalar(str(ty.dtype), param.name, env, rng))
        else:
            return None
    return None if any(a is None for a in args) else args


def _prim_inputs(func: Any, rng: np.random.Generator) -> list[Any] | None:
    env: dict[str, int] = {}
    args: list[Any] = []
    for param in func.params:
        ty = param.ty
        if type(ty).__name__ == "BufferType":
            dims = _dims(param.shape, env)
            if dims is None or str(param.dtype) not in _RANDOM_DTYPES:
                return None
            args.append(_random(dims, str(param.dtype), rng))
        elif type(ty).__name__ == "PrimType" and str(ty.dtype) in _RANDOM_DTYPES:
            args.append(_scalar(str(ty.dtype), param.name, env, rng))
        else:
            return None
    return None if any(a is None for a in args) else args


def _to_numpy(value: Any) -> list[np.ndarray]:
    import tvm

    if isinstance(value, tvm.runtime.Tensor):
        return [value.numpy()]
    if isinstance(value, tvm.runtime.ShapeTuple):
        return [np.array(list(value), "int64")]
    if isinstance(value, int | float | bool):
        return [np.array(value)]
    if isinstance(value, list | tuple) or type(value).__name__ == "Array":
        return [leaf for item in value for leaf in _to_numpy(item)]
    raise TypeError(f"result of type {type(value).__name__}")


def _record_one(text: str, name: str, out: Path) -> dict[str, Any] | None:
    import tvm
    from tvm import relax

    mod = tvm.script.from_source(text)
    rng = np.random.default_rng(int(hashlib.sha1(name.encode()).hexdigest()[:8], 16))
    relax_funcs = {
        gv.name_hint: f
        for gv, f in mod.functions.items()
        if isinstance(f, relax.Function) and f.attrs and "global_symbol" in f.attrs
    }
    prim_funcs = {
        gv.name_hint: f
        for gv, f in mod.functions.items()
        if isinstance(f, tvm.tirx.PrimFunc) and f.attrs and "global_symbol" in f.attrs
    }
    if any(_is_stub(f) for f in mod.functions.values()):
        raise ValueError("a kernel is a stub (T.evaluate(0)): its outputs are uninitialized")
    lib = tvm.compile(mod, target="llvm")
    arrays: dict[str, np.ndarray] = {}
    calls = []
    if relax_funcs:
        vm = relax.VirtualMachine(lib, tvm.cpu())
        for fname, func in relax_funcs.items():
            args = _relax_inputs(func, rng)
            if args is None:
                continue
            tvm_args = [tvm.runtime.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
            tvm_args = [tvm.runtime.ShapeTuple(a) if isinstance(a, tuple) else a for a in tvm_args]
            outs = _to_numpy(vm[fname](*tvm_args))
            calls.append(_stash(arrays, fname, "relax", args, outs))
    else:
        for fname, func in prim_funcs.items():
            args = _prim_inputs(func, rng)
            if args is None:
                continue
            tvm_args = [tvm.runtime.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
            lib[fname](*tvm_args)
            outs = [a.numpy() for a in tvm_args if isinstance(a, tvm.runtime.Tensor)]
            calls.append(_stash(arrays, fname, "prim", args, outs))
    if not calls:
        return None
    np.savez(out / (name + ".npz"), **arrays)
    return {"file": name, "calls": calls}


def _is_stub(func: Any) -> bool:
    """A prim function that writes nothing (tests of passes stub their kernels)."""
    import tvm

    body = getattr(func, "body", None)
    return (
        isinstance(func, tvm.tirx.PrimFunc)
        and isinstance(body, tvm.tirx.Evaluate)
        and getattr(body.value, "value", None) == 0
        and len(func.params) > 0
    )


def _stash(arrays: dict, fname: str, kind: str, args: list, outs: list) -> dict[str, Any]:
    """Args and outputs of one call into `arrays` (keys `f.in0`, `f.out0`, ...)."""
    spec = []
    for i, arg in enumerate(args):
        key = f"{fname}.in{i}"
        arrays[key] = np.asarray(arg, "int64" if isinstance(arg, tuple) else None)
        spec.append(
            "shape"
            if isinstance(arg, tuple)
            else "scalar"
            if np.ndim(arg) == 0 and not isinstance(arg, np.ndarray)
            else "tensor"
        )
    for i, value in enumerate(outs):
        arrays[f"{fname}.out{i}"] = value
    return {"function": fname, "kind": kind, "args": spec, "outs": len(outs)}


def _record_worker(text: str, name: str, out: Path, queue: Any) -> None:
    try:
        queue.put(_record_one(text, name, out))
    except BaseException:  # noqa: BLE001  (not a case; say why in the log)
        queue.put({"skip": traceback.format_exc().strip().splitlines()[-1][:160]})


def record(corpus: Path, only: str) -> int:
    """Cases in the order of their texts' hashes (a run cut short is a fair sample of
    all test files); the manifest is rewritten after each, and a run resumes a past one."""
    import tvm  # noqa: F401  (imported once, before the workers fork)

    out = corpus / "runs"
    out.mkdir(exist_ok=True)
    done_path = out / "manifest.json"
    past = json.loads(done_path.read_text()) if done_path.exists() else {"cases": [], "skipped": {}}
    seen = {c["file"] for c in past["cases"]} | set(past["skipped"])
    cases = [
        c for c in json.loads((corpus / "manifest.json").read_text())["cases"] if only in c["file"]
    ]
    cases.sort(key=lambda c: c["file"].rsplit("__", 1)[-1])
    ctx = multiprocessing.get_context("fork")
    for case in cases:
        name = case["file"][: -len(".tvms")]
        if name in seen:
            continue
        queue = ctx.Queue()
        text = (corpus / case["file"]).read_text()
        proc = ctx.Process(target=_record_worker, args=(text, name, out, queue))
        proc.start()
        proc.join(TIMEOUT)
        if proc.is_alive():
            proc.kill()
            proc.join()
            got = {"skip": "timeout"}
        else:
            got = queue.get() if not queue.empty() else {"skip": f"exit {proc.exitcode}"}
        if got is None:
            past["skipped"][name] = "no callable function"
        elif "skip" in got:
            past["skipped"][name] = re.sub(r"\d+", "_", got["skip"])[:90]
        else:
            past["cases"].append(got)
        done_path.write_text(json.dumps(past, indent=1))
    skipped = collections.Counter(past["skipped"].values())
    for why, count in skipped.most_common(15):
        print(f"{count:5d}  not a case: {why}")
    total = len(past["cases"]) + len(past["skipped"])
    print(f"record: {len(past['cases'])} of {total} modules built and run by TVM")
    return 0


# ------------------------------------------------------------------ check (tvmlite)


class _Hang(Exception):
    pass


def _alarm(*_: Any) -> None:
    raise _Hang()


def _close(got: np.ndarray, want: np.ndarray) -> bool:
    got = np.asarray(got)
    if got.shape != want.shape:
        return False
    if want.dtype.kind == "f":
        tol = 1e-2 if want.dtype == np.float16 else 1e-4
        return bool(np.allclose(got.astype(want.dtype), want, rtol=tol, atol=tol, equal_nan=True))
    return bool(np.array_equal(got, want))


def _flat(value: Any, sinfo: Any) -> list[Any]:
    """The leaves of a Relax result as `record` flattens TVM's (depth first), read by
    the function's return struct info: tvmlite returns a shape as a tuple of ints,
    which is one leaf (TVM's `ShapeTuple`), not one per dim."""
    from tvmlite.dsl import relax

    if isinstance(sinfo, relax.ShapeStructInfo) and isinstance(value, tuple):
        return [np.array(value, "int64")]
    if isinstance(value, list | tuple):
        fields = sinfo.fields if isinstance(sinfo, relax.TupleStructInfo) else ()
        if len(fields) != len(value):
            fields = (None,) * len(value)
        return [leaf for item, f in zip(value, fields, strict=True) for leaf in _flat(item, f)]
    return [value]


def _check_one(tvmlite: Any, corpus: Path, case: dict[str, Any]) -> str | None:
    mod = tvmlite.parse((corpus / (case["file"] + ".tvms")).read_text(), check_well_formed=False)
    data = np.load(corpus / "runs" / (case["file"] + ".npz"))
    ex = tvmlite.build(mod, target="llvm")
    for call in case["calls"]:
        fname = call["function"]
        args: list[Any] = []
        for i, kind in enumerate(call["args"]):
            value = data[f"{fname}.in{i}"]
            args.append(
                tuple(int(v) for v in value)
                if kind == "shape"
                else value.item()
                if kind == "scalar"
                else value.copy()
            )
        result = ex[fname](*args)
        got = (
            [a for a in args if isinstance(a, np.ndarray)]
            if call["kind"] == "prim"
            else _flat(result, getattr(mod[fname], "ret_struct_info", None))
        )
        if len(got) != call["outs"]:
            return f"{fname}: {len(got)} outputs, TVM has {call['outs']}"
        for i, value in enumerate(got):
            if not _close(np.asarray(value), data[f"{fname}.out{i}"]):
                return f"{fname}: output {i} differs from TVM's"
    return None


def check(corpus: Path, only: str, show: int) -> int:
    import tvmlite

    cases = [
        c
        for c in json.loads((corpus / "runs" / "manifest.json").read_text())["cases"]
        if only in c["file"]
    ]
    signal.signal(signal.SIGALRM, _alarm)
    good, groups, example = 0, collections.Counter(), {}
    for case in cases:
        signal.alarm(120)
        try:
            why = _check_one(tvmlite, corpus, case)
            key = (
                None if why is None else "wrong: " + re.sub(r"\b\d+\b", "_", why.split(": ", 1)[1])
            )
        except _Hang:
            key = "hang"
        except tvmlite.TVMLiteError as exc:
            key = (
                "refused: "
                + re.sub(
                    r"'[^']*'|\b\d+\b", "_", str(exc).split("error:", 1)[-1].strip().splitlines()[0]
                )[:110]
            )
        except Exception as exc:  # noqa: BLE001
            key = f"INTERNAL {type(exc).__name__}: {str(exc)[:80]}"
        finally:
            signal.alarm(0)
        if key is None:
            good += 1
        else:
            groups[key] += 1
            example.setdefault(key, case["file"])
    for key, count in groups.most_common(show):
        print(f"{count:5d}  {key}   e.g. {example[key]}")
    n = len(cases)
    share = 100 * good / max(n, 1)
    print(f"runs: {n} modules TVM builds and runs, tvmlite builds and matches {good}/{n} "
          f"({share:.1f} %)")  # fmt: skip
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("step", choices=["record", "check"])
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--only", default="")
    ap.add_argument("--show", type=int, default=30)
    args = ap.parse_args()
    sys.setrecursionlimit(20000)
    if args.step == "record":
        return record(args.corpus, args.only)
    return check(args.corpus, args.only, args.show)


if __name__ == "__main__":
    sys.exit(main())

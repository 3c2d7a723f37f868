"""`tvms run FILE|LIB`: call one function of a `.tvms` file (built on the fly,
through the compile cache) or of an exported library, on inputs from files or
drawn at random from the signature (cli_inputs.py), and print, save, time
(`--repeat`: `time_evaluator`) or profile it (`--profile`: `module.profile`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

from tvmlite.cli_inputs import (
    check_dims,
    draw,
    load_bundles,
    load_input,
    parse_dims,
    parse_pairs,
    split_inputs,
)
from tvmlite.cli_progress import progress
from tvmlite.diagnostics import TVMLiteError

ELF_MAGIC = b"\x7fELF"


def is_library(path: str) -> bool:
    if path == "-":
        return False
    try:
        with open(path, "rb") as f:
            return f.read(4) == ELF_MAGIC
    except OSError:
        return False


def load_module(args: argparse.Namespace) -> Any:
    """The module of the file (built) or library (loaded)."""
    import tvmlite
    from tvmlite.cli_build import pass_context, read_module, target_of

    if is_library(args.file):
        if args.params is not None:
            raise TVMLiteError(
                f"--params binds weights when a .tvms file is built; {args.file} is built "
                "already: pass its weights with --input FILE.npz"
            )
        module = tvmlite.load_module(args.file)
    else:
        mod = read_module(args)
        with pass_context(args, sys.stderr), progress(f"building {args.file}"):
            module = tvmlite.build(
                mod,
                target=target_of(args),
                pipeline=args.pipeline,
                cache=not args.no_cache,
                params=args.params,
            )
    return module


def run_command(args: argparse.Namespace) -> int:
    named, bundles = split_inputs(args.input)
    files = parse_pairs(named, "--input")
    dims = parse_dims(args.dim)
    if args.repeat < 0:
        raise TVMLiteError(f"--repeat must be at least 1, got {args.repeat}")
    module = load_module(args)
    fn = module[args.entry]
    params = _params(fn)
    given = load_bundles(bundles, [name for name, _ in params], args.entry)
    unknown = sorted(set(files) - {name for name, _ in params})
    if unknown:
        names = ", ".join(name for name, _ in params)
        raise TVMLiteError(f"{args.entry} has no parameter {unknown[0]!r} (parameters: {names})")
    check_dims(dims, params, args.entry)
    rng = np.random.default_rng(args.seed)
    num_input = _num_input(fn, len(params))
    values, random_weights = [], []
    for index, (name, sinfo) in enumerate(params):
        if name in files:
            values.append(load_input(name, files[name]))
        elif name in given:
            values.append(given[name])
        elif args.random:
            weight = index >= num_input
            values.append(draw(sinfo, name, dims, rng, weight=weight))
            if weight:
                random_weights.append(name)
        else:
            hint = f"pass --input {name}=FILE.npy, --input FILE.npz or --random"
            raise TVMLiteError(f"no value for parameter '{name}': {hint}")
    if random_weights:
        print(
            f"tvms: note: {len(random_weights)} weights of {args.entry} are random "
            f"({_listed(random_weights)}), drawn with a scale of 1/sqrt(fan-in): the results "
            "are not the model's (give them with --params or --input FILE.npz)",
            file=sys.stderr,
        )
    result = fn(*values)
    if hasattr(fn, "signature"):  # a prim function writes into its arguments: show those
        written = fn.signature.written
        outputs = {n: v for (n, _), v in zip(params, values, strict=True) if n in written}
    else:
        outputs = flatten_result(result, "result")
    if args.profile:
        report = module.profile(args.entry, *values, number=max(args.repeat, 1))
        print(report.json() if args.profile == "json" else report.table().rstrip("\n"))
    elif args.repeat:
        _time(module, values, args.repeat, args.entry)
    if args.output:
        _save(Path(args.output), outputs)
    elif not args.repeat and not args.profile:
        for name, value in outputs.items():
            print(f"{name}: {_describe(value)}")
            print(np.array2string(np.asarray(value), threshold=200, edgeitems=3))
    return 0


def _num_input(fn: Any, count: int) -> int:
    """How many leading parameters are data (TVM's `num_input`); all of them
    when the function does not say."""
    executable = getattr(fn, "executable", None)
    info = getattr(executable, "manifest", {}).get("functions", {}).get(getattr(fn, "name", ""))
    found = info.get("num_input") if isinstance(info, dict) else None
    return found if type(found) is int else count


def _listed(names: list[str], most: int = 4) -> str:
    shown = ", ".join(names[:most])
    return shown + (f", ... {len(names) - most} more" if len(names) > most else "")


def _params(fn: Any) -> list[tuple[str, Any]]:
    """(name, struct info or buffer) of each parameter of a graph or prim function."""
    if hasattr(fn, "signature"):
        return [(p.name, p.buffer if p.buffer is not None else p.var) for p in fn.signature.params]
    return [(p.name, p.struct_info) for p in fn.params]


def flatten_result(value: Any, name: str) -> dict[str, Any]:
    if isinstance(value, tuple):
        out: dict[str, Any] = {}
        for k, v in enumerate(value):
            out |= flatten_result(v, f"{name}[{k}]" if name != "result" else f"result{k}")
        return out
    return {} if value is None else {name: value}


def _describe(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"{value.dtype} {value.shape}"
    return type(value).__name__


def _save(path: Path, outputs: dict[str, Any]) -> None:
    try:
        with open(path, "wb") as f:
            np.savez(f, **{k: np.asarray(v) for k, v in outputs.items()})
    except OSError as err:
        raise TVMLiteError(f"{path}: cannot write: {err.strerror or err}") from None


def _time(module: Any, values: list[Any], repeat: int, name: str) -> None:
    """`repeat` timed calls (after one untimed): their median and spread."""
    r = module.time_evaluator(name, number=1, repeat=repeat)(*values)
    print(
        f"{name}: {repeat} runs, median {_fmt(r.median)}, min {_fmt(r.min)}, "
        f"max {_fmt(r.max)}, std {_fmt(r.std)}, mean {_fmt(r.mean)}"
    )


def _fmt(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.2f} us"
    if seconds < 1:
        return f"{seconds * 1e3:.3f} ms"
    return f"{seconds:.3f} s"

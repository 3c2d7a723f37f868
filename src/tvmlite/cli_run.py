"""`tvms run FILE|LIB`: call one function of a `.tvms` file (built on the fly,
through the compile cache) or of an exported library, on inputs from `.npy`
files or drawn at random from the signature, and print, save or time it.

Random inputs follow the declared shapes; a symbolic dim takes its value from
`--dim n=8`, else DEFAULT_DIM. Floats are standard normal, integers small,
booleans fair coins; `--seed` makes them reproducible.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import relax, tir

DEFAULT_DIM = 4
ELF_MAGIC = b"\x7fELF"


def is_library(path: str) -> bool:
    if path == "-":
        return False
    try:
        with open(path, "rb") as f:
            return f.read(4) == ELF_MAGIC
    except OSError:
        return False


def load_callable(args: argparse.Namespace) -> Any:
    """The function `args.entry` of the file or library."""
    import tvmlite
    from tvmlite.cli_build import pass_context, read_module, target_of

    if is_library(args.file):
        module = tvmlite.load_module(args.file)
    else:
        mod = read_module(args.file)
        with pass_context(args, sys.stderr):
            module = tvmlite.build(
                mod, target=target_of(args), pipeline=args.pipeline, cache=not args.no_cache
            )
    return module[args.entry]


def parse_pairs(items: list[str], what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise UsageError(f"{what} takes NAME=VALUE, got {item!r}")
        out[name] = value
    return out


class UsageError(Exception):
    """A malformed command line the parser could not see (exit code 2)."""


def run_command(args: argparse.Namespace) -> int:
    files = parse_pairs(args.input, "--input")
    dims = {name: _int(value, name) for name, value in parse_pairs(args.dim, "--dim").items()}
    fn = load_callable(args)
    params = _params(fn)
    unknown = sorted(set(files) - {name for name, _ in params})
    if unknown:
        names = ", ".join(name for name, _ in params)
        raise TVMLiteError(f"{args.entry} has no parameter {unknown[0]!r} (parameters: {names})")
    rng = np.random.default_rng(args.seed)
    values = []
    for name, sinfo in params:
        if name in files:
            values.append(_load(files[name]))
        elif args.random:
            values.append(draw(sinfo, name, dims, rng))
        else:
            hint = f"pass --input {name}=FILE.npy or --random"
            raise TVMLiteError(f"no value for parameter '{name}': {hint}")
    result = fn(*values)
    if hasattr(fn, "signature"):  # a prim function writes into its arguments: show those
        written = fn.signature.written
        outputs = {n: v for (n, _), v in zip(params, values, strict=True) if n in written}
    else:
        outputs = flatten_result(result, "result")
    if args.repeat:
        _time(fn, values, args.repeat, args.entry)
    if args.output:
        _save(Path(args.output), outputs)
    elif not args.repeat:
        for name, value in outputs.items():
            print(f"{name}: {_describe(value)}")
            print(np.array2string(np.asarray(value), threshold=200, edgeitems=3))
    return 0


def _params(fn: Any) -> list[tuple[str, Any]]:
    """(name, struct info or buffer) of each parameter of a graph or prim function."""
    if hasattr(fn, "signature"):
        return [(p.name, p.buffer if p.buffer is not None else p.var) for p in fn.signature.params]
    return [(p.name, p.struct_info) for p in fn.params]


def _int(value: str, name: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise UsageError(f"--dim {name}= takes an integer, got {value!r}") from None
    if number < 0:
        raise UsageError(f"--dim {name}= must not be negative")
    return number


def _load(path: str) -> Any:
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError) as err:
        raise TVMLiteError(f"{path}: cannot read an array: {err}") from None


def draw(sinfo: Any, name: str, dims: dict[str, int], rng: np.random.Generator) -> Any:
    """A random value that fits `sinfo` (struct info, a TIR buffer or scalar var)."""
    if isinstance(sinfo, relax.TupleStructInfo):
        return tuple(draw(f, f"{name}[{k}]", dims, rng) for k, f in enumerate(sinfo.fields))
    if isinstance(sinfo, relax.TensorStructInfo):
        if not isinstance(sinfo.shape, tuple) or sinfo.dtype == "void":
            raise TVMLiteError(f"cannot draw '{name}': its shape or dtype is not declared")
        return _array(tuple(_dim(d, name, dims) for d in sinfo.shape), sinfo.dtype, rng)
    if isinstance(sinfo, tir.Buffer):
        return _array(tuple(_dim(d, name, dims) for d in sinfo.shape), sinfo.dtype, rng)
    if isinstance(sinfo, relax.PrimStructInfo | tir.Var):
        value = _array((), sinfo.dtype, rng)
        return value.item()
    if isinstance(sinfo, relax.ShapeStructInfo) and sinfo.values is not None:
        return tuple(_dim(d, name, dims) for d in sinfo.values)
    raise TVMLiteError(f"cannot draw a random value for '{name}': pass --input {name}=FILE.npy")


def _dim(d: tir.PrimExpr, name: str, dims: dict[str, int]) -> int:
    if isinstance(d, tir.IntImm):
        return d.value
    if isinstance(d, tir.Var):
        return dims.get(d.name, DEFAULT_DIM)
    from tvmlite.runtime.args import evaluate

    env = {v: dims.get(v.name, DEFAULT_DIM) for v in _vars(d)}
    value = evaluate(d, env)
    if value is None:
        raise TVMLiteError(f"cannot draw '{name}': a dim depends on values unknown here")
    return value


def _vars(e: Any) -> list[tir.Var]:
    if isinstance(e, tir.Var):
        return [e]
    out: list[tir.Var] = []
    for attr in ("a", "b", "value"):
        if hasattr(e, attr):
            out += _vars(getattr(e, attr))
    return out


def _array(shape: tuple[int, ...], dtype: str, rng: np.random.Generator) -> np.ndarray:
    kind = np.dtype(dtype).kind
    if kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    if kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    low = 0 if kind == "u" else -10
    return rng.integers(low, 10, shape).astype(dtype)


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


def _time(fn: Any, values: list[Any], repeat: int, name: str) -> None:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn(*values)
        samples.append(time.perf_counter() - start)
    mean, best = sum(samples) / len(samples), min(samples)
    print(f"{name}: {repeat} runs, mean {_fmt(mean)}, min {_fmt(best)}")


def _fmt(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.2f} us"
    if seconds < 1:
        return f"{seconds * 1e3:.3f} ms"
    return f"{seconds:.3f} s"


def add_run_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE|LIB", help=".tvms file (- for stdin) or a built .so")
    p.add_argument("--entry", default="main", help="function to call (default: main)")
    p.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy")
    p.add_argument("--random", action="store_true", help="draw missing inputs at random")
    p.add_argument(
        "--dim", action="append", default=[], metavar="NAME=N",
        help=f"symbolic dim for --random (default {DEFAULT_DIM})",
    )  # fmt: skip
    p.add_argument("--seed", type=int, default=0, help="seed of --random")
    p.add_argument("--output", metavar="OUT.npz", help="save results instead of printing them")
    p.add_argument("--repeat", type=int, default=0, metavar="N", help="time N calls")

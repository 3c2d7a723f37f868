"""Where `tvms run` gets its argument values: `--input NAME=FILE` (`.npy`, or
`.npz` as `--output` writes it), `--input FILE.npz` (each array named by the
parameter it is for) and `--random` draws that follow the declared shapes, a
symbolic dim taking its value from `--dim n=8`, else DEFAULT_DIM.

Data inputs are standard normal floats, small integers, fair coins. Weights
(the parameters after TVM's `num_input`) are drawn so that a network of them
keeps its activations at unit scale, as trained weights do: floats of rank 2
or more are normal with standard deviation 1/sqrt(fan-in) (the product of the
dims after the first: a matmul's inner dim, a convolution's input channels
times its kernel), smaller ones (biases, normalization gains and statistics)
uniform in [0.5, 1.5), never negative, as a variance must not be. `--seed`
makes them reproducible. Arrays are made C-contiguous and native-endian (a
Fortran-order `.npy` is a valid input); an input too large for this machine is
refused with the parameter's name and its size, before anything is allocated.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from tvmlite.cli_args import DEFAULT_DIM, UsageError
from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import relax, tir


def parse_pairs(items: list[str], what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise UsageError(f"{what} takes NAME=VALUE, got {item!r}")
        out[name] = value
    return out


def parse_dims(items: list[str]) -> dict[str, int]:
    dims = {}
    for name, value in parse_pairs(items, "--dim").items():
        try:
            dims[name] = int(value)
        except ValueError:
            raise UsageError(f"--dim {name}= takes an integer, got {value!r}") from None
        if dims[name] < 0:
            raise UsageError(f"--dim {name}= must not be negative")
    return dims


def check_dims(dims: dict[str, int], params: list[tuple[str, Any]], entry: str) -> None:
    """Every `--dim` names a symbolic dim of the function's parameters."""
    known = sorted({v.name for _, sinfo in params for v in _symbolic(sinfo)})
    for name in dims:
        if name not in known:
            have = f"its symbolic dims: {', '.join(known)}" if known else "it has none"
            raise TVMLiteError(f"--dim {name}: {entry} has no symbolic dim {name!r} ({have})")


def load_input(name: str, spec: str) -> np.ndarray:
    """The array of `--input NAME=SPEC`: a `.npy` file, or an `.npz` file's one
    array, its array NAME, or its array KEY with `FILE.npz:KEY`."""
    path, key = spec, None
    head, sep, tail = spec.rpartition(":")
    if sep and head.endswith(".npz") and not os.path.exists(spec):
        path, key = head, tail
    try:
        loaded = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError) as err:
        reason = err.strerror if isinstance(err, OSError) and err.strerror else err
        raise TVMLiteError(f"--input {name}: {path}: cannot read an array: {reason}") from None
    if isinstance(loaded, np.lib.npyio.NpzFile):
        with loaded:
            keys = list(loaded.files)
            chosen = key if key is not None else (keys[0] if len(keys) == 1 else name)
            if chosen not in keys:
                raise TVMLiteError(
                    f"--input {name}: {path} has no array {chosen!r} (arrays: "
                    f"{', '.join(keys) or 'none'}); pick one with {name}={path}:KEY"
                )
            loaded = loaded[chosen]
    elif key is not None:
        raise TVMLiteError(f"--input {name}: {path} is not an .npz file")
    array = np.ascontiguousarray(loaded)
    if not array.dtype.isnative:
        array = array.astype(array.dtype.newbyteorder("="))
    return array


def split_inputs(items: list[str]) -> tuple[list[str], list[str]]:
    """The `--input` values: NAME=FILE ones, and `.npz` files of named arrays."""
    named = [item for item in items if "=" in item or not item.endswith(".npz")]
    return named, [item for item in items if item not in named]


def load_bundles(paths: list[str], params: list[str], entry: str) -> dict[str, np.ndarray]:
    """The arrays of `--input FILE.npz` files, by parameter name; an array that
    names no parameter is an error (a misspelt name would silently go unused)."""
    from tvmlite.array_file import load_arrays

    found: dict[str, np.ndarray] = {}
    for path in paths:
        arrays = load_arrays(path, "input file")
        stray = [name for name in arrays if name not in params]
        if stray:
            raise TVMLiteError(
                f"--input {path}: {_quoted(stray)} names no parameter of {entry} "
                f"(parameters: {', '.join(params)})"
            )
        found.update((name, np.ascontiguousarray(a)) for name, a in arrays.items())
    return found


def _quoted(names: list[str]) -> str:
    return ", ".join(repr(n) for n in names[:5]) + (" ..." if len(names) > 5 else "")


def draw(
    sinfo: Any, name: str, dims: dict[str, int], rng: np.random.Generator, weight: bool = False
) -> Any:
    """A random value that fits `sinfo` (struct info, a TIR buffer or scalar var);
    a `weight` is scaled as the module docstring says."""
    if isinstance(sinfo, relax.TupleStructInfo):
        return tuple(draw(f, f"{name}[{k}]", dims, rng, weight) for k, f in enumerate(sinfo.fields))
    if isinstance(sinfo, relax.TensorStructInfo):
        if not isinstance(sinfo.shape, tuple) or sinfo.dtype == "void":
            raise TVMLiteError(f"cannot draw '{name}': its shape or dtype is not declared")
        shape = tuple(_dim(d, name, dims) for d in sinfo.shape)
        return _array(name, shape, sinfo.dtype, rng, weight)
    if isinstance(sinfo, tir.Buffer):
        return _array(name, tuple(_dim(d, name, dims) for d in sinfo.shape), sinfo.dtype, rng)
    if isinstance(sinfo, relax.PrimStructInfo | tir.Var):
        return _array(name, (), sinfo.dtype, rng).item()
    if isinstance(sinfo, relax.ShapeStructInfo) and sinfo.values is not None:
        return tuple(_dim(d, name, dims) for d in sinfo.values)
    raise TVMLiteError(f"cannot draw a random value for '{name}': pass --input {name}=FILE.npy")


def _symbolic(sinfo: Any) -> list[tir.Var]:
    """The symbolic vars in the shapes of a parameter's struct info or buffer."""
    if isinstance(sinfo, relax.TupleStructInfo):
        return [v for f in sinfo.fields for v in _symbolic(f)]
    shape: Any = None
    if isinstance(sinfo, relax.TensorStructInfo | tir.Buffer):
        shape = sinfo.shape
    elif isinstance(sinfo, relax.ShapeStructInfo):
        shape = sinfo.values
    if not isinstance(shape, tuple):
        return []
    return [v for d in shape for v in _vars(d)]


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


def _array(
    name: str, shape: tuple[int, ...], dtype: str, rng: np.random.Generator, weight: bool = False
) -> np.ndarray:
    np_dtype = np.dtype(dtype)
    size = math.prod(shape) * np_dtype.itemsize
    memory = _physical_memory()
    if memory is not None and size > memory // 2:
        raise TVMLiteError(
            f"parameter '{name}' of shape {shape} and dtype {dtype} would take "
            f"{_bytes(size)}, more than half of this machine's memory ({_bytes(memory)}): "
            "choose smaller --dim values"
        )
    try:
        kind = np_dtype.kind
        if kind == "f" and weight and len(shape) >= 2:
            scale = 1 / math.sqrt(max(1, math.prod(shape[1:])))
            return (rng.standard_normal(shape) * scale).astype(dtype)
        if kind == "f" and weight:
            return rng.uniform(0.5, 1.5, shape).astype(dtype)
        if kind == "f":
            return rng.standard_normal(shape).astype(dtype)
        if kind == "b":
            return rng.integers(0, 2, shape).astype(bool)
        low = 0 if kind == "u" else -10
        return rng.integers(low, 10, shape).astype(dtype)
    except MemoryError:
        raise TVMLiteError(
            f"parameter '{name}' of shape {shape} and dtype {dtype}: not enough memory "
            f"for {_bytes(size)}"
        ) from None


def _physical_memory() -> int | None:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def _bytes(size: int) -> str:
    from tvmlite.lowering.cache.size import format_size

    return format_size(size)

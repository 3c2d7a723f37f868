"""BindParams: a function's parameters replaced by constants (TVM's pass of the
same name and meaning).

`BindParams("main", {"w": array, ...})(mod)` makes `main` take only the other
parameters; every use of `w` reads the constant instead, and a symbolic dim the
arrays fix (`w: R.Tensor((n, 4))` bound to a (3, 4) array: n = 3) becomes that
number everywhere in the function. Parameters are named by their names, or by
the `relax.Var` itself; `params` may also be the path of an `.npz` file of
arrays keyed by parameter names (`tvmlite.array_file`: mapped, not copied).

Every array is checked against the parameter's declared struct info first
(dtype, rank, each static dim, symbolic dims consistent across parameters), an
error located at the parameter's declaration naming it. The `num_input`
attribute (how many leading parameters are data, written by TVM's frontends) is
lowered by the number of those that were bound, so it still counts the
parameters the function takes at run time. `build(mod, params=...)` runs this
pass on "main" before anything else.

The arrays are held, not copied (they become the constants' data): they must
not be changed while the module is in use.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tvmlite.array_file import load_arrays
from tvmlite.diagnostics import TVMLiteError, VerifyError
from tvmlite.dsl import relax, tir
from tvmlite.dsl.analysis import substitute
from tvmlite.dsl.module import IRModule
from tvmlite.dsl.relax_mutator import ExprMutator
from tvmlite.lowering.transform import Pass
from tvmlite.runtime.args import evaluate

NUM_INPUT = "num_input"
ParamKey = str | relax.Var


@dataclass(frozen=True)
class BoundParams:
    """The arrays to bind, by key, as given. Its repr names each array by dtype,
    shape and digest (never its values), so a build's cache key tells any two
    sets of weights apart."""

    items: tuple[tuple[ParamKey, relax.Constant], ...]

    def __repr__(self) -> str:
        shown = ", ".join(
            f"{_key_name(k)}: {c.data.dtype}{list(c.data.shape)} {c.digest.hex()[:16]}"
            for k, c in self.items
        )
        return f"BoundParams({shown})"


@dataclass(frozen=True)
class BindParams(Pass):
    """Bind `params` (a mapping from parameter name or var to array, or an `.npz`
    file's path) to the parameters of the function `func_name`."""

    func_name: str
    params: Any
    name: str = field(default="BindParams", init=False)

    def __post_init__(self) -> None:
        if not isinstance(self.func_name, str):
            raise TVMLiteError(
                f"BindParams: func_name must be a function's name, got {self.func_name!r}"
            )
        if not isinstance(self.params, BoundParams):
            object.__setattr__(self, "params", bound_params(self.params, "BindParams"))

    def run(self, mod: IRModule) -> IRModule:
        func = mod.functions.get(self.func_name)
        if not isinstance(func, relax.Function):
            have = [k for k, f in mod.functions.items() if isinstance(f, relax.Function)]
            raise TVMLiteError(
                f"BindParams: the module has no graph function '{self.func_name}' "
                f"(it has: {', '.join(have) or 'none'})"
            )
        bound = bind_function(func, self.params, self.func_name)
        return mod.with_functions({**mod.functions, self.func_name: bound})


def bound_params(params: Any, who: str) -> BoundParams:
    """`params` as given to `who` (a mapping or an `.npz` path), each array checked
    to be a tensor's."""
    if isinstance(params, str | os.PathLike):
        params = load_arrays(params, "parameter file")
    if not isinstance(params, Mapping):
        raise TVMLiteError(
            f"{who}: params must map parameter names to arrays, or be the path of an .npz "
            f"file of them, not {type(params).__name__}"
        )
    items = []
    for key, value in params.items():
        if not isinstance(key, str | relax.Var):
            raise TVMLiteError(f"{who}: a parameter is named by a string or a var, not {key!r}")
        items.append((key, _constant(value, f"{who}: parameter '{_key_name(key)}'")))
    return BoundParams(tuple(items))


def _constant(value: Any, where: str) -> relax.Constant:
    if isinstance(value, relax.Constant):
        return value
    try:
        array = value if isinstance(value, np.ndarray) else np.asarray(value)
    except (TypeError, ValueError, RuntimeError) as err:
        raise TVMLiteError(f"{where}: not an array ({err})") from None
    if array.dtype.hasobject or array.dtype.kind not in "biuf":
        raise TVMLiteError(f"{where}: an array of dtype {array.dtype} is no tensor")
    return relax.Constant(array)


def _key_name(key: ParamKey) -> str:
    return key if isinstance(key, str) else key.name


def bind_function(func: relax.Function, params: BoundParams, func_name: str) -> relax.Function:
    """`func` with `params` bound (see the module docstring)."""
    by_name: dict[str, list[relax.Var]] = {}
    for p in func.params:
        by_name.setdefault(p.name, []).append(p)
    chosen: dict[relax.Var, relax.Constant] = {}
    for key, const in params.items:
        var = _param_of(func, func_name, key, by_name)
        if var in chosen:
            raise _error(func_name, var, "is bound twice")
        chosen[var] = const
    dims: dict[tir.Var, int] = {}
    for var, const in chosen.items():
        _match(func_name, var, const.data, dims)
    for var, const in chosen.items():  # compound dims, once every var is known
        _check_compound(func_name, var, const.data, dims)
    binder = _Binder({v: tir.IntImm(v.dtype, n) for v, n in dims.items()}, chosen)
    new = binder.visit_expr(func)
    assert isinstance(new, relax.Function)
    kept = tuple(p for old, p in zip(func.params, new.params, strict=True) if old not in chosen)
    return dataclasses.replace(new, params=kept, attrs=_num_input(func, chosen))


def _param_of(
    func: relax.Function, func_name: str, key: ParamKey, by_name: dict[str, list[relax.Var]]
) -> relax.Var:
    names = ", ".join(p.name for p in func.params) or "none"
    if isinstance(key, relax.Var):
        if key not in func.params:
            raise TVMLiteError(
                f"BindParams: '{func_name}' has no parameter that is the var {key.name!r} "
                f"(its parameters: {names})"
            )
        return key
    found = by_name.get(key, [])
    if not found:
        raise TVMLiteError(
            f"BindParams: '{func_name}' has no parameter named {key!r} (its parameters: {names})"
        )
    if len(found) > 1:
        raise _error(func_name, found[1], "shares its name with another: bind it by its var")
    return found[0]


def _match(func_name: str, var: relax.Var, data: np.ndarray, dims: dict[tir.Var, int]) -> None:
    """The array against the parameter's struct info; bare symbolic dims learn
    their values (the same in every parameter)."""
    si = var.struct_info
    if not isinstance(si, relax.TensorStructInfo) or isinstance(si, relax.DTensorStructInfo):
        raise _error(func_name, var, "is not a tensor: only tensor parameters are bound")
    got = f"an array of dtype {data.dtype} and shape {tuple(data.shape)}"
    if si.dtype != "void" and _numpy_dtype(si.dtype) != data.dtype:
        raise _error(func_name, var, f"is declared {si.dtype}, bound to {got}")
    rank = len(si.shape) if isinstance(si.shape, tuple) else si.ndim
    if rank >= 0 and rank != data.ndim:
        raise _error(func_name, var, f"is declared of rank {rank}, bound to {got}")
    if not isinstance(si.shape, tuple):
        return
    for axis, (dim, n) in enumerate(zip(si.shape, data.shape, strict=True)):
        if isinstance(dim, tir.IntImm) and dim.value != n:
            raise _error(func_name, var, f"has {dim.value} at axis {axis}, bound to {got}")
        if isinstance(dim, tir.Var):
            known = dims.setdefault(dim, n)
            if known != n:
                raise _error(
                    func_name,
                    var,
                    f"has {dim.name} = {n} at axis {axis} ({got}), "
                    f"but another bound parameter has {dim.name} = {known}",
                )


def _check_compound(
    func_name: str, var: relax.Var, data: np.ndarray, dims: dict[tir.Var, int]
) -> None:
    si = var.struct_info
    if not isinstance(si, relax.TensorStructInfo) or not isinstance(si.shape, tuple):
        return
    for axis, (dim, n) in enumerate(zip(si.shape, data.shape, strict=True)):
        if isinstance(dim, tir.IntImm | tir.Var):
            continue
        value = evaluate(dim, dims)
        if value is not None and value != n:
            raise _error(
                func_name, var, f"needs {value} at axis {axis}, bound to shape {data.shape}"
            )


def _numpy_dtype(dtype: str) -> np.dtype | None:
    try:
        return np.dtype(dtype)
    except TypeError:  # a dtype NumPy lacks (bfloat16, float8_e4m3...): no array is one
        return None


def _num_input(
    func: relax.Function, chosen: Mapping[relax.Var, Any]
) -> tuple[tuple[str, Any], ...]:
    count = func.attr(NUM_INPUT)
    if not isinstance(count, int) or isinstance(count, bool):
        return func.attrs
    remaining = sum(1 for p in func.params[:count] if p not in chosen)
    return tuple((k, remaining if k == NUM_INPUT else v) for k, v in func.attrs)


def _error(func_name: str, var: relax.Var, what: str) -> TVMLiteError:
    message = f"BindParams: parameter '{var.name}' of '{func_name}' {what}"
    if var.span is None:
        return TVMLiteError(message)
    return VerifyError(message, var.span, var.span.source.filename)


class _Binder(ExprMutator):
    """Uses of the bound parameters read their constants (`var_remap`); the
    symbolic dims the arrays fixed are their numbers everywhere."""

    def __init__(
        self, values: Mapping[tir.Var, tir.PrimExpr], bound: Mapping[relax.Var, relax.Constant]
    ) -> None:
        super().__init__()
        self.values = values
        self.var_remap.update(bound)

    def visit_var_def(self, var: relax.Var) -> relax.Var:
        if var in self.var_remap:  # a bound parameter: it stays mapped to its constant
            return var
        return super().visit_var_def(var)

    def visit_prim_expr(self, e: tir.PrimExpr) -> tir.PrimExpr:
        if not self.values:
            return e
        from tvmlite.dsl.arith import simplify

        new = substitute(e, self.values)
        return e if new is e else simplify(new)

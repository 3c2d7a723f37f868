"""Weights of an imported module: binding parameters as constants, and detaching the
`params` attribute `keep_params_as_input=True` leaves on a function (TVM's
`relax.frontend.detach_params`). Torch-free: a module and its arrays only."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import relax
from tvmlite.dsl.module import IRModule
from tvmlite.dsl.relax_mutator import ExprMutator


def bind_params(mod: IRModule, func_name: str, values: Mapping[str, np.ndarray]) -> IRModule:
    """`func_name` with each parameter named in `values` replaced by a constant holding
    its array, and dropped from the signature (TVM's BindParams by name)."""
    func = mod[func_name]
    if not isinstance(func, relax.Function):
        raise TVMLiteError(f"bind_params: {func_name} is not a Relax function")
    binder = ExprMutator()
    kept = []
    for param in func.params:
        if param.name in values:
            binder.var_remap[param] = relax.Constant(np.asarray(values[param.name]))
        else:
            kept.append(param)
    if not binder.var_remap:
        return mod
    body = binder.visit_expr(func.body)
    new = dataclasses.replace(func, params=tuple(kept), body=body)
    return mod.with_functions({**mod.functions, func_name: new})


def detach_params(mod: IRModule) -> tuple[IRModule, dict[str, list[np.ndarray]]]:
    """The module without the `params` attribute of its functions, and those arrays by
    function name (what `from_exported_program(..., keep_params_as_input=True)` puts
    there: the weights, in the order of the parameters after the `num_input` inputs)."""
    if not isinstance(mod, IRModule):
        raise TVMLiteError(f"detach_params: mod must be an IRModule, got {type(mod).__name__}")
    detached: dict[str, list[np.ndarray]] = {}
    functions: dict[str, Any] = {}
    for name, func in mod.functions.items():
        params = func.attr("params") if isinstance(func, relax.Function) else None
        if params is None:
            functions[name] = func
            continue
        detached[name] = list(params)
        attrs = tuple((k, v) for k, v in func.attrs if k != "params")
        functions[name] = dataclasses.replace(func, attrs=attrs)
    return mod.with_functions(functions), detached

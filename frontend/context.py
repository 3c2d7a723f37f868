"""What an ATen converter works with: the builder, the values of the graph's nodes, and
the small helpers TVM's translator gives its converters (argument lookup, shapes,
dtypes, constants made as `relax.const` makes them).

Torch is imported here: this module and everything that imports it is loaded only
when a program is imported (`tvmlite.frontend.from_exported_program`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import fx

from tvmlite.dsl import relax, tir
from tvmlite.frontend.builder import GraphBuilder
from tvmlite.frontend.dtypes import numpy_dtype, torch_dtype_name
from tvmlite.frontend.errors import FrontendError

# How TVM's `relax.const` types a bare Python number when no dtype is given.
_DEFAULT_CONST = {np.dtype("int64"): "int32", np.dtype("float64"): "float32"}


class Converting:
    """The state of one import: `bb` builds the function, `env` maps each graph node
    to what it computed (a Relax expression, a TIR scalar for a symbolic size, a
    Python value, or a list of these)."""

    def __init__(self, bb: GraphBuilder) -> None:
        self.bb = bb
        self.env: dict[fx.Node, Any] = {}
        # branch graphs of torch.cond already imported: id(graph module) -> function name
        self.branches: dict[int, str] = {}
        # the TIR value of each bound size comparison (its var's struct info has none)
        self.conditions: dict[relax.Var, tir.PrimExpr] = {}

    # ------------------------------------------------------------ arguments

    def retrieve(self, value: Any) -> Any:
        """`value` with every graph node replaced by what it computed."""
        if isinstance(value, fx.Node):
            return self.env[value]
        if isinstance(value, tuple):
            return tuple(self.retrieve(v) for v in value)
        if isinstance(value, list):
            return [self.retrieve(v) for v in value]
        if isinstance(value, dict):
            return {self.retrieve(k): self.retrieve(v) for k, v in value.items()}
        return value

    def args(self, node: fx.Node) -> Any:
        return self.retrieve(node.args)

    @staticmethod
    def arg(node: fx.Node, index: int, key: str, default: Any = None) -> Any:
        """The raw argument at `index`, else the keyword `key`, else `default` (the
        lookup TVM's converters spell out for every argument)."""
        if len(node.args) > index:
            return node.args[index]
        return node.kwargs.get(key, default)

    def value(self, node: fx.Node, index: int, key: str, default: Any = None) -> Any:
        """Like `arg`, with graph nodes replaced by what they computed."""
        return self.retrieve(self.arg(node, index, key, default))

    @staticmethod
    def error(node: fx.Node, message: str) -> FrontendError:
        """An error about `node`, naming it and where the model computed it."""
        trace = (node.meta.get("stack_trace") or "").strip().splitlines()
        where = f"\n  from: {trace[-2].strip()}" if len(trace) >= 2 else ""
        return FrontendError(f"{node.target}: {message} (node {node.name}){where}")

    @staticmethod
    def torch_dtype(node: fx.Node) -> str | None:
        """The dtype PyTorch gives the node's (first) result, when export recorded it."""
        val = node.meta.get("val")
        if isinstance(val, (tuple, list)):
            val = val[0] if val else None
        dtype = getattr(val, "dtype", None)
        return torch_dtype_name(dtype) if dtype is not None else None

    # ------------------------------------------------------------ building

    def emit(self, expr: relax.Expr, name: str | None = None) -> relax.Var:
        return self.bb.emit(expr, name)

    def call(self, op: str, *args: Any, **kwargs: Any) -> relax.Call:
        return self.bb.call(op, *args, **kwargs)

    def emit_call(self, op: str, *args: Any, **kwargs: Any) -> relax.Var:
        return self.bb.emit(self.bb.call(op, *args, **kwargs))

    # ------------------------------------------------------------ struct info

    def sinfo(self, expr: relax.Expr) -> relax.StructInfo:
        return self.bb.sinfo(expr)

    def tensor(self, expr: Any) -> relax.TensorStructInfo:
        sinfo = self.bb.sinfo(expr) if isinstance(expr, relax.Expr) else None
        if not isinstance(sinfo, relax.TensorStructInfo):
            raise FrontendError(f"expected a tensor, got {type(expr).__name__}")
        return sinfo

    def dtype(self, expr: Any) -> str:
        return self.tensor(expr).dtype

    def ndim(self, expr: Any) -> int:
        return self.tensor(expr).ndim

    def shape(self, expr: Any) -> tuple[tir.PrimExpr, ...] | None:
        shape = self.tensor(expr).shape
        return shape if isinstance(shape, tuple) else None

    def static_dim(self, expr: Any, axis: int) -> int:
        """Dim `axis` of a tensor, which the conversion needs as a number."""
        shape = self.shape(expr)
        dim = shape[axis] if shape is not None else None
        if not isinstance(dim, tir.IntImm):
            raise FrontendError(f"dim {axis} of the input must be static for this operator")
        return dim.value

    def static_shape(self, expr: Any) -> list[int]:
        """The shape as Python ints; an error naming the symbolic dim otherwise."""
        out = []
        for dim in self.shape(expr) or ():
            if not isinstance(dim, tir.IntImm):
                raise FrontendError("this conversion needs a static shape")
            out.append(dim.value)
        return out

    # ------------------------------------------------------------ constants

    @staticmethod
    def const(value: Any, dtype: str | None = None) -> relax.Constant:
        """`relax.const(value, dtype)`: a bare int is int32 and a bare float float32
        unless `dtype` says otherwise; arrays keep their dtype."""
        if isinstance(value, torch.Tensor):
            value = value.detach().cpu().numpy()
        if isinstance(value, (bool, int, float, list)):
            data = np.array(value, dtype=numpy_dtype(dtype) if dtype else None)
        else:
            data = np.asarray(value)
        if not dtype:
            dtype = _DEFAULT_CONST.get(data.dtype)
        if dtype is not None:
            data = data.astype(numpy_dtype(dtype))
        return relax.Constant(data)


def convert_dtype(value: Any) -> str:
    """A torch dtype (or its name) as a tvmlite dtype string."""
    return torch_dtype_name(value)

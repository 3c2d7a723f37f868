"""`torch.export.ExportedProgram` -> IRModule, as TVM 0.27's `from_exported_program`.

The program's inputs become `main`'s parameters (user inputs first, then parameters,
buffers and constant tensors, in the graph signature's order), symbolic dims become
TIR vars named after torch's symbols with their ranges in the `tir_var_lower_bound`/
`tir_var_upper_bound` attributes, every node is converted in graph order by the
converter registered for its ATen operator, and the user outputs are returned as a
tuple. Buffers and constant tensors (and parameters, unless `keep_params_as_input`)
are then bound as constants, which carry their values.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

import torch
from torch import fx
from torch.export.graph_signature import InputKind, OutputKind

from tvmlite.dsl import relax, tir
from tvmlite.dsl.module import TVM027, IRModule
from tvmlite.frontend import aten  # noqa: F401  (registers the converters)
from tvmlite.frontend.builder import GraphBuilder
from tvmlite.frontend.context import Converting, convert_dtype
from tvmlite.frontend.errors import FrontendError, UnsupportedOperatorsError
from tvmlite.frontend.params import bind_params
from tvmlite.frontend.registry import CONVERTERS
from tvmlite.frontend.symbols import dim_of, from_sympy


def from_exported_program(
    exported_program: torch.export.ExportedProgram,
    *,
    keep_params_as_input: bool = False,
    unwrap_unit_return_tuple: bool = False,
    no_bind_return_tuple: bool = False,
    run_ep_decomposition: bool = True,
) -> IRModule:
    if not isinstance(exported_program, torch.export.ExportedProgram):
        raise FrontendError(
            "from_exported_program: exported_program must be a torch.export.ExportedProgram, "
            f"got {type(exported_program).__name__}"
        )
    ep = exported_program
    if run_ep_decomposition and not _has_sparse_tensors(ep):
        ep = ep.run_decompositions()
    check_supported(ep.graph_module)
    program = _Program(ep)
    functions = program.translate(
        keep_params_as_input, unwrap_unit_return_tuple, no_bind_return_tuple
    )
    mod = IRModule(functions, dialect=TVM027)
    bound = OrderedDict(ep.named_buffers())
    bound.update(ep.constants)
    if not keep_params_as_input:
        bound.update(ep.named_parameters())
    by_target = {s.target: s.arg.name for s in ep.graph_signature.input_specs}
    values = {
        by_target[name]: _dense(t)
        for name, t in bound.items()
        if name in by_target and isinstance(t, torch.Tensor)
    }
    mod = bind_params(mod, "main", values)
    if keep_params_as_input:
        params = [_dense(p) for _, p in ep.named_parameters()]
        main = mod["main"]
        attrs = (*main.attrs, ("params", params))
        mod = mod.with_functions({"main": dataclasses.replace(main, attrs=attrs)})
    return mod


def check_supported(graph_module: fx.GraphModule) -> None:
    """Raise naming every operator of the program (branches of `cond` included) that
    has no converter, each with the places the model called it."""
    missing: dict[str, list[str]] = {}
    for node in _call_nodes(graph_module):
        name = node.target.__name__
        if name in CONVERTERS:
            continue
        places = missing.setdefault(name, [])
        place = _where(node)
        if place not in places:
            places.append(place)
    if missing:
        raise UnsupportedOperatorsError(missing)


def _call_nodes(graph_module: fx.GraphModule) -> Iterator[fx.Node]:
    for module in graph_module.modules():
        if isinstance(module, fx.GraphModule):
            yield from (node for node in module.graph.nodes if node.op == "call_function")


def _where(node: fx.Node) -> str:
    """The innermost frame of the node's stack trace (the model's own line), else
    the node's name."""
    trace = (node.meta.get("stack_trace") or "").strip()
    if not trace:
        return f"(node {node.name}: torch.export kept no stack trace)"
    lines = trace.splitlines()
    frames = [i for i, line in enumerate(lines) if line.lstrip().startswith("File ")]
    return "\n".join(line.strip() for line in lines[frames[-1] :]) if frames else trace


class _Program:
    """Translation of one exported program's graph into `main`."""

    def __init__(self, ep: torch.export.ExportedProgram) -> None:
        self.ep = ep
        self.symbols: dict[str, tir.Var] = {}
        self.ranges = self._ranges()
        self.user_inputs: dict[str, relax.Var] = {}
        self.other_inputs: dict[str, relax.Var] = {}
        self._inputs()

    def _ranges(self) -> dict[str, tuple[int, int | None]]:
        ranges: dict[str, tuple[int, int | None]] = {}
        for symbol, value_range in self.ep.range_constraints.items():
            try:
                lower = int(value_range.lower)
                upper_f = float(value_range.upper)
                upper = None if math.isinf(upper_f) else int(value_range.upper)
                name, derived = from_sympy(symbol, self.symbols)
            except (OverflowError, AttributeError, TypeError):
                continue
            if derived is None:
                ranges[name] = (lower, upper)
        return ranges

    def _inputs(self) -> None:
        ep = self.ep
        buffers = dict(ep.named_buffers())
        for spec in ep.graph_signature.input_specs:
            name = spec.arg.name
            value: Any = None
            if spec.kind is InputKind.CONSTANT_TENSOR:
                value = ep.constants[spec.target]
            elif spec.kind is InputKind.USER_INPUT:
                node = next(
                    (n for n in ep.graph.nodes if n.op == "placeholder" and n.name == name), None
                )
                meta = node.meta.get("tensor_meta", node.meta.get("val")) if node else None
                value = meta if hasattr(meta, "shape") else None
            elif spec.kind is InputKind.BUFFER:
                value = buffers[spec.target]
            elif spec.kind is InputKind.PARAMETER:
                value = ep.state_dict[spec.target]
            else:
                raise FrontendError(f"input {name}: unsupported input kind {spec.kind.name}")
            if value is None:
                raise FrontendError(
                    f"input {name}: not a tensor (the importer takes tensor inputs only)"
                )
            shape = tuple(dim_of(s, self.symbols) for s in value.shape)
            sinfo = relax.TensorStructInfo(shape, convert_dtype(value.dtype), len(shape))
            var = relax.Var(name, sinfo)
            if spec.kind is InputKind.USER_INPUT:
                self.user_inputs[name] = var
            else:
                self.other_inputs[name] = var

    def translate(
        self, keep_params: bool, unwrap_unit: bool, no_bind_tuple: bool
    ) -> dict[str, relax.Function]:
        """`main` and the functions it calls, in the order TVM prints them (by name)."""
        ep = self.ep
        attrs: dict[str, Any] = {"num_input": len(self.user_inputs)} if keep_params else {}
        if self.ranges:
            attrs["tir_var_lower_bound"] = {k: lo for k, (lo, _) in self.ranges.items()}
            upper = {k: hi for k, (_, hi) in self.ranges.items() if hi is not None}
            if upper:
                attrs["tir_var_upper_bound"] = upper
        inputs = {**self.user_inputs, **self.other_inputs}
        pure = not has_assert(ep.graph_module)
        dataflow = pure and not has_cond(ep.graph)
        bb = GraphBuilder()
        conv = Converting(bb)
        with _maybe_dataflow(bb, dataflow):
            outputs = translate_graph(conv, ep.graph_module, inputs)
            specs = ep.graph_signature.output_specs
            if len(specs) == len(outputs):
                kept = tuple(
                    out
                    for out, spec in zip(outputs, specs, strict=True)
                    if spec.kind in (OutputKind.USER_OUTPUT, OutputKind.LOSS_OUTPUT)
                )
                outputs = kept or outputs
            result: Any
            if unwrap_unit and len(outputs) == 1:
                result = outputs[0]
                if dataflow:
                    result = bb.emit_output(result)
            elif dataflow and no_bind_tuple:
                result = relax.Tuple(tuple(bb.emit_output(o) for o in outputs))
            elif dataflow:
                result = bb.emit_output(relax.Tuple(outputs))
            else:
                result = relax.Tuple(outputs)
        main = bb.finish("main", list(inputs.values()), result, attrs, pure)
        functions = {**bb.functions, "main": main}
        return {name: functions[name] for name in sorted(functions)}


@contextlib.contextmanager
def _maybe_dataflow(bb: GraphBuilder, dataflow: bool) -> Iterator[None]:
    if dataflow:
        bb.begin_dataflow()
    yield
    if dataflow:
        bb.end_dataflow()


def translate_graph(
    conv: Converting, graph_module: fx.GraphModule, inputs: dict[str, relax.Expr]
) -> tuple[relax.Expr, ...]:
    """Convert every node of `graph_module` into `conv.env`; the flattened outputs."""
    for node in graph_module.graph.nodes:
        if node.op == "placeholder":
            if node.name in inputs:
                conv.env[node] = inputs[node.name]
        elif node.op == "get_attr":
            conv.env[node] = getattr(graph_module, node.target)
        elif node.op == "call_function":
            conv.env[node] = CONVERTERS[node.target.__name__](conv, node)
        elif node.op == "output":
            return flatten_outputs(conv.retrieve(node.args[0]), conv)
        else:
            raise FrontendError(f"node {node.name}: unsupported graph node kind {node.op}")
    raise FrontendError("the exported graph has no output node")


def flatten_outputs(value: Any, conv: Converting) -> tuple[relax.Expr, ...]:
    """The graph's outputs as one flat tuple (nested tuples and lists flattened, None
    kept as a null value, as TVM does)."""
    flat: list[relax.Expr] = []

    def visit(v: Any) -> None:
        if isinstance(v, relax.Expr):
            flat.append(v)
        elif isinstance(v, (list, tuple)):
            for item in v:
                visit(item)
        elif v is None:
            flat.append(conv.call("null_value"))
        else:
            raise FrontendError(
                f"the exported graph returns a {type(v).__name__}; the importer returns "
                "tensors only"
            )

    visit(value)
    if not flat:
        raise FrontendError("the exported graph returns nothing")
    return tuple(flat)


def has_assert(graph_module: fx.GraphModule) -> bool:
    targets = (torch.ops.aten._assert_async.default, torch.ops.aten._assert_async.msg)
    return any(node.target in targets for node in _call_nodes(graph_module))


def has_cond(graph: fx.Graph) -> bool:
    return any(
        node.op == "call_function" and node.target is torch.ops.higher_order.cond
        for node in graph.nodes
    )


def _has_sparse_tensors(ep: torch.export.ExportedProgram) -> bool:
    tensors = [
        *(t for _, t in ep.named_buffers()),
        *(t for _, t in ep.named_parameters()),
        *ep.constants.values(),
    ]
    return any(isinstance(t, torch.Tensor) and t.layout != torch.strided for t in tensors)


def _dense(tensor: torch.Tensor) -> Any:
    """A parameter's values as a NumPy array (sparse tensors made dense)."""
    if tensor.layout != torch.strided:
        tensor = tensor.to_dense()
    return tensor.detach().cpu().contiguous().numpy()

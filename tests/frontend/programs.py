"""Turning cases into exported programs: one module per batch of cases."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from cases import Case, flat_outputs


class Batch(torch.nn.Module):
    """Computes every case on its own inputs; the outputs of all cases, flattened."""

    def __init__(self, cases: Sequence[Case]) -> None:
        super().__init__()
        self.cases = list(cases)
        self.parts = torch.nn.ModuleList(
            c.fn if isinstance(c.fn, torch.nn.Module) else torch.nn.Identity() for c in cases
        )
        self.arity = [len(c.inputs) for c in cases]

    def forward(self, *inputs: torch.Tensor) -> tuple[torch.Tensor, ...]:
        outs: list[torch.Tensor] = []
        at = 0
        for case, part, n in zip(self.cases, self.parts, self.arity, strict=True):
            args = inputs[at : at + n]
            at += n
            fn = part if isinstance(case.fn, torch.nn.Module) else case.fn
            outs.extend(flat_outputs(fn(*args)))
        return tuple(outs)


def case_inputs(cases: Sequence[Case]) -> list[torch.Tensor]:
    return [t for i, c in enumerate(cases) for t in c.make_inputs(i)]


def dynamic_shapes(cases: Sequence[Case]) -> list[Any] | None:
    specs: list[Any] = []
    found = False
    for k, case in enumerate(cases):
        for i in range(len(case.inputs)):
            if i in case.dynamic:
                found = True
                specs.append({case.dynamic[i]: torch.export.Dim(f"d{k}_{i}", min=4, max=64)})
            else:
                specs.append(None)
    return (tuple(specs),) if found else None  # forward(*inputs): one argument


class StandIn:
    """A graph node target named as an ATen overload torch.export does not write."""

    def __init__(self, name: str) -> None:
        self.__name__ = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"{self.__name__} is a stand-in; it does not run")


def _overload(name: str) -> Any:
    base, _, overload = name.partition(".")
    if not overload:  # a Python operator on sizes (`ne`)
        return StandIn(name)
    packet = getattr(torch.ops.aten, base, None)
    target = getattr(packet, overload, None) if packet is not None else None
    return target if target is not None else StandIn(name)


def export(cases: Sequence[Case], decompose: bool) -> tuple[Batch, list[torch.Tensor], Any]:
    module = Batch(cases).eval()
    inputs = case_inputs(cases)
    ep = torch.export.export(module, tuple(inputs), dynamic_shapes=dynamic_shapes(cases))
    if decompose:
        ep = ep.run_decompositions()
    for case in cases:
        if case.retarget is not None:
            if len(cases) != 1:
                raise ValueError(f"{case.id}: a retargeted case is exported alone")
            for node in ep.graph.nodes:
                names = case.retarget.split("|")
                if node.op == "call_function" and node.target.__name__ in names:
                    node.target = _overload(case.op)
    return module, inputs, ep


def op_names(ep: Any) -> set[str]:
    names = set()
    for mod in ep.graph_module.modules():
        if isinstance(mod, torch.fx.GraphModule):
            for node in mod.graph.nodes:
                if node.op == "call_function":
                    names.add(node.target.__name__)
    return names

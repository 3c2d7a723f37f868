"""One-op PyTorch programs for the importer's operator tests.

A `Case` is a function of tensors that makes torch.export write one ATen operator
(`op`, the converter's key), with the inputs it runs on. Cases run in batches: one
module computes every case of a batch on its own inputs, so a batch is exported,
imported and built once (building costs ~0.1-0.5 s a module; a module per case would
take minutes) while each case is still its own test, checked against PyTorch."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

_GEN_SEED = 1234


@dataclass(frozen=True)
class Input:
    """A tensor input: shape, dtype, and the range of its values."""

    shape: tuple[int, ...]
    dtype: torch.dtype = torch.float32
    low: float = -2.0
    high: float = 2.0

    def make(self, gen: torch.Generator) -> torch.Tensor:
        if self.dtype == torch.bool:
            return torch.rand(self.shape, generator=gen) > 0.5
        if self.dtype.is_floating_point:
            r = torch.rand(self.shape, generator=gen, dtype=torch.float64)
            return (self.low + r * (self.high - self.low)).to(self.dtype)
        return torch.randint(int(self.low), int(self.high), self.shape, generator=gen).to(
            self.dtype
        )


@dataclass(frozen=True)
class Fixed:
    """A tensor input with given values (sorted boundaries, valid indices)."""

    value: torch.Tensor

    def make(self, gen: torch.Generator) -> torch.Tensor:
        return self.value.clone()


class Seeded(torch.nn.Module):
    """A torch module made with a fixed seed (its weights are the same every run)."""

    def __init__(self, cls: type, *args: Any, **kwargs: Any) -> None:
        super().__init__()
        state = torch.random.get_rng_state()
        torch.manual_seed(_GEN_SEED)
        self.inner = cls(*args, **kwargs)
        torch.random.set_rng_state(state)

    def forward(self, *args: Any) -> Any:
        if isinstance(self.inner, torch.nn.RNNBase) and len(args) > 1:
            state = tuple(args[1:]) if isinstance(self.inner, torch.nn.LSTM) else args[1]
            return self.inner(args[0], state)
        return self.inner(*args)


def f32(*shape: int, low: float = -2.0, high: float = 2.0) -> Input:
    return Input(shape, torch.float32, low, high)


def f64(*shape: int, low: float = -2.0, high: float = 2.0) -> Input:
    return Input(shape, torch.float64, low, high)


def f16(*shape: int, low: float = -2.0, high: float = 2.0) -> Input:
    return Input(shape, torch.float16, low, high)


def i64(*shape: int, low: int = -5, high: int = 6) -> Input:
    return Input(shape, torch.int64, low, high)


def i32(*shape: int, low: int = -5, high: int = 6) -> Input:
    return Input(shape, torch.int32, low, high)


def u8(*shape: int, low: int = 0, high: int = 10) -> Input:
    return Input(shape, torch.uint8, low, high)


def boolean(*shape: int) -> Input:
    return Input(shape, torch.bool)


def pos(*shape: int) -> Input:
    """Positive floats (log, sqrt, pow bases)."""
    return Input(shape, torch.float32, 0.1, 3.0)


def unit(*shape: int) -> Input:
    """Floats in (-1, 1) (asin, acos, atanh)."""
    return Input(shape, torch.float32, -0.9, 0.9)


@dataclass(frozen=True)
class Case:
    op: str
    fn: Callable[..., Any]
    inputs: Sequence[Input | Fixed]
    variant: str = ""
    decompose: bool = False
    # how outputs are compared: "close", "exact", or "shape" (random/uninitialized values)
    check: str = "close"
    rtol: float = 1e-4
    atol: float = 1e-5
    dynamic: dict[int, int] = field(default_factory=dict)  # input index -> symbolic dim
    # an operator torch.export does not write: the program's `retarget` node is made
    # this case's `op` (`a|b`: whichever of them the export wrote), and `reference`
    # computes what it should give
    retarget: str | None = None
    reference: Callable[..., Any] | None = None

    @property
    def id(self) -> str:
        return f"{self.op}[{self.variant}]" if self.variant else self.op

    def make_inputs(self, seed: int) -> list[torch.Tensor]:
        gen = torch.Generator().manual_seed(_GEN_SEED + seed)
        return [spec.make(gen) for spec in self.inputs]


def flat_outputs(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in flat_outputs(v)]
    raise TypeError(f"a case returned {type(value).__name__}")

"""Operator definitions and the one registry dict they live in.

An `OpDef` says everything the parser and printer need about an `R.*` operator
without knowing its semantics: the Relax arguments in stored order, the
attribute schema in TVM's declaration order (which is also its print order),
TVM's fusion pattern, and the struct-info inference. Theme modules fill the
registry at import time through `register`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import IntEnum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tvmlite.dsl import relax
    from tvmlite.dsl.ops.context import InferCtx


class OpPatternKind(IntEnum):
    """TVM's `OpPatternKind`, the one vocabulary of fusion patterns: an operator's
    (`OpDef.pattern`), a kernel's `op_pattern` attribute (the number) and its
    `op_kind` attribute (the spelling). The order matters: a bigger kind fuses less."""

    kElemWise = 0
    kBroadcast = 1
    kInjective = 2
    kCommReduce = 3
    kOutEWiseFusable = 4
    kTuple = 7
    kOpaque = 8

    @property
    def spelling(self) -> str:
        """The `op_kind` attribute's text ("elementwise", "out_ewise_fusible", ...)."""
        return _SPELLINGS[self]


_SPELLINGS = {
    OpPatternKind.kElemWise: "elementwise",
    OpPatternKind.kBroadcast: "broadcast",
    OpPatternKind.kInjective: "injective",
    OpPatternKind.kCommReduce: "comm_reduce",
    OpPatternKind.kOutEWiseFusable: "out_ewise_fusible",
    OpPatternKind.kTuple: "tuple",
    OpPatternKind.kOpaque: "opaque",
}


class _Required:
    """Marker default of an attribute or argument that must be given."""

    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()


@dataclass(frozen=True, slots=True)
class ArgDef:
    """A Relax argument. `kind` says how a Python literal is turned into a Relax
    expression (see `convert.py`); `variadic` takes all remaining positionals;
    an optional argument with default None is left out of the call."""

    name: str
    kind: str = "tensor"
    default: Any = REQUIRED
    variadic: bool = False

    @property
    def optional(self) -> bool:
        return self.default is not REQUIRED


@dataclass(frozen=True, slots=True)
class AttrDef:
    """An attribute: `kind` says how to validate and normalize a literal
    (`int`, `int?`, `float`, `bool`, `str`, `str?`, `dtype`, `dtype?`, `ints`,
    `ints?`, `ints/N`, `pad/N`, `int|ints`, `floats/N`, `floatimm?`, `floatimms`,
    `object`...)."""

    name: str
    default: Any = REQUIRED
    kind: str = "int"


InferFn = Callable[["InferCtx"], "relax.StructInfo"]
# A build hook rewrites the matched arguments and attributes before the call is
# made (TVM's Python wrappers do the same: -1 in reshape, out_layout defaults).
BuildFn = Callable[["BuildCtx"], "relax.Call | None"]


@dataclass(frozen=True, slots=True)
class OpDef:
    name: str
    arg_names: tuple[ArgDef, ...]
    attrs: tuple[AttrDef, ...]
    pattern: OpPatternKind
    infer: InferFn
    build: BuildFn | None = None
    # Keywords that give the result struct info (`out_sinfo=`, `ty_args=`), stored
    # in `Call.sinfo_args`.
    sinfo_keywords: tuple[str, ...] = ()
    # Relax arguments TVM prints as `name=value` (the `format` of R.print).
    keyword_args: tuple[str, ...] = ()
    # Positional order of TVM's Python signature when it is not "arguments, then
    # attributes" (`R.nn.pad(x, width, mode, value)`, `R.call_tir(f, args, out)`).
    signature: tuple[str, ...] | None = None
    aliases: tuple[str, ...] = field(default=(), compare=False)
    # Derived from the fields above once, in `__post_init__`: every call of the
    # operator matches its arguments against them.
    positional: tuple[str, ...] = field(init=False, repr=False, compare=False)
    """Names filled by positional arguments, in order."""
    variadic_names: frozenset[str] = field(init=False, repr=False, compare=False)
    keyword_names: frozenset[str] = field(init=False, repr=False, compare=False)
    """Every argument and attribute name (what a keyword may name)."""

    def __post_init__(self) -> None:
        if self.signature is not None:
            positional = self.signature
        else:
            args = tuple(a.name for a in self.arg_names if a.name not in self.keyword_args)
            positional = args + tuple(a.name for a in self.attrs)
        names = {a.name for a in self.arg_names} | {a.name for a in self.attrs}
        object.__setattr__(self, "positional", positional)
        object.__setattr__(
            self, "variadic_names", frozenset(a.name for a in self.arg_names if a.variadic)
        )
        object.__setattr__(self, "keyword_names", frozenset(names))

    @property
    def display(self) -> str:
        """The name as written in text: `relax.nn.conv2d` -> `R.nn.conv2d`."""
        return "R." + self.name.removeprefix("relax.")


@dataclass(slots=True)
class BuildCtx:
    """What a build hook sees: the op, the matched arguments (converted Relax
    expressions in `arg_names` order, variadic ones inline, None for omitted
    optionals, which are dropped from the call), the
    normalized attributes, the result struct info keywords, and the span."""

    op: OpDef
    args: list[Any]
    attrs: dict[str, Any]
    sinfo_args: list[Any]
    span: Any = None


_REGISTRY: dict[str, OpDef] = {}


def register(op: OpDef) -> OpDef:
    """Add `op` (and its aliases) to the registry; names must be unique."""
    for name in (op.name, *op.aliases):
        if name in _REGISTRY:
            raise ValueError(f"operator {name} registered twice")
        _REGISTRY[name] = op
    return op


def define(
    name: str,
    args: tuple[ArgDef | str, ...] = (),
    attrs: tuple[AttrDef, ...] = (),
    pattern: OpPatternKind = OpPatternKind.kOpaque,
    build: BuildFn | None = None,
    sinfo_keywords: tuple[str, ...] = (),
    keyword_args: tuple[str, ...] = (),
    aliases: tuple[str, ...] = (),
    signature: tuple[str, ...] | None = None,
) -> Callable[[InferFn], InferFn]:
    """Decorator registering the decorated inference function as `name`'s."""

    def wrap(infer: InferFn) -> InferFn:
        register(
            OpDef(
                name=name,
                arg_names=tuple(a if isinstance(a, ArgDef) else ArgDef(a) for a in args),
                attrs=attrs,
                pattern=pattern,
                infer=infer,
                build=build,
                sinfo_keywords=sinfo_keywords,
                keyword_args=keyword_args,
                aliases=aliases,
                signature=signature,
            )
        )
        return infer

    return wrap


def lookup(name: str) -> OpDef | None:
    """The operator named `name` (`relax.add`), or None."""
    return _REGISTRY.get(name)


def op_names() -> list[str]:
    """Every registered name, aliases included (`relax.add`, ...)."""
    return list(_REGISTRY)


def all_ops() -> list[OpDef]:
    """Every registered operator once, sorted by name."""
    seen = {id(op): op for op in _REGISTRY.values()}
    return sorted(seen.values(), key=_op_name)


def _op_name(op: OpDef) -> str:
    return op.name

"""What the parsers of one module share: the dialect, the module's names, the
nesting limit, and nested name scopes with located errors."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tvmlite.diagnostics import ParseError, Source, Span, did_you_mean
from tvmlite.grammar import syntax

# How deeply the statements and expressions of one function may nest (counted
# together, as the IR they become nests). Every later stage (verifier, printer,
# passes, codegen) walks IR recursively; this bound keeps them all well inside
# Python's stack, so a text nested deeper gets this located error instead of a
# RecursionError somewhere downstream.
MAX_NESTING = 100


@dataclass
class ParseContext:
    """`global_names` maps each module function's name to its kind (`prim`,
    `relax`, `extern`), known before any body is parsed so that forward
    references work. `type_vars` holds module-level `n = TypeVar("n")` names;
    each function that mentions one gets its own int64 var."""

    dialect: str
    source: Source
    module_name: str = "Module"
    global_names: dict[str, str] = field(default_factory=dict)
    # each prim function's result dtype (`-> T.int32`; "void" without one), for the
    # TIR calls `Module.f(...)` that may come before its definition
    prim_returns: dict[str, str] = field(default_factory=dict)
    type_vars: set[str] = field(default_factory=set)
    depth: int = 0  # the nesting level being parsed; see `nest`
    # TVM's well-formedness check (`parse(check_well_formed=...)`, the module's decorator)
    check_well_formed: bool = True

    def error(self, message: str, node: syntax.Node | Span | None) -> ParseError:
        span = node if isinstance(node, Span) or node is None else node.span
        return ParseError(message, span, self.source.filename)

    def nest(self, node: syntax.Node, what: str = "expression", why: str = "") -> None:
        """Go one level deeper to parse `node`; the caller comes back up with
        `ctx.depth -= 1` once it is done (an error abandons the whole parse).
        Every function that recurses over syntax goes through here, so deeply
        nested text is stopped at the construct that crosses the limit."""
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise self.error(
                f"this {what} is nested too deeply: the nesting limit is {MAX_NESTING} levels "
                f"of statements and expressions{why}",
                node,
            )


class Scope:
    """A stack of frames mapping source names to IR objects (vars, buffers, ...)."""

    def __init__(self) -> None:
        self._frames: list[dict[str, Any]] = [{}]

    def push(self) -> None:
        self._frames.append({})

    def pop(self) -> None:
        self._frames.pop()

    def define(self, name: str, value: Any) -> None:
        self._frames[-1][name] = value

    def lookup(self, name: str) -> Any | None:
        for frame in reversed(self._frames):
            if name in frame:
                return frame[name]
        return None

    def defined_here(self, name: str) -> bool:
        return name in self._frames[-1]

    def names(self) -> set[str]:
        """Every name visible here (for "did you mean")."""
        return {name for frame in self._frames for name in frame}


def bind_call(
    ctx: ParseContext, node: syntax.Call, name: str, params: tuple[str, ...], required: int = 0
) -> dict[str, syntax.Node]:
    """Match a call's positional and keyword arguments to `params`, as Python would,
    so that every `R.`/`T.` form reports arity and keyword mistakes the same way."""
    if len(node.args) > len(params):
        raise ctx.error(
            f"{name} takes at most {len(params)} positional arguments ({len(node.args)} given)",
            node.args[len(params)],
        )
    bound: dict[str, syntax.Node] = dict(zip(params, node.args, strict=False))
    for kw in node.keywords:
        if kw.name not in params:
            hint = did_you_mean(kw.name, params, quote=True)
            raise ctx.error(f"{name} got an unexpected keyword argument '{kw.name}'{hint}", kw)
        if kw.name in bound:
            raise ctx.error(f"{name} got multiple values for argument '{kw.name}'", kw)
        bound[kw.name] = kw.value
    for param in params[:required]:
        if param not in bound:
            raise ctx.error(f"{name} is missing the argument '{param}'", node)
    return bound

"""Building operator calls from parsed arguments, and inferring their struct info.

`make_call` matches positional and keyword arguments against an operator's
Relax arguments, then its attributes (TVM's Python signatures list them in that
order), converts each, fills attribute defaults, and lets the operator's build
hook apply what TVM's Python wrapper would (e.g. resolving `-1` in a reshape).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from tvmlite.diagnostics import ParseError, Span, TVMLiteError, did_you_mean
from tvmlite.dsl import relax
from tvmlite.dsl.ops.context import InferCtx, sinfo_of
from tvmlite.dsl.ops.convert import Fail, convert_arg, normalize_attr
from tvmlite.dsl.ops.registry import REQUIRED, ArgDef, BuildCtx, OpDef, lookup, op_names

_MISSING = object()


def _display(name: str) -> str:
    return "R." + name.removeprefix("relax.")


def _get_op(name: str, span: Span | None) -> OpDef:
    op = lookup(name)
    if op is None:
        raise ParseError(unknown_operator(_display(name)), span)
    return op


def unknown_operator(shown: str, also: Iterable[str] = ()) -> str:
    """The message for an operator `shown` (`R.nn.softmx`) that is not registered,
    with the closest registered names (and of `also`: the parser's own calls)."""
    names = [*map(_display, op_names()), *also]
    return f"unknown operator {shown}" + did_you_mean(shown, names)


def _sinfo_list(value: Any, fail: Fail, name: str) -> list[relax.StructInfo]:
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    for item in items:
        if not isinstance(item, relax.StructInfo):
            fail(f"{name} must be struct info such as R.Tensor(...), got {type(item).__name__}")
    return items


def _match(
    op: OpDef, args: Sequence[Any], kwargs: dict[str, Any], fail: Fail
) -> tuple[dict[str, Any], list[relax.StructInfo]]:
    """Assign every given value to an argument, attribute or result-type name."""
    variadic = op.variadic_names
    given: dict[str, Any] = {}
    index = 0
    nargs = len(args)
    for slot in op.positional:
        if index >= nargs:
            break
        if slot in variadic:
            given[slot] = list(args[index:])
            index = nargs
            break
        given[slot] = args[index]
        index += 1
    if index < nargs:
        fail(f"takes at most {index} positional arguments, got {nargs}")
    sinfo_args: list[relax.StructInfo] = []
    for slot in op.sinfo_keywords:
        if slot in given:
            sinfo_args = _sinfo_list(given.pop(slot), fail, slot)
    known = op.keyword_names
    for key, value in kwargs.items():
        if key in op.sinfo_keywords:
            if sinfo_args:
                fail(f"got more than one value for {key!r}")
            sinfo_args = _sinfo_list(value, fail, key)
            continue
        if key not in known:
            hint = did_you_mean(key, [*known, *op.sinfo_keywords], quote=True)
            fail(f"unknown keyword argument {key!r}{hint}")
        if key in given:
            fail(f"got more than one value for {key!r}")
        given[key] = value
    return given, sinfo_args


def _variadic_values(value: Any) -> list[Any]:
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], list):
        return list(value[0])  # `R.assert_op(c, [a, b])` passes the values as one list
    return list(value) if isinstance(value, list) else [value]


def _convert_args(op: OpDef, given: dict[str, Any], fail: Fail) -> list[relax.Expr | None]:
    out: list[relax.Expr | None] = []
    for arg in op.arg_names:
        value = given.get(arg.name, _MISSING)
        if arg.variadic:
            values = [] if value is _MISSING else _variadic_values(value)
            out.extend(convert_arg(ArgDef(arg.name, arg.kind), v, fail) for v in values)
            continue
        if value is _MISSING or (value is None and arg.optional):
            if not arg.optional:
                fail(f"missing argument {arg.name!r}")
            value = arg.default
            if value is None:
                out.append(None)  # absent optional: dropped after the build hook
                continue
        out.append(convert_arg(arg, value, fail))
    return out


def _convert_attrs(op: OpDef, given: dict[str, Any], fail: Fail) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for attr in op.attrs:
        value = given.get(attr.name, _MISSING)
        if value is _MISSING:
            if attr.default is REQUIRED:
                fail(f"missing attribute {attr.name!r}")
            value = attr.default
        out[attr.name] = normalize_attr(attr, value, fail)
    return out


def make_call(
    name: str, args: Sequence[Any], kwargs: dict[str, Any], span: Span | None = None
) -> relax.Call:
    """`R.<name>(*args, **kwargs)` as a Relax call with schema-ordered attributes."""
    op = _get_op(name, span)
    fail = Fail(op, span)
    try:
        given, sinfo_args = _match(op, args, kwargs, fail)
        call_args = _convert_args(op, given, fail)
        attrs = _convert_attrs(op, given, fail)
        if op.build is not None:
            ctx = BuildCtx(op, call_args, attrs, sinfo_args, span)
            built = op.build(ctx)
            if built is not None:
                return built
            call_args, attrs, sinfo_args = ctx.args, ctx.attrs, ctx.sinfo_args
        return relax.Call(
            relax.Op(op.name),
            tuple([a for a in call_args if a is not None]),
            tuple(attrs.items()),
            tuple(sinfo_args),
            span,
        )
    except (ParseError, RecursionError):
        raise
    except Exception as err:  # a bug here must still surface as a located error
        raise ParseError(f"{op.display}: cannot build the call ({err})", span) from err


def infer_struct_info(call: relax.Call, span: Span | None = None) -> relax.StructInfo:
    """The struct info of `call`'s result, or a `ParseError` naming the operator."""
    span = span if span is not None else call.span
    callee = call.op
    if isinstance(callee, relax.Op):
        op = _get_op(callee.name, span)
        try:
            return op.infer(InferCtx(call, op, span))
        except (ParseError, RecursionError):  # the parser reports running out of stack
            raise
        except TVMLiteError as err:  # a node the result would need is invalid
            raise ParseError(f"{op.display}: {err}", span) from None
        except Exception as err:  # keep the promise: only ParseError escapes
            raise ParseError(f"{op.display}: cannot infer the result ({err})", span) from err
    if call.sinfo_args:
        return call.sinfo_args[0]
    if isinstance(callee, relax.Var):
        sinfo = callee.struct_info
        if isinstance(sinfo, relax.FuncStructInfo):
            return sinfo.ret
    if isinstance(callee, relax.Function):
        return callee.ret_struct_info
    return relax.ObjectStructInfo()


__all__ = ["infer_struct_info", "make_call", "sinfo_of"]

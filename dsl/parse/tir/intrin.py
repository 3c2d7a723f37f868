"""`T.*` calls that build expressions: dtype constructors, casts, math intrinsics,
explicit operator forms, limits, vectors and extern calls.

Each name maps to a plain function and a signature; arity and keywords are checked
before the function runs, so every error points at the call.
"""

from __future__ import annotations

from tvmlite.diagnostics import did_you_mean
from tvmlite.dsl import dtype as dt
from tvmlite.dsl import tir
from tvmlite.dsl.parse.tir.device import DEVICE_BUILTINS, SCALAR_TWINS, TILE_OPERATORS
from tvmlite.dsl.parse.tir.expr import DTYPE_LIKE, META_BUILTINS, ExprParser
from tvmlite.dsl.parse.tir.math import MATH_BUILTINS, Args, Builtin, Kwargs, Sig
from tvmlite.dsl.parse.tir.ops import Lit, Value, cast, make_const, materialize
from tvmlite.grammar import syntax

# `T.*` names that are statements; using one inside an expression is an error.
STATEMENT_BUILTINS = frozenset(
    [
        "func_attr",
        "reads",
        "writes",
        "where",
        "block_attr",
        "sblock_attr",
        "evaluate",
        "attr",
        "hint",
        "match_buffer",
        "alloc_buffer",
        "sblock_alloc_buffer",
        "alloc_local",
        "alloc_shared",
        "decl_buffer",
        "init",
        "block",
        "sblock",
        "grid",
        "serial",
        "parallel",
        "vectorized",
        "unroll",
        "thread_binding",
        "break_loop",
        "continue_loop",
        "bind",
        "launch_thread",
        "env_thread",
        "axis.spatial",
        "axis.reduce",
        "axis.scan",
        "axis.opaque",
        "axis.S",
        "axis.R",
        "axis.remap",
    ]
)

_EXPLICIT_BINARY = {
    "Add": "add",
    "Sub": "sub",
    "Mul": "mul",
    "Div": "div",
    "Mod": "mod",
    "FloorDiv": "floordiv",
    "FloorMod": "floormod",
    "Min": "min",
    "Max": "max",
    "EQ": "eq",
    "NE": "ne",
    "LT": "lt",
    "LE": "le",
    "GT": "gt",
    "GE": "ge",
    "And": "and",
    "Or": "or",
    "min": "min",
    "max": "max",
    "floordiv": "floordiv",
    "floormod": "floormod",
    "truncdiv": "div",
    "truncmod": "mod",
}


def check_signature(p: ExprParser, name: str, sig: Sig, node: syntax.Call) -> Kwargs:
    """Arity and keyword check with TVM-like messages; returns the keywords."""
    n = len(node.args)
    if n < sig.min_args or (sig.max_args is not None and n > sig.max_args):
        if sig.max_args is None:
            want = f"at least {sig.min_args}"
        elif sig.min_args == sig.max_args:
            want = str(sig.min_args)
        else:
            want = f"{sig.min_args} to {sig.max_args}"
        plural = "" if want == "1" else "s"
        raise p.error(f"T.{name} expects {want} argument{plural}, got {n}", node)
    kwargs: Kwargs = {}
    for kw in node.keywords:
        if kw.name not in sig.keywords and not sig.any_keywords:
            hint = did_you_mean(kw.name, sig.keywords, quote=True)
            raise p.error(f"T.{name} got an unexpected keyword argument '{kw.name}'{hint}", kw)
        kwargs[kw.name] = kw.value
    return kwargs


def call_builtin(p: ExprParser, name: str, node: syntax.Call) -> Value:
    if name in META_BUILTINS:
        raise p.error(f"T.{name} is not supported: it needs Python evaluation", node)
    name = dt.SHORT_NAMES.get(name, name)
    if dt.is_valid(name) and name not in ("handle", "void"):
        kwargs = check_signature(p, name, Sig(0, 1, ("is_size_var",)), node)
        return dtype_call(p, name, node, list(node.args), kwargs)
    if DTYPE_LIKE.match(name):
        raise p.error(dt.unknown(name), node.func)
    if name == "comm_reducer":
        raise p.error('T.comm_reducer is the node of T.attr(..., "reduce_scope", ...)', node)
    entry = BUILTINS.get(name)
    if entry is None:
        if name in STATEMENT_BUILTINS:
            raise p.error(f"T.{name} is a statement, not an expression", node)
        known = [f"T.{k}" for k in (*BUILTINS, *STATEMENT_BUILTINS, *dt.scalar_names())]
        hint = did_you_mean(f"T.{name}", known)
        raise p.error(f"unknown TIR builtin T.{name}{hint}", node.func)
    fn, sig = entry
    kwargs = check_signature(p, name, sig, node)
    return fn(p, name, node, list(node.args), kwargs)


# ---------------------------------------------------------------- constructors


def dtype_call(p: ExprParser, name: str, node: syntax.Call, args: Args, kw: Kwargs) -> Value:
    """`T.float32(0.5)`, `T.float32("inf")`, `T.int64(n)` (a cast of an expression)."""
    if not args:
        raise p.error(f"T.{name}() declares a variable: write it as `n = T.{name}()`", node)
    arg = args[0]
    if isinstance(arg, syntax.Constant) and isinstance(arg.value, str):
        if not dt.is_float(dt.element_of(name)):
            raise p.error(f"T.{name} does not take a string", arg)
        try:
            number = float(arg.value)
        except ValueError:
            raise p.error(f"bad float literal {arg.value!r}", arg) from None
        return make_const(number, name, node.span)
    value = p.value(arg)
    if isinstance(value, Lit):
        return literal_const(p, value, name, arg)
    return cast(name, value, node.span)


def literal_const(p: ExprParser, lit: Lit, dtype: str, node: syntax.Node) -> tir.PrimExpr:
    """An immediate of `dtype`; `make_const` checks that the value fits."""
    elem = dt.element_of(dtype)
    if dt.is_float(elem):
        return make_const(lit.value, dtype, node.span)
    if isinstance(lit.value, float):
        raise p.error(f"T.{dtype} expects an integer, got {lit.value!r}", node)
    value = int(lit.value)
    if dt.is_bool(elem) and value not in (0, 1):
        raise p.error(f"T.bool expects True or False, got {value}", node)
    return make_const(value, dtype, node.span)


def _cast_node(p: ExprParser, name: str, node: syntax.Call, args: Args, kw: Kwargs) -> Value:
    """`T.Cast("float32", x)` builds the node; `T.cast(x, "float32")` folds like TVM."""
    if name == "Cast":
        dtype, value = p.dtype_arg(args[0]), p.expr(args[1])
        return tir.Cast(dtype, value, node.span)
    dtype = p.dtype_arg(args[1])
    return cast(dtype, p.expr(args[0]), node.span)


def _select(p: ExprParser, name: str, node: syntax.Call, args: Args, kw: Kwargs) -> Value:
    cond = p.boolean(p.value(args[0]), args[0], f"condition of T.{name}")
    x, y = p.matched(p.value(args[1]), p.value(args[2]), node)
    if name == "Select":
        return tir.Select(cond, x, y, x.dtype, node.span)
    return tir.Call(x.dtype, "if_then_else", (cond, x, y), node.span)


def _binary(p: ExprParser, name: str, node: syntax.Call, args: Args, kw: Kwargs) -> Value:
    kind = _EXPLICIT_BINARY[name]
    a, b = p.value(args[0]), p.value(args[1])
    if kind in ("and", "or"):
        x = p.boolean(a, args[0], f"operand of T.{name}")
        y = p.boolean(b, args[1], f"operand of T.{name}")
        return tir.BinaryOp(kind, x, y, x.dtype, node.span)
    result = p.binop(kind, a, b, node)
    if name == "truncdiv" and not dt.is_integer_like(result.dtype):
        raise p.error(f"T.{name} expects integer operands, got {result.dtype}", node)
    # T.truncmod of floats is fmod, as TVM builds it (`Mod` of two floats)
    return result


def _not(p: ExprParser, name: str, node: syntax.Call, args: Args, kw: Kwargs) -> Value:
    return tir.Not(p.boolean(p.value(args[0]), args[0], "operand of T.Not"), span=node.span)


def _hint(p: ExprParser, name: str, node: syntax.Call, args: Args, kw: Kwargs) -> Value:
    """`T.likely(c)` keeps the condition's dtype; `T.assume(c)` is bool."""
    if not args:
        return tir.Call("bool", name, (), node.span)
    cond = p.boolean(p.value(args[0]), args[0], f"argument of T.{name}")
    return tir.Call(cond.dtype if name == "likely" else "bool", name, (cond,), node.span)


def _let(p: ExprParser, name: str, node: syntax.Call, args: Args, kw: Kwargs) -> Value:
    """`T.Let(body, where={v: value})`: `v` comes from an earlier `v = T.int32()`."""
    where = kw.get("where", args[1] if len(args) > 1 else None)
    if not isinstance(where, syntax.Dict) or not where.keys:
        raise p.error("T.Let needs where={var: value}", node)
    bindings = []
    for key, value_node in zip(where.keys, where.values, strict=True):
        var = p.value(key)
        if not isinstance(var, tir.Var):
            raise p.error("keys of T.Let's where= must be variables", key)
        bindings.append((var, p.typed(value_node, var.dtype)))
    body = p.expr(args[0])
    for var, value in reversed(bindings):
        body = tir.Let(var, value, body, body.dtype, node.span)
    return body


def _ramp(p: ExprParser, name: str, node: syntax.Call, args: Args, kw: Kwargs) -> Value:
    base, stride = p.matched(p.value(args[0]), p.value(args[1]), node)
    lanes, scalable = p.vector_lanes(args[2], "the lanes of T.Ramp")
    return tir.Ramp(base, stride, lanes, dt.with_lanes(base.dtype, lanes, scalable), node.span)


def _broadcast(p: ExprParser, name: str, node: syntax.Call, args: Args, kw: Kwargs) -> Value:
    value = p.expr(args[0])
    lanes, scalable = p.vector_lanes(args[1], "the lanes of T.Broadcast")
    dtype = dt.with_lanes(value.dtype, lanes, scalable)
    return tir.Broadcast(value, lanes, dtype, node.span)


def _shuffle(p: ExprParser, name: str, node: syntax.Call, args: Args, kw: Kwargs) -> Value:
    """`T.Shuffle([x, y], [0, 1])`: vectors, then the lane indices to pick."""
    if not all(isinstance(a, syntax.List) and a.elts for a in args):
        raise p.error("T.Shuffle expects a list of vectors and a list of lane indices", node)
    vectors = tuple(p.expr(v) for v in args[0].elts)  # type: ignore[attr-defined]
    indices = tuple(
        materialize(p.integer(i, "a lane index of T.Shuffle"))
        for i in args[1].elts  # type: ignore[attr-defined]
    )
    elem = dt.element_of(vectors[0].dtype)
    for vector, item in zip(vectors, args[0].elts, strict=True):  # type: ignore[attr-defined]
        if dt.element_of(vector.dtype) != elem:
            raise p.error(f"the vectors of T.Shuffle must all be {elem}, got {vector.dtype}", item)
    dtype = dt.with_lanes(elem, len(indices))
    return tir.Shuffle(vectors, indices, dtype, node.span)


_PACKED = ("call_packed", "call_cpacked", "call_packed_lowered", "call_cpacked_lowered")
# TVM's op names of those (`tirx.tvm_call_packed`), which its API takes too
_PACKED_ALIASES = {f"tvm_{name}": name for name in _PACKED}


def _extern(p: ExprParser, name: str, node: syntax.Call, args: Args, kw: Kwargs) -> Value:
    """`T.call_extern("int32", "f", ...)` and friends: result dtype first, then the name.
    `T.call_packed("f", ...)` and the lowered `T.call_packed_lowered("f", stack, 0, 1)`
    have no dtype (int32); TVM also takes the packed function as a value (a handle)."""
    name = _PACKED_ALIASES.get(name, name)
    if name in _PACKED:
        dtype, rest = "int32", args
        first = rest[0]
        if not (isinstance(first, syntax.Constant) and isinstance(first.value, str)):
            return tir.Call(dtype, name, tuple(p.expr(arg) for arg in rest), node.span)
    else:
        dtype, rest = p.dtype_arg(args[0]), args[1:]
    callee = tir.StringImm(p.str_arg(rest[0], f"the function name of T.{name}"), span=rest[0].span)
    params = tuple(p.expr(arg) for arg in rest[1:])
    op = callee.value.removeprefix("tirx.")
    if name == "call_intrin" and callee.value.startswith("tirx.") and op in BUILTINS:
        return tir.Call(dtype, op, params, node.span)  # TVM's call of that very op
    return tir.Call(dtype, name, (callee, *params), node.span)


def _address_of(p: ExprParser, name: str, node: syntax.Call, args: Args, kw: Kwargs) -> Value:
    """`T.address_of(A[i])` (a handle), of a scalar variable (TVM prints that too), or
    of a `T.TensorMap()` descriptor (its address, a uint64 as in TVM 0.27)."""
    target = p.expr(args[0])
    if isinstance(target, tir.Var) and target.pointee == tir.TENSOR_MAP:
        return tir.Call("uint64", name, (target,), node.span)
    if not isinstance(target, tir.BufferLoad | tir.Var):
        raise p.error("T.address_of expects a buffer element such as A[i] or a variable", args[0])
    return tir.Call("handle", name, (target,), node.span)


def _buffer_offset(p: ExprParser, name: str, node: syntax.Call, args: Args, kw: Kwargs) -> Value:
    """`T.buffer_offset(A[i, j])`: the element offset of `A[i, j]` in A's storage (an
    index, as in TVM 0.27, which writes it as a view's `elem_offset=`)."""
    load = p.expr(args[0])
    if not isinstance(load, tir.BufferLoad) or not load.indices:
        raise p.error("T.buffer_offset expects a buffer element such as A[i]", args[0])
    return tir.Call(load.indices[0].dtype, name, (load,), node.span)


def _type_annotation(p: ExprParser, name: str, node: syntax.Call, args: Args, kw: Kwargs) -> Value:
    """`T.type_annotation("float16")`: a value that only carries its dtype."""
    return tir.Call(p.dtype_arg(args[0]), name, (), node.span)


def _type_first(p: ExprParser, name: str, node: syntax.Call, args: Args, kw: Kwargs) -> Value:
    """Intrinsics whose result type TVM prints as their first argument
    (`T.vectorcombine("float32x8", a, b)`, `T.masked_load("int32", ...)`)."""
    dtype, pointee = p.type_arg(kw["dtype"] if "dtype" in kw else args[0])
    rest = args if "dtype" in kw else args[1:]
    return tir.Call(dtype, name, tuple(p.expr(a) for a in rest), node.span, pointee=pointee)


def _dp4a(p: ExprParser, name: str, node: syntax.Call, args: Args, kw: Kwargs) -> Value:
    """`T.dp4a(a, b, acc=0, dtype="int32")` as TVM's API takes it; TVM prints the type
    first (`T.dp4a("int32", a, b, 0)`), which reads back the same."""
    first = args[0] if args else None
    if isinstance(first, syntax.Constant) and isinstance(first.value, str) or "dtype" in kw:
        return _type_first(p, name, node, args, kw)
    values = [p.expr(a) for a in args]
    if len(values) == 2:
        values.append(tir.IntImm("int32", 0, node.span))
    return tir.Call("int32", name, tuple(values), node.span)


def _ret(p: ExprParser, name: str, node: syntax.Call, args: Args, kw: Kwargs) -> Value:
    value = p.expr(args[0])
    return tir.Call(value.dtype, name, (value,), node.span)


BUILTINS: dict[str, tuple[Builtin, Sig]] = {
    "Cast": (_cast_node, Sig(2, 2)),
    "cast": (_cast_node, Sig(2, 2)),
    "Select": (_select, Sig(3, 3)),
    "if_then_else": (_select, Sig(3, 3)),
    "Not": (_not, Sig(1, 1)),
    "likely": (_hint, Sig(1, 1)),
    "assume": (_hint, Sig(0, 1)),
    "Let": (_let, Sig(1, 2, ("where",))),
    "Ramp": (_ramp, Sig(3, 3)),
    "Broadcast": (_broadcast, Sig(2, 2)),
    "Shuffle": (_shuffle, Sig(2, 2)),
    "call_extern": (_extern, Sig(2, None)),
    "call_pure_extern": (_extern, Sig(2, None)),
    "call_intrin": (_extern, Sig(2, None)),
    "call_llvm_intrin": (_extern, Sig(2, None)),
    "call_llvm_pure_intrin": (_extern, Sig(2, None)),
    **{packed: (_extern, Sig(1, None)) for packed in (*_PACKED, *_PACKED_ALIASES)},
    "address_of": (_address_of, Sig(1, 1)),
    "buffer_offset": (_buffer_offset, Sig(1, 1)),
    "ret": (_ret, Sig(1, 1)),
    "vectorcombine": (_type_first, Sig(1, None, ("dtype",))),
    "get_active_lane_mask": (_type_first, Sig(1, None, ("dtype",))),
    "masked_load": (_type_first, Sig(1, None, ("dtype",))),
    "dp4a": (_dp4a, Sig(2, 4, ("dtype",))),
    "type_annotation": (_type_annotation, Sig(1, 1)),
}
BUILTINS.update(MATH_BUILTINS)
BUILTINS.update(DEVICE_BUILTINS)
BUILTINS.update({name: (_binary, Sig(2, 2)) for name in _EXPLICIT_BINARY})
SCALAR_TWINS.update({name: fn for name, (fn, _) in BUILTINS.items() if name in TILE_OPERATORS})


def is_tir_name(name: str) -> bool:
    """Whether `T.<name>` means something to the TIR parser (a builtin, a statement,
    a dtype or a meta builtin it refuses); a Relax function reads any other `T.<name>`
    call as an operator TVM registers outside Relax (see dsl/parse/relax/expr.py)."""
    return (
        name in BUILTINS
        or name in STATEMENT_BUILTINS
        or name in META_BUILTINS
        or name == "comm_reducer"
        or DTYPE_LIKE.match(name) is not None
        or dt.is_valid(name)
        or name in dt.SHORT_NAMES
    )

"""Buffers, regions and attribute values: the pieces shared by signatures
(`T.Buffer` params, `T.match_buffer`), allocations, block headers and `T.attr`.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from tvmlite.diagnostics import ParseError, did_you_mean
from tvmlite.dsl import dtype as dt
from tvmlite.dsl import relax, tir
from tvmlite.dsl.parse.tir.expr import ExprParser
from tvmlite.dsl.parse.tir.layout import allocated_addr, buffer_layout
from tvmlite.dsl.parse.tir.ops import Lit, difference, make_const, materialize
from tvmlite.grammar import syntax

# Positional order of `T.Buffer` / `T.match_buffer` / `T.alloc_buffer` arguments
# after the source (TVM's signatures agree on it).
BUFFER_PARAMS = (
    "shape",
    "dtype",
    "data",
    "strides",
    "elem_offset",
    "scope",
    "align",
    "offset_factor",
    "buffer_type",
    "axis_separators",
)
# tirx keywords (no position of their own: TVM's declarations order them differently)
_KEYWORD_ONLY = ("layout", "allocated_addr")


class BufferParser:
    """Buffer declarations, regions and attribute dictionaries, over the expression
    parser it holds (`exprs`)."""

    def __init__(self, exprs: ExprParser) -> None:
        self.exprs = exprs
        self.ctx = exprs.ctx

    s_tir = False  # the function's `s_tir=True`: buffers there have no tirx layout

    def buffer_args(
        self, call: syntax.Call, args: tuple[syntax.Node, ...], what: str
    ) -> dict[str, syntax.Node]:
        """Positional and keyword arguments of a buffer declaration, by parameter name."""
        if len(args) > len(BUFFER_PARAMS):
            raise self.ctx.error(
                f"{what} expects at most {len(BUFFER_PARAMS)} arguments, got {len(args)}", call
            )
        named = dict(zip(BUFFER_PARAMS, args, strict=False))
        for kw in call.keywords:
            if kw.name not in BUFFER_PARAMS and kw.name not in _KEYWORD_ONLY:
                hint = did_you_mean(kw.name, [*BUFFER_PARAMS, *_KEYWORD_ONLY], quote=True)
                raise self.ctx.error(
                    f"{what} got an unexpected keyword argument '{kw.name}'{hint}", kw
                )
            if kw.name in named:
                raise self.ctx.error(f"{what} got multiple values for argument '{kw.name}'", kw)
            named[kw.name] = kw.value
        return named

    def make_buffer(
        self,
        name: str,
        named: dict[str, syntax.Node],
        node: syntax.Node,
        *,
        scope: str = "global",
        shape: tuple[tir.PrimExpr, ...] | None = None,
        dtype: str = "float32",
    ) -> tir.Buffer:
        """A buffer from declaration arguments; `shape` is used when none is written."""
        if "shape" in named:
            shape = self.shape(named["shape"])
        if shape is None:
            raise self.ctx.error("a buffer needs a shape", node)
        if "dtype" in named:
            dtype = self.exprs.dtype_arg(named["dtype"])
        index_dtype = shape[0].dtype if shape else "int32"
        scope = self.exprs.str_arg(named["scope"], "scope") if "scope" in named else scope
        data = self.data_var(named.get("data"), name, dtype, scope, node)
        strides: tuple[tir.PrimExpr, ...] = ()
        if "strides" in named and not _is_none(named["strides"]):
            strides = tuple(
                self.dim(d, index_dtype, define=False) for d in self.dims(named["strides"])
            )
        elem_offset = None
        if "elem_offset" in named and not _is_none(named["elem_offset"]):
            # a bare integer is an int32 offset whatever the shape's dtype, as in TVM
            # (so `elem_offset=0` of an int64-shaped buffer is printed, not implied)
            literal = isinstance(named["elem_offset"], syntax.Constant)
            elem_offset = self.dim(named["elem_offset"], None if literal else index_dtype)
        align = self.exprs.int_arg(named["align"], "align") if "align" in named else 0
        factor = (
            self.exprs.int_arg(named["offset_factor"], "offset_factor")
            if "offset_factor" in named
            else 0
        )
        if "buffer_type" in named:
            kind = self.exprs.str_arg(named["buffer_type"], "buffer_type")
            if kind not in ("", "default"):
                raise self.ctx.error(f"buffer_type={kind!r} is not supported", named["buffer_type"])
        if "axis_separators" in named and self.dims(named["axis_separators"]):
            raise self.ctx.error("axis_separators are not supported", named["axis_separators"])
        layout = buffer_layout(self.exprs, named.get("layout"), shape, scope, self.s_tir)
        addr = (
            allocated_addr(self.exprs, named["allocated_addr"]) if "allocated_addr" in named else ()
        )
        return tir.Buffer(
            name, data, dtype, shape, strides, elem_offset, scope, max(align, 0), factor, node.span,
            layout, addr,
        )  # fmt: skip

    def data_var(
        self, node: syntax.Node | None, name: str, dtype: str, scope: str, owner: syntax.Node
    ) -> tir.Var:
        if node is None or _is_none(node):
            return tir.Var(name, "handle", (dtype, scope), owner.span)
        value = self.exprs.storage(node)
        if not isinstance(value, tir.Var) or value.dtype != "handle":
            raise self.ctx.error("data= must be a handle variable", node)
        return value

    def dims(self, node: syntax.Node) -> tuple[syntax.Node, ...]:
        if isinstance(node, syntax.Tuple | syntax.List):
            return node.elts
        return (node,)

    def shape(self, node: syntax.Node) -> tuple[tir.PrimExpr, ...]:
        return tuple(self.dim(d, None) for d in self.dims(node))

    def dim(self, node: syntax.Node, dtype: str | None, define: bool = True) -> tir.PrimExpr:
        """A shape/stride/offset entry; a quoted one (`"n"`, `"n * 4"`) is parsed as an
        expression, and an unknown quoted name becomes a fresh var as in TVM. A quoted
        stride name is always a fresh var that defines no name (`A.strides[0]` is how
        the text refers to it), as in TVM."""
        if isinstance(node, syntax.Constant) and isinstance(node.value, str):
            return self.quoted(node, dtype or "int32", define)
        value = self.exprs.value(node)
        if isinstance(value, Lit) and not isinstance(value.value, int):
            raise self.ctx.error("a buffer dimension must be an integer", node)
        expr = materialize(value, dtype)
        if not dt.is_integer_like(expr.dtype):
            raise self.ctx.error(f"a buffer dimension must be an integer, got {expr.dtype}", node)
        return expr

    def quoted(self, node: syntax.Constant, dtype: str, define: bool = True) -> tir.PrimExpr:
        from tvmlite.grammar import parse_expression

        text = str(node.value)
        parsed = parse_expression(text, node.span, self.ctx.source.filename)
        fresh = isinstance(parsed, syntax.Name) and parsed.id not in self.ctx.type_vars
        if fresh and (not define or self.exprs.scope.lookup(parsed.id) is None):
            var = tir.Var(parsed.id, dtype, span=node.span)
            if define:
                self.exprs.define(parsed.id, var)
            return var
        try:
            return self.exprs.expr(parsed, dtype)
        except ParseError as exc:
            raise self.ctx.error(f"{exc.message} in {text!r}", node) from None

    # ------------------------------------------------------------ regions

    def regions(self, args: tuple[syntax.Node, ...]) -> list[tir.BufferRegion]:
        """`T.reads(A[i, 0:4], B)`; a list argument (older spelling) is flattened."""
        out: list[tir.BufferRegion] = []
        for arg in args:
            if isinstance(arg, syntax.List | syntax.Tuple):
                self.ctx.nest(arg)
                out.extend(self.regions(arg.elts))
                self.ctx.depth -= 1
            else:
                out.append(self.region(arg))
        return out

    def region(self, node: syntax.Node) -> tir.BufferRegion:
        """`A[i, a:b]` (points and slices) or a whole buffer `A`. The number of indices
        is checked by the verifier, which reports it at this node."""
        if isinstance(node, syntax.Name):
            buffer = self.exprs.buffer(node)
            ranges = tuple(tir.Range(make_const(0, d.dtype), d, node.span) for d in buffer.shape)
            return tir.BufferRegion(buffer, ranges, node.span)
        if not isinstance(node, syntax.Subscript):
            raise self.ctx.error("expected a buffer region such as A[i, 0:4]", node)
        buffer = self.exprs.buffer_of(node.value)
        ranges = []
        for axis, index in enumerate(node.indices):
            if isinstance(index, syntax.Slice):
                ranges.append(self.slice_range(buffer, axis, index))
            else:
                start = self.exprs.expr(index)
                ranges.append(tir.Range(start, make_const(1, start.dtype), index.span))
        return tir.BufferRegion(buffer, tuple(ranges), node.span)

    def slice_range(self, buffer: tir.Buffer, axis: int, node: syntax.Slice) -> tir.Range:
        if node.step is not None:
            raise self.ctx.error("a region slice cannot have a step", node.step)
        extent_of_axis = buffer.shape[axis] if axis < len(buffer.shape) else None
        start = self.exprs.value(node.start) if node.start is not None else Lit(0, node.span)
        if node.stop is not None:
            stop = self.exprs.value(node.stop)
        elif extent_of_axis is not None:
            stop = extent_of_axis
        else:
            raise self.ctx.error("a slice past the buffer's last axis needs a stop", node)
        lo, hi = self.exprs.matched(start, stop, node)
        return tir.Range(lo, difference(hi, lo, node.span), node.span)

    # ------------------------------------------------------------ attributes

    def attr_value(self, node: syntax.Node) -> Any:
        """Attribute values as TVM stores them: Python scalars and strings, tuples for
        lists, tuples of pairs for dicts, else a PrimExpr (classic's `T.bool(...)`: a
        bool)."""
        self.ctx.nest(node)
        value = self._attr_value(node)
        self.ctx.depth -= 1
        return value

    def _attr_value(self, node: syntax.Node) -> Any:
        if isinstance(node, syntax.Constant):
            return node.value
        if isinstance(node, syntax.UnaryOp) and node.op == "-":
            inner = self.attr_value(node.operand)
            if isinstance(inner, int | float) and not isinstance(inner, bool):
                return -inner
        if isinstance(node, syntax.Dict):
            return tir.AttrDict(self.attr_dict(node))
        if isinstance(node, syntax.List | syntax.Tuple):
            return tuple(self.attr_value(e) for e in node.elts)
        if isinstance(node, syntax.Name):
            found = self.exprs.lookup(node.id, node)
            if isinstance(found, tir.Buffer):
                return found
        if isinstance(node, syntax.Call) and syntax.dotted(node.func) == "T.target":
            return self.target(node)
        if isinstance(node, syntax.Call) and syntax.dotted(node.func) == "I.Op":
            # an operator as a value (a tile reduction's `I.Op("tirx.tile.sum")`)
            if len(node.args) != 1 or node.keywords:
                raise self.ctx.error('I.Op expects one operator name such as "tirx.tile.add"', node)
            return relax.Op(self.exprs.str_arg(node.args[0], "the operator name"), node.span)
        if isinstance(node, syntax.Call) and syntax.dotted(node.func) == "T.bool":
            # classic writes every bool so; 0.27 writes a Python bool bare, and keeps
            # `T.bool(True)` a typed immediate (an s_tir function's `tir.noalias`)
            value = self.exprs.expr(node)
            if isinstance(value, tir.IntImm) and self.ctx.dialect != "tvm-0.27":
                return bool(value.value)
            return value
        return self.exprs.expr(node)

    def target(self, call: syntax.Call) -> tir.TargetAttr:
        """`T.target({"kind": "llvm", ...})`, `T.target("llvm")`, `T.target("cuda",
        host="llvm")` (a host by name or by configuration)."""
        usage = 'T.target expects a dict such as {"kind": "llvm"} or a name such as "llvm"'
        extra = [kw for kw in call.keywords if kw.name != "host"]
        if len(call.args) != 1 or extra:
            raise self.ctx.error(usage, extra[0] if extra else call)
        host = next((kw.value for kw in call.keywords), None)
        return tir.TargetAttr(
            self.target_spec(call.args[0], usage),
            None if host is None else self.target_spec(host, usage),
        )

    def target_spec(self, node: syntax.Node, usage: str) -> tir.AttrDict | str:
        if isinstance(node, syntax.Dict):
            return tir.AttrDict(self.attr_dict(node))
        if isinstance(node, syntax.Constant) and isinstance(node.value, str):
            return node.value
        raise self.ctx.error(usage, node)

    def attr_dict(self, node: syntax.Node) -> tuple[tuple[str, Any], ...]:
        if not isinstance(node, syntax.Dict):
            raise self.ctx.error('expected a dict literal {"key": value}', node)
        pairs = []
        for key, value in zip(node.keys, node.values, strict=True):
            pairs.append((self.exprs.str_arg(key, "an attribute key"), self.attr_value(value)))
        return tuple(pairs)

    # ------------------------------------------------------------ attribute statements

    def attrs(self, call: syntax.Call) -> list[tir.Stmt]:
        if call.keywords:
            raise self.ctx.error("T.attr takes no keyword arguments", call.keywords[0])
        if len(call.args) == 1:
            pairs = self.attr_dict(call.args[0])
            node: Any = tir.IntImm("int32", 0, call.span)
            values = [(key, self.attr_stmt_value(v, call)) for key, v in pairs]
        elif len(call.args) == 3:
            node = self.attr_node(call.args[0])
            key = self.exprs.str_arg(call.args[1], "the attribute key")
            values = [(key, self.attr_stmt_value(self.value_of(call.args[2]), call))]
        else:
            raise self.ctx.error(f"T.attr expects 1 or 3 arguments, got {len(call.args)}", call)
        return [tir.AttrStmt(node, key, value, None, call.span) for key, value in values]

    def hint(self, call: syntax.Call) -> tir.AttrStmt:
        """`T.hint("message", key=value, ...)`: TVM 0.27's directive, an attribute
        statement keyed `tirx_hint` whose node holds the message and the keywords."""
        if len(call.args) > 1:
            raise self.ctx.error(f"T.hint takes one message, got {len(call.args)}", call)
        pairs: list[tuple[str, Any]] = []
        if call.args:
            pairs.append(("message", self.exprs.str_arg(call.args[0], "the message of T.hint")))
        for kw in call.keywords:
            value = kw.value
            sliced = isinstance(value, syntax.Subscript) and any(
                isinstance(i, syntax.Slice) for i in value.indices
            )
            region = self.exprs.region
            # `access=A[0:64]` is a region, as TVM keeps and prints it
            pairs.append((kw.name, region(value) if sliced and region else self.attr_value(value)))
        node = tir.AttrDict(tuple(pairs))
        return tir.AttrStmt(node, tir.HINT, tir.IntImm("int32", 1), None, call.span)

    def value_of(self, node: syntax.Node) -> Any:
        if isinstance(node, syntax.Constant) and isinstance(node.value, str):
            return node.value
        return self.exprs.expr(node)

    def attr_stmt_value(self, value: Any, node: syntax.Node) -> tir.PrimExpr:
        if isinstance(value, tir.PrimExpr):
            return value
        if isinstance(value, str):
            return tir.StringImm(value, span=node.span)
        if isinstance(value, bool | int | float):
            return materialize(Lit(value, node.span))
        raise self.ctx.error("a T.attr value must be a scalar or a string", node)

    def attr_node(self, node: syntax.Node) -> Any:
        if isinstance(node, syntax.Call) and syntax.dotted(node.func) == "T.comm_reducer":
            return self.comm_reducer(node)
        if isinstance(node, syntax.Call) and syntax.dotted(node.func) == "T.target":
            return self.attr_value(node)  # `T.attr(T.target({...}), "target", 0)`
        if isinstance(node, syntax.Name):
            return self.exprs.lookup(node.id, node)
        if isinstance(node, syntax.Constant) and isinstance(node.value, str):
            return tir.StringImm(node.value, span=node.span)
        return self.exprs.expr(node)

    def comm_reducer(self, call: syntax.Call) -> tir.CommReducer:
        """`T.comm_reducer(lambda x0, x1, y0, y1: (x0 + y0, x1 * y1), [zero, one])`:
        the first half of the lambda's parameters are lhs, the rest rhs, typed by
        the identity values."""
        usage = "T.comm_reducer expects (lambda x, y: ..., [identity, ...])"
        if len(call.args) != 2 or call.keywords or not isinstance(call.args[0], syntax.Lambda):
            raise self.ctx.error(usage, call)
        fn = call.args[0]
        identity = tuple(self.exprs.expr(e) for e in self.dims(call.args[1]))
        n = len(identity)
        if len(fn.params) != 2 * n:
            raise self.ctx.error(
                f"the reducer takes {2 * n} parameters for {n} identity values", fn
            )
        params = [
            tir.Var(name, identity[k % n].dtype, span=fn.span) for k, name in enumerate(fn.params)
        ]
        self.exprs.push()
        for var in params:
            self.exprs.define(var.name, var)
        results = fn.body.elts if isinstance(fn.body, syntax.Tuple) else (fn.body,)
        result = tuple(self.exprs.expr(e) for e in results)
        self.exprs.pop()
        if len(result) != n:
            raise self.ctx.error(
                f"the reducer returns {len(result)} values for {n} identities", fn.body
            )
        return tir.CommReducer(tuple(params[:n]), tuple(params[n:]), result, identity)


def implied_offset(buffer: tir.Buffer, node: syntax.Node) -> tir.Buffer:
    """As in TVM: an offset factor without an offset means a fresh offset var, which
    0.27 text names `B.elem_offset`."""
    if not buffer.offset_factor or buffer.elem_offset is not None:
        return buffer
    index = buffer.shape[0].dtype if buffer.shape else "int32"
    offset = tir.Var(f"{buffer.name}_elem_offset", index, span=node.span)
    return dataclasses.replace(buffer, elem_offset=offset)


def _is_none(node: syntax.Node) -> bool:
    return isinstance(node, syntax.Constant) and node.value is None

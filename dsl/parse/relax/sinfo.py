"""Struct-info annotations of Relax functions (`R.Tensor((n, 16), "float32")`, ...)
and the symbolic shape variables they introduce.

Kept apart from expression parsing because signatures are parsed in the module's
first pass, before any body: calls to a function need its signature, and forward
references must work.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from tvmlite.dsl import dtype as dt
from tvmlite.dsl import relax, tir
from tvmlite.dsl.metadata import ConstantTable
from tvmlite.dsl.parse.scope import ParseContext, Scope, bind_call
from tvmlite.dsl.parse.tir.func import parse_tir_expr
from tvmlite.grammar import parse_expression, syntax


@dataclass
class RelaxContext(ParseContext):
    """A `ParseContext` that also knows every module function's signature, so a
    call `cls.f(x)` can be typed before `f`'s body has been parsed."""

    signatures: dict[str, relax.FuncStructInfo] = field(default_factory=dict)
    constants: ConstantTable | None = None  # what `metadata["KEY"][i]` reads


def check_dtype(ctx: ParseContext, node: syntax.Node) -> str:
    """A dtype written as a string literal; anything else is a located error."""
    if not isinstance(node, syntax.Constant) or not isinstance(node.value, str):
        raise ctx.error('expected a dtype string such as "float32"', node)
    if not dt.is_valid(node.value):
        raise ctx.error(dt.unknown(node.value), node)
    return node.value


def int_literal(ctx: ParseContext, node: syntax.Node, what: str) -> int:
    """An integer literal, possibly negated (`-1`)."""
    sign = 1
    if isinstance(node, syntax.UnaryOp) and node.op == "-":
        sign, node = -1, node.operand
    if isinstance(node, syntax.Constant) and type(node.value) is int:
        return sign * node.value
    raise ctx.error(f"{what} must be an integer literal", node)


def bool_literal(ctx: ParseContext, node: syntax.Node, what: str) -> bool:
    if isinstance(node, syntax.Constant) and isinstance(node.value, bool):
        return node.value
    raise ctx.error(f"{what} must be True or False", node)


def names_in(node: syntax.Node) -> list[syntax.Name]:
    """Every `Name` under `node`, found without recursion (input may nest deeply)."""
    found: list[syntax.Name] = []
    stack: list[object] = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, syntax.Name):
            found.append(item)
        elif isinstance(item, syntax.Attribute):
            continue  # `T.int64` names a namespace member, not a variable
        elif isinstance(item, syntax.Node):
            stack.extend(getattr(item, name) for name in item.__dataclass_fields__)
        elif isinstance(item, tuple):
            stack.extend(item)
    return found


def literal_value(node: syntax.Node, ctx: ParseContext) -> Any:
    """Attribute values (`R.func_attr`, `I.module_attrs`): Python literals, lists
    as tuples, dicts as dicts, and TIR constants such as `T.int64(4)`."""
    ctx.nest(node)
    value = _literal_value(node, ctx)
    ctx.depth -= 1
    return value


def _literal_value(node: syntax.Node, ctx: ParseContext) -> Any:
    if isinstance(node, syntax.Constant):
        return node.value
    if isinstance(node, syntax.UnaryOp) and node.op == "-":
        inner = literal_value(node.operand, ctx)
        if isinstance(inner, (int, float)) and not isinstance(inner, bool):
            return -inner
    if isinstance(node, (syntax.List, syntax.Tuple)):
        return tuple(literal_value(e, ctx) for e in node.elts)
    if isinstance(node, syntax.Dict):
        keys = [literal_value(k, ctx) for k in node.keys]
        for key, knode in zip(keys, node.keys, strict=False):
            if not isinstance(key, (str, int, bool)) and key is not None:
                raise ctx.error("dictionary keys must be strings or numbers", knode)
        return dict(zip(keys, (literal_value(v, ctx) for v in node.values), strict=False))
    if isinstance(node, syntax.Call) and (syntax.dotted(node.func) or "").startswith("T."):
        return parse_tir_expr(node, Scope(), ctx)
    raise ctx.error("expected a literal value (number, string, list or dict)", node)


class SinfoParser:
    """Parses struct-info annotations within one function. `sym` holds the
    function's symbolic int64 shape variables (one frame: they are function-wide);
    `vars` holds its Relax names."""

    def __init__(self, ctx: RelaxContext) -> None:
        self.ctx = ctx
        self.sym = Scope()
        self.vars = Scope()

    # ------------------------------------------------------------ symbolic dims

    def sym_var(self, name: str, dtype: str = "int64", span: object = None) -> tir.Var:
        """The function's symbolic variable `name`, created on first mention."""
        found = self.sym.lookup(name)
        if isinstance(found, tir.Var):
            return found
        var = tir.Var(name, dtype, span=span)
        self.sym.define(name, var)
        return var

    def prim(self, node: syntax.Node, declare: bool = False, dtype: str = "int64") -> tir.PrimExpr:
        """A shape dimension or other scalar. Module-level TypeVars get a fresh var
        per function on first use; with `declare` (classic string dims such as
        `"n"`) any free name becomes a new int64 variable."""
        if type(node) is syntax.Constant and type(node.value) is int and dtype == "int64":
            # The common literal dim, built as `parse_tir_expr` would build it.
            return tir.IntImm("int64", node.value, node.span)
        for name in names_in(node):
            if self.sym.lookup(name.id) is not None:
                continue
            if name.id in self.ctx.type_vars or declare:
                self.sym_var(name.id, span=name.span)
        return parse_tir_expr(node, self.sym, self.ctx, expected_dtype=dtype)

    def shape_dim(self, node: syntax.Node) -> tir.PrimExpr:
        if isinstance(node, syntax.Constant):
            value = node.value
            if type(value) is int:
                return tir.IntImm("int64", value, node.span)
            if isinstance(value, str):
                return self.prim(parse_expression(value, node.span), declare=True)
        return self.shape_value(node)

    def shape_value(self, node: syntax.Node) -> tir.PrimExpr:
        """An entry of a shape (`R.shape([...])`, an op's shape argument): an integer
        expression. A float literal is refused before it becomes a float32 (that
        1e308 would overflow); the node checks the rest."""
        if isinstance(node, syntax.Constant) and isinstance(node.value, float):
            raise self.ctx.error(f"a shape dimension must be an integer, got {node.value!r}", node)
        return self.prim(node)

    def shape_dims(self, node: syntax.Node, what: str) -> tuple[tir.PrimExpr, ...]:
        if not isinstance(node, (syntax.Tuple, syntax.List)):
            raise self.ctx.error(f"{what} must be a tuple or list of dimensions", node)
        shape_dim = self.shape_dim
        return tuple([shape_dim(elt) for elt in node.elts])

    # ------------------------------------------------------------ annotations

    def sinfo(self, node: syntax.Node) -> relax.StructInfo:
        """The struct info an annotation node denotes."""
        ctx = self.ctx
        ctx.nest(node, "struct info")
        sinfo = self._sinfo(node)
        ctx.depth -= 1
        return sinfo

    def _sinfo(self, node: syntax.Node) -> relax.StructInfo:
        if isinstance(node, syntax.Call):
            name = syntax.dotted(node.func)
            call = node
        elif isinstance(node, (syntax.Attribute, syntax.Name)):
            name = syntax.dotted(node)
            call = syntax.Call(node, (), (), span=node.span)
        elif isinstance(node, syntax.Tuple):
            return relax.TupleStructInfo(tuple(self.sinfo(e) for e in node.elts), span=node.span)
        elif isinstance(node, syntax.Subscript) and syntax.dotted(node.value) == "R.Tensor":
            raise self.ctx.error(
                'R.Tensor[...] is the pre-0.12 spelling; write R.Tensor((...), "dtype")', node
            )
        else:
            raise self.ctx.error("expected a struct-info annotation such as R.Tensor(...)", node)
        handler = self._FORMS.get(name or "")
        if handler is not None:
            return handler(self, call)
        if name and name.startswith("T.") and dt.is_valid(name[2:]) and call.func is node:
            return relax.PrimStructInfo(name[2:], span=node.span)
        if name in UNSUPPORTED_SINFO:
            raise self.ctx.error(f"{name} is not supported", node)
        raise self.ctx.error(f"unknown struct-info annotation {name or 'expression'}", node)

    def _tensor(self, call: syntax.Call) -> relax.StructInfo:
        args = bind_call(self.ctx, call, "R.Tensor", ("shape", "dtype", "vdevice", "ndim"))
        shape_node, dtype_node = args.get("shape"), args.get("dtype")
        if (
            isinstance(shape_node, syntax.Constant)
            and isinstance(shape_node.value, str)
            and dtype_node is None
        ):
            shape_node, dtype_node = None, shape_node  # R.Tensor("float32", ndim=2)
        dtype = "void"
        if dtype_node is not None and not _is_none(dtype_node):
            dtype = check_dtype(self.ctx, dtype_node)
        ndim = int_literal(self.ctx, args["ndim"], "ndim") if "ndim" in args else -1
        vdevice = None
        if "vdevice" in args and not _is_none(args["vdevice"]):
            vnode = args["vdevice"]
            if not isinstance(vnode, syntax.Constant) or not isinstance(vnode.value, str):
                raise self.ctx.error('vdevice must be a string such as "llvm:0"', vnode)
            vdevice = vnode.value
        shape: tuple[tir.PrimExpr, ...] | relax.Var | None = None
        if shape_node is not None and not _is_none(shape_node):
            if isinstance(shape_node, syntax.Name):
                shape = self._shape_var(shape_node)
            else:
                shape = self.shape_dims(shape_node, "the shape of R.Tensor")
                if ndim not in (-1, len(shape)):
                    raise self.ctx.error(
                        f"R.Tensor has a shape of rank {len(shape)} but ndim={ndim}", args["ndim"]
                    )
                ndim = len(shape)
        if ndim < -1:
            raise self.ctx.error("ndim must be -1 (unknown) or a rank >= 0", args["ndim"])
        return relax.TensorStructInfo(shape, dtype, ndim, vdevice, call.span)

    def _dtensor(self, call: syntax.Call) -> relax.StructInfo:
        names = ("shape", "dtype", "device_mesh", "placement")
        args = bind_call(self.ctx, call, "R.DTensor", names, required=4)
        shape = self.shape_dims(args["shape"], "the shape of R.DTensor")
        dtype = check_dtype(self.ctx, args["dtype"])
        mesh, placement = (self._text_arg(args[k], k) for k in ("device_mesh", "placement"))
        return relax.DTensorStructInfo(
            shape, dtype, len(shape), None, call.span, device_mesh=mesh, placement=placement
        )

    def _text_arg(self, node: syntax.Node, name: str) -> str:
        if not isinstance(node, syntax.Constant) or not isinstance(node.value, str):
            raise self.ctx.error(f"{name} must be a string", node)
        return node.value

    def _shape_var(self, node: syntax.Name) -> relax.Var:
        var = self.vars.lookup(node.id)
        if isinstance(var, relax.Var) and isinstance(var.struct_info, relax.ShapeStructInfo):
            return var
        raise self.ctx.error(
            f"{node.id} is not a shape variable; write the dimensions as a tuple", node
        )

    def _shape(self, call: syntax.Call) -> relax.StructInfo:
        args = bind_call(self.ctx, call, "R.Shape", ("values", "ndim"))
        ndim = int_literal(self.ctx, args["ndim"], "ndim") if "ndim" in args else -1
        if "values" in args and not _is_none(args["values"]):
            values = self.shape_dims(args["values"], "the values of R.Shape")
            if ndim not in (-1, len(values)):
                raise self.ctx.error(
                    f"R.Shape has {len(values)} values but ndim={ndim}", args["ndim"]
                )
            return relax.ShapeStructInfo(values, len(values), span=call.span)
        return relax.ShapeStructInfo(None, ndim, span=call.span)

    def _tuple(self, call: syntax.Call) -> relax.StructInfo:
        if call.keywords:
            raise self.ctx.error("R.Tuple takes no keyword arguments", call.keywords[0])
        elts = call.args
        if len(elts) == 1 and isinstance(elts[0], (syntax.List, syntax.Tuple)):
            elts = elts[0].elts
        return relax.TupleStructInfo(tuple(self.sinfo(e) for e in elts), span=call.span)

    def _object(self, call: syntax.Call) -> relax.StructInfo:
        bind_call(self.ctx, call, syntax.dotted(call.func) or "R.Object", ())
        return relax.ObjectStructInfo(span=call.span)

    def _string(self, call: syntax.Call) -> relax.StructInfo:
        bind_call(self.ctx, call, "I.StringType", ())
        return relax.StringStructInfo(span=call.span)

    def _prim(self, call: syntax.Call) -> relax.StructInfo:
        args = bind_call(self.ctx, call, "R.Prim", ("dtype", "value"))
        dtype = check_dtype(self.ctx, args["dtype"]) if "dtype" in args else None
        if "value" in args:
            vnode = args["value"]
            if isinstance(vnode, syntax.Constant) and isinstance(vnode.value, str):
                value = self.shape_dim(vnode)
            else:
                value = self.prim(vnode, dtype=dtype or "int64")
            return relax.PrimStructInfo(dtype or value.dtype, value, span=call.span)
        if dtype is None:
            raise self.ctx.error("R.Prim needs a dtype or a value", call)
        return relax.PrimStructInfo(dtype, span=call.span)

    def _callable(self, call: syntax.Call) -> relax.StructInfo:
        args = bind_call(self.ctx, call, "R.Callable", ("params", "ret", "purity"))
        params = None
        pnode = args.get("params")
        if pnode is not None and not _is_none(pnode):
            if not isinstance(pnode, (syntax.Tuple, syntax.List)):
                raise self.ctx.error("the params of R.Callable must be a tuple", pnode)
            params = tuple(self.sinfo(e) for e in pnode.elts)
        ret = self.sinfo(args["ret"]) if "ret" in args else relax.ObjectStructInfo()
        # TVM's default: an opaque callable may be impure, one with a signature is pure
        default = params is not None
        purity = bool_literal(self.ctx, args["purity"], "purity") if "purity" in args else default
        return relax.FuncStructInfo(params, ret, purity, span=call.span)

    _FORMS: ClassVar[dict[str, Callable[..., relax.StructInfo]]] = {
        "R.Tensor": _tensor,
        "R.DTensor": _dtensor,
        "R.Shape": _shape,
        "R.Tuple": _tuple,
        "R.Object": _object,
        "R.Any": _object,
        "R.Prim": _prim,
        "R.Callable": _callable,
        "I.StringType": _string,
    }


UNSUPPORTED_SINFO = ("R.PackedFunc",)


def sinfo_forms() -> tuple[str, ...]:
    """The names a struct-info annotation may call (`R.Tensor`, `R.Shape`, ...)."""
    return tuple(SinfoParser._FORMS)


def _is_none(node: syntax.Node) -> bool:
    return isinstance(node, syntax.Constant) and node.value is None

"""The Relax call forms the operator registry does not own: `R.call_tir` and its
in-place variant, the packed calls, and the small value constructors (`R.const`,
`R.shape`, `R.prim_value`, `R.str`, ...), plus `R.print` and `R.assert_op`.

Represented as docs/frontend-contracts.md says: call_tir is
`Call(Op("relax.call_tir"), (GlobalVar, Tuple(args)[, ShapeExpr]), sinfo_args=(out,))`,
a packed call is `Call(ExternFunc(sym), args, sinfo_args=...)`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from tvmlite.dsl import dtype as dt
from tvmlite.dsl import relax, tir
from tvmlite.grammar import syntax

if TYPE_CHECKING:  # expr.py builds this parser: a runtime import would be a cycle
    from tvmlite.dsl.parse.relax.expr import RelaxExprParser, Value
from tvmlite.dsl.module import TVM027
from tvmlite.dsl.parse.relax.sinfo import check_dtype, int_literal, literal_value
from tvmlite.dsl.parse.scope import bind_call

_NP_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
              "float16", "float32", "float64")  # fmt: skip


class RelaxCallParser:
    """The special call forms, for the expression parser that holds it (`expr`):
    arguments are parsed and results typed through it."""

    def __init__(self, expr: RelaxExprParser) -> None:
        self.expr = expr
        self.ctx = expr.ctx
        self.types = expr.types

    # ------------------------------------------------------------ special call forms

    def out_sinfo(self, args: dict[str, syntax.Node], name: str, node: syntax.Call) -> tuple:
        """`out_sinfo=` (classic) or `out_ty=` (0.27): one struct info or a list."""
        if "out_sinfo" in args and "out_ty" in args:
            raise self.ctx.error(f"{name} takes out_sinfo= or out_ty=, not both", node)
        out = args.get("out_sinfo") or args.get("out_ty")
        if out is None:
            kw = "out_ty" if self.ctx.dialect == TVM027 else "out_sinfo"
            raise self.ctx.error(f"{name} needs {kw}=", node)
        if isinstance(out, (syntax.List, syntax.Tuple)):
            fields = tuple(self.types.sinfo(e) for e in out.elts)
            if len(fields) == 1:
                return fields
            return (relax.TupleStructInfo(fields, span=out.span),)
        return (self.types.sinfo(out),)

    def sinfo_args(self, node: syntax.Call, name: str) -> tuple[tuple, dict[str, syntax.Node]]:
        """`sinfo_args=` (classic) / `ty_args=` (0.27) of packed calls, and the
        remaining keywords. A 0.27 module must not use `sinfo_args=`: TVM 0.27
        silently stores it as an attribute and types the result `R.Any`."""
        rest = {kw.name: kw.value for kw in node.keywords}
        if "sinfo_args" in rest and "ty_args" in rest:
            raise self.ctx.error(f"{name} takes sinfo_args= or ty_args=, not both", node)
        if "sinfo_args" in rest and self.ctx.dialect == TVM027:
            kw = next(k for k in node.keywords if k.name == "sinfo_args")
            raise self.ctx.error(
                f"{name} spells its result type ty_args= in TVM 0.27 (sinfo_args= is the "
                "classic spelling, which TVM 0.27 silently misreads)",
                kw,
            )
        out = rest.pop("sinfo_args", None) or rest.pop("ty_args", None)
        rest.pop("attrs_type_key", None)
        if out is None:
            return (), rest
        if isinstance(out, (syntax.List, syntax.Tuple)):
            return tuple(self.types.sinfo(e) for e in out.elts), rest
        return (self.types.sinfo(out),), rest

    def args_tuple(self, node: syntax.Node) -> relax.Expr:
        """The argument tuple of call_tir-style calls: a tuple literal, `R.tuple()`,
        a var holding a tuple (kept, as TVM keeps it), or a single value (which TVM
        wraps in a tuple)."""
        if isinstance(node, (syntax.Tuple, syntax.List)):
            return relax.Tuple(tuple(self.expr.arg(e) for e in node.elts), span=node.span)
        value = self.expr.arg(node)
        if isinstance(value, relax.Tuple):
            return value
        if isinstance(value, relax.Var) and isinstance(value.struct_info, relax.TupleStructInfo):
            return value
        return relax.Tuple((value,), span=node.span)

    def prim_func_ref(self, node: syntax.Node, name: str) -> relax.GlobalVar:
        callee = self.expr.callee(node)
        if not isinstance(callee, relax.GlobalVar):
            raise self.ctx.error(f"{name} needs a prim function of the module (cls.f)", node)
        kind = self.ctx.global_names.get(callee.name)
        if kind is not None and kind != "prim":
            what = {"relax": "a Relax function", "extern": "an extern function"}
            raise self.ctx.error(
                f"{name} calls a prim function, but {callee.name} is "
                f"{what.get(kind or '', 'not defined in the module')}",
                node,
            )
        return callee

    def packed_callee(self, node: syntax.Node, name: str) -> relax.Expr:
        if isinstance(node, syntax.Constant) and isinstance(node.value, str):
            return relax.ExternFunc(node.value, span=node.span)
        callee = self.expr.value(node)
        if isinstance(callee, (relax.GlobalVar, relax.Var, relax.ExternFunc)):
            return callee
        raise self.ctx.error(f'{name} needs a function name string such as "vm.builtin.f"', node)

    def tir_vars(self, node: syntax.Node) -> relax.Expr:
        if isinstance(node, (syntax.List, syntax.Tuple)):
            return relax.ShapeExpr(
                tuple(self.types.shape_value(e) for e in node.elts), span=node.span
            )
        return self.expr.arg(node)

    def _call_tir(self, node: syntax.Call) -> relax.Call:
        params = ("gvar", "args", "out_sinfo", "tir_vars", "out_ty")
        args = bind_call(self.ctx, node, "R.call_tir", params, required=2)
        return self._tir_call("relax.call_tir", "R.call_tir", args, node, ())

    def _dist_call_tir(self, node: syntax.Call) -> relax.Call:
        """`R.dist.call_tir` / `R.dist.call_tir_local_view`: call_tir's arguments."""
        name = syntax.dotted(node.func) or ""
        params = ("gvar", "args", "out_sinfo", "tir_vars", "out_ty")
        args = bind_call(self.ctx, node, name, params, required=2)
        return self._tir_call("relax." + name[2:], name, args, node, ())

    def _call_tir_inplace(self, node: syntax.Call) -> relax.Call:
        params = ("gvar", "args", "inplace_indices", "out_sinfo", "tir_vars", "out_ty")
        args = bind_call(self.ctx, node, "R.call_tir_inplace", params, required=3)
        attrs = (("inplace_indices", self.indices(args["inplace_indices"])),)
        return self._tir_call("relax.call_tir_inplace", "R.call_tir_inplace", args, node, attrs)

    def _call_tir_with_grad(self, node: syntax.Call) -> relax.Call:
        """call_tir with the name (and keyword arguments) of the TE gradient function
        that TVM's Gradient pass calls."""
        name = "R.call_tir_with_grad"
        params = ("gvar", "args", "out_sinfo", "te_grad_name", "te_grad_kwargs", "out_ty")
        args = bind_call(self.ctx, node, name, params, required=2)
        if "te_grad_name" not in args:
            raise self.ctx.error(f"{name} needs te_grad_name=", node)
        grad_name = literal_value(args["te_grad_name"], self.ctx)
        if not isinstance(grad_name, str):
            raise self.ctx.error("te_grad_name must be a string", args["te_grad_name"])
        kwargs = literal_value(args["te_grad_kwargs"], self.ctx) if "te_grad_kwargs" in args else {}
        if not isinstance(kwargs, dict):
            raise self.ctx.error("te_grad_kwargs must be a dict", args["te_grad_kwargs"])
        attrs = (("te_grad_name", grad_name), ("te_grad_kwargs", kwargs))
        return self._tir_call("relax.call_tir_with_grad", name, args, node, attrs)

    def indices(self, node: syntax.Node) -> tuple[int, ...]:
        if isinstance(node, (syntax.List, syntax.Tuple)):
            return tuple(int_literal(self.ctx, e, "an index") for e in node.elts)
        return (int_literal(self.ctx, node, "an index"),)

    def _tir_call(
        self, op: str, name: str, args: dict, node: syntax.Call, attrs: tuple
    ) -> relax.Call:
        gv = self.prim_func_ref(args["gvar"], name)
        call_args = [gv, self.args_tuple(args["args"])]
        out = self.out_sinfo(args, name, node)
        if "tir_vars" in args and not _is_none(args["tir_vars"]):
            call_args.append(self.tir_vars(args["tir_vars"]))
        call = relax.Call(relax.Op(op), tuple(call_args), attrs, out, span=node.span)
        return self.expr.typed(call, out[0])

    def _call_dps_packed(self, node: syntax.Call) -> relax.Call:
        params = ("func", "args", "out_sinfo", "out_ty")
        args = bind_call(self.ctx, node, "R.call_dps_packed", params, required=2)
        callee = self.packed_callee(args["func"], "R.call_dps_packed")
        out = self.out_sinfo(args, "R.call_dps_packed", node)
        call_args = (callee, self.args_tuple(args["args"]))
        call = relax.Call(relax.Op("relax.call_dps_packed"), call_args, (), out, span=node.span)
        return self.expr.typed(call, out[0])

    def _packed(self, node: syntax.Call, name: str) -> tuple[relax.Expr, tuple, tuple, dict]:
        if not node.args:
            raise self.ctx.error(f"{name} needs the name of the function to call", node)
        callee = self.packed_callee(node.args[0], name)
        args = tuple(self.expr.arg(a) for a in node.args[1:])
        out, rest = self.sinfo_args(node, name)
        return callee, args, out, rest

    def _attr_pairs(self, rest: dict[str, syntax.Node]) -> tuple[tuple[str, Any], ...]:
        return tuple((key, self.expr.op_arg(value)) for key, value in rest.items())

    def _call_packed(self, node: syntax.Call) -> relax.Call:
        callee, args, out, rest = self._packed(node, "R.call_packed")
        call = relax.Call(callee, args, self._attr_pairs(rest), out, span=node.span)
        if not out:  # the result is unknown to the IR: the binding's annotation says it
            return self.expr.typed(call, relax.ObjectStructInfo())
        return self.expr.typed(call, out[0] if len(out) == 1 else relax.TupleStructInfo(out))

    def _call_pure_packed(self, node: syntax.Call) -> relax.Call:
        return self._op_packed(node, "R.call_pure_packed", "relax.call_pure_packed")

    def _call_inplace_packed(self, node: syntax.Call) -> relax.Call:
        return self._op_packed(node, "R.call_inplace_packed", "relax.call_inplace_packed")

    def _op_packed(self, node: syntax.Call, name: str, op: str) -> relax.Call:
        callee, args, out, rest = self._packed(node, name)
        if not out:
            kw = "ty_args" if self.ctx.dialect == TVM027 else "sinfo_args"
            raise self.ctx.error(f"{name} needs {kw}=", node)
        attrs: tuple[tuple[str, Any], ...] = ()
        if "inplace_indices" in rest:
            attrs = (("inplace_indices", self.indices(rest.pop("inplace_indices"))),)
        if rest:
            raise self.ctx.error(f"{name} got an unexpected keyword argument '{next(iter(rest))}'",
                                 node)  # fmt: skip
        call = relax.Call(relax.Op(op), (callee, *args), attrs, out, span=node.span)
        return self.expr.typed(call, out[0] if len(out) == 1 else relax.TupleStructInfo(out))

    def _callee_and_tuple(self, node: syntax.Call) -> relax.Call:
        """`R.call_builtin_with_ctx("f", (args,), ty_args=...)`,
        `R.invoke_closure(clo, (args,), ty_args=...)` (its pure variant too) and
        `R.call_py_func(R.str("f"), (args,), ty_args=...)`."""
        name = syntax.dotted(node.func) or ""
        if len(node.args) != 2:
            raise self.ctx.error(f"{name} takes a function and an argument tuple", node)
        if name == "R.call_py_func":
            callee = self.expr.arg(node.args[0])
            if not isinstance(callee, relax.StringImm):
                raise self.ctx.error('R.call_py_func needs a name such as R.str("f")', node.args[0])
        else:
            callee = self.packed_callee(node.args[0], name)
        out, rest = self.sinfo_args(node, name)
        if rest:
            raise self.ctx.error(f"{name} got an unexpected keyword argument '{next(iter(rest))}'",
                                 node)  # fmt: skip
        call_args = (callee, self.args_tuple(node.args[1]))
        call = relax.Call(relax.Op("relax." + name[2:]), call_args, (), out,
                          span=node.span)  # fmt: skip
        return self.expr.typed(call, out[0] if len(out) == 1 else relax.ObjectStructInfo())

    def _const(self, node: syntax.Call) -> relax.Constant:
        args = bind_call(self.ctx, node, "R.const", ("value", "dtype"), required=1)
        value = self._const_value(args["value"])
        if "dtype" in args and not _is_none(args["dtype"]):
            dtype = check_dtype(self.ctx, args["dtype"])
        else:
            flat = np.asarray(value)
            dtype = {"b": "bool", "i": "int32"}.get(flat.dtype.kind, "float32")
        data = self._const_data("R.const", value, dtype, args.get("dtype", node), args["value"])
        return relax.Constant(data, span=node.span)

    def _dist_const(self, node: syntax.Call) -> relax.Constant:
        """`R.dist.const(1.0, R.DTensor((), "float32", "mesh[0]", "R"))`: a constant
        placed on a device mesh; its dtype and shape are the annotation's."""
        name = "R.dist.const"
        args = bind_call(self.ctx, node, name, ("value", "struct_info"), required=2)
        sinfo = self.types.sinfo(args["struct_info"])
        if not isinstance(sinfo, relax.DTensorStructInfo) or not isinstance(sinfo.shape, tuple):
            raise self.ctx.error(f"{name} needs an R.DTensor with a shape", args["struct_info"])
        value = self._const_value(args["value"])
        data = self._const_data(name, value, sinfo.dtype, args["struct_info"], args["value"])
        if data.shape != tuple(int(getattr(d, "value", -1)) for d in sinfo.shape):
            raise self.ctx.error(
                f"{name}: the value has shape {data.shape}, its R.DTensor another",
                args["struct_info"],
            )
        return relax.Constant(data, span=node.span, struct_info=sinfo)

    def _const_data(
        self, name: str, value: Any, dtype: str, dtype_node: syntax.Node, value_node: syntax.Node
    ) -> np.ndarray:
        if dtype not in _NP_DTYPES:
            raise self.ctx.error(f"{name} does not support dtype '{dtype}'", dtype_node)
        for number in _numbers(value):  # as T.int32(0.5) or T.float16(1e10) would be
            problem = dt.range_error(dtype, number)
            if problem is not None:
                raise self.ctx.error(f"{name}: {problem}", value_node)
        try:
            return np.array(value, dtype=dtype)
        except (ValueError, OverflowError) as exc:
            raise self.ctx.error(
                f"{name} cannot hold this value as {dtype}: {exc}", value_node
            ) from None

    def _const_value(self, node: syntax.Node) -> Any:
        if isinstance(node, (syntax.List, syntax.Tuple)):
            self.ctx.nest(node)
            values = [self._const_value(e) for e in node.elts]
            self.ctx.depth -= 1
            return values
        value = self.expr.value(node)
        if isinstance(value, (tir.IntImm, tir.FloatImm)):
            return value.value
        if isinstance(value, (bool, int, float)):
            return value
        if isinstance(value, str) and value in ("inf", "-inf", "nan"):
            return float(value)  # TVM prints infinite and NaN scalars quoted
        raise self.ctx.error("R.const needs a number, a bool or a nested list of them", node)

    def _shape(self, node: syntax.Call) -> relax.ShapeExpr:
        args = bind_call(self.ctx, node, "R.shape", ("value",), required=1)
        values = args["value"]
        if not isinstance(values, (syntax.List, syntax.Tuple)):
            raise self.ctx.error("R.shape takes a list of dimensions", values)
        return relax.ShapeExpr(
            tuple([self.types.shape_value(e) for e in values.elts]), span=node.span
        )

    def _tuple_call(self, node: syntax.Call) -> relax.Tuple:
        if node.keywords:
            raise self.ctx.error("R.tuple takes no keyword arguments", node.keywords[0])
        return relax.Tuple(tuple(self.expr.arg(a) for a in node.args), span=node.span)

    def _prim_value(self, node: syntax.Call) -> relax.PrimValue:
        args = bind_call(self.ctx, node, "R.prim_value", ("value",), required=1)
        value = self.expr.value(args["value"])
        if isinstance(value, bool):
            value = tir.IntImm("bool", int(value))
        elif isinstance(value, int):
            value = tir.IntImm("int64", value)
        elif isinstance(value, float):
            value = tir.FloatImm("float64", value)
        if not isinstance(value, tir.PrimExpr):
            raise self.ctx.error("R.prim_value needs a scalar such as T.int64(4)", args["value"])
        return relax.PrimValue(value, span=node.span)

    def _string(self, node: syntax.Call, name: str) -> str:
        args = bind_call(self.ctx, node, name, ("value",), required=1)
        value = args["value"]
        if not isinstance(value, syntax.Constant) or not isinstance(value.value, str):
            raise self.ctx.error(f"{name} takes a string literal", value)
        return value.value

    def _str(self, node: syntax.Call) -> relax.StringImm:
        return relax.StringImm(self._string(node, "R.str"), span=node.span)

    def _dtype(self, node: syntax.Call) -> relax.DataTypeImm:
        args = bind_call(self.ctx, node, "R.dtype", ("value",), required=1)
        return relax.DataTypeImm(check_dtype(self.ctx, args["value"]), span=node.span)

    def _extern_func(self, node: syntax.Call) -> relax.ExternFunc:
        return relax.ExternFunc(self._string(node, "R.ExternFunc"), span=node.span)

    def _null_value(self, node: syntax.Call) -> relax.Call:
        bind_call(self.ctx, node, "R.null_value", ())
        call = relax.Call(relax.Op("relax.null_value"), (), span=node.span)
        return self.expr.typed(call, relax.ObjectStructInfo())

    def _format(self, node: syntax.Node | None) -> relax.Expr:
        if node is None:
            return relax.StringImm("")
        value = self.expr.value(node)
        if isinstance(value, str):
            return relax.StringImm(value, span=node.span)
        if isinstance(value, relax.StringImm):
            return value
        raise self.ctx.error('format must be a string or R.str("...")', node)

    def _print(self, node: syntax.Call) -> relax.Call:
        fmt = None
        for kw in node.keywords:
            if kw.name != "format":
                raise self.ctx.error(f"R.print got an unexpected keyword argument '{kw.name}'",
                                     kw)  # fmt: skip
            fmt = kw.value
        values = tuple(self.expr.arg(a) for a in node.args)
        call = relax.Call(relax.Op("relax.print"), (self._format(fmt), *values), span=node.span)
        return self.expr.typed(call, relax.TupleStructInfo(()))

    def _hint_on_device(self, node: syntax.Call) -> relax.Call:
        """`R.hint_on_device(x, R.device(device_type=1, index=0), "global")`, as TVM
        prints it; the device's fields become the call's attributes."""
        params = ("data", "dst_vdevice", "memory_scope")
        args = bind_call(self.ctx, node, "R.hint_on_device", params, required=2)
        kwargs = self._device(args["dst_vdevice"])
        if "memory_scope" in args:
            kwargs["memory_scope"] = self.expr.op_arg(args["memory_scope"])
        return self.expr.op_call(
            "relax.hint_on_device", [self.expr.op_arg(args["data"])], kwargs, node
        )

    def _device(self, device: syntax.Node) -> dict[str, Any]:
        """`R.device(device_type=2, index=0)`, or TVM's shorthand `R.cuda(0)` of it."""
        name = syntax.dotted(device.func) if isinstance(device, syntax.Call) else None
        kind = (name or "")[2:]
        if name == "R.device":
            fields = bind_call(self.ctx, device, name, ("device_type", "index"), required=2)
            return {k: self.expr.op_arg(v) for k, v in fields.items()}
        if name is None or not name.startswith("R.") or kind not in DEVICE_TYPES:
            raise self.ctx.error("expected R.device(device_type=..., index=...)", device)
        index = bind_call(self.ctx, device, name, ("dev_id",)).get("dev_id")
        code = syntax.Constant(DEVICE_TYPES[kind], span=device.span)
        dev_id = index if index is not None else syntax.Constant(0, span=device.span)
        return {"device_type": self.expr.op_arg(code), "index": self.expr.op_arg(dev_id)}

    def _assert_op(self, node: syntax.Call) -> relax.Call:
        if {kw.name for kw in node.keywords} == {"format"} and len(node.args) > 2:
            # TVM prints every format value positionally: `R.assert_op(c, x, y, format=...)`
            cond, fmt, value_nodes = node.args[0], node.keywords[0].value, list(node.args[1:])
        else:
            params = ("condition", "format_args", "format")
            args = bind_call(self.ctx, node, "R.assert_op", params, required=1)
            cond, fmt, value_nodes = args["condition"], args.get("format"), []
            fa = args.get("format_args")
            if fa is not None and not _is_none(fa):
                value_nodes = list(fa.elts) if isinstance(fa, (syntax.List, syntax.Tuple)) else [fa]
        condition = self.expr.arg(cond)
        values = tuple(self.expr.arg(e) for e in value_nodes)
        call_args = (condition, self._format(fmt), *values)
        call = relax.Call(relax.Op("relax.assert_op"), call_args, span=node.span)
        return self.expr.typed(call, relax.TupleStructInfo(()))

    def _statement_only(self, node: syntax.Call) -> Value:
        name = syntax.dotted(node.func)
        raise self.ctx.error(f"{name}(...) is a statement, not a value", node)

    def _match_cast_value(self, node: syntax.Call) -> Value:
        raise self.ctx.error(
            "R.match_cast must be the whole right-hand side of a binding (x = R.match_cast(...))",
            node,
        )


# Callee name -> call form; `RelaxExprParser` dispatches `R.*` calls here first.
# TVM's shorthands of `R.device(...)` and the DLPack device type each names
DEVICE_TYPES = {
    "cpu": 1, "cuda": 2, "opencl": 4, "vulkan": 7, "metal": 8, "vpi": 9, "rocm": 10,
    "ext_dev": 12, "webgpu": 15, "hexagon": 16,
}  # fmt: skip

SPECIAL_CALLS: dict[str, Callable[[RelaxCallParser, syntax.Call], Value]] = {
    "R.call_tir": RelaxCallParser._call_tir,
    "R.call_tir_inplace": RelaxCallParser._call_tir_inplace,
    "R.call_tir_with_grad": RelaxCallParser._call_tir_with_grad,
    "R.dist.call_tir": RelaxCallParser._dist_call_tir,
    "R.dist.call_tir_local_view": RelaxCallParser._dist_call_tir,
    "R.call_dps_packed": RelaxCallParser._call_dps_packed,
    "R.call_packed": RelaxCallParser._call_packed,
    "R.call_pure_packed": RelaxCallParser._call_pure_packed,
    "R.call_inplace_packed": RelaxCallParser._call_inplace_packed,
    "R.call_builtin_with_ctx": RelaxCallParser._callee_and_tuple,
    "R.call_py_func": RelaxCallParser._callee_and_tuple,
    "R.invoke_closure": RelaxCallParser._callee_and_tuple,
    "R.invoke_pure_closure": RelaxCallParser._callee_and_tuple,
    "R.const": RelaxCallParser._const,
    "R.dist.const": RelaxCallParser._dist_const,
    "R.shape": RelaxCallParser._shape,
    "R.tuple": RelaxCallParser._tuple_call,
    "R.prim_value": RelaxCallParser._prim_value,
    "R.str": RelaxCallParser._str,
    "R.dtype": RelaxCallParser._dtype,
    "R.ExternFunc": RelaxCallParser._extern_func,
    "R.extern": RelaxCallParser._extern_func,
    "R.null_value": RelaxCallParser._null_value,
    "R.print": RelaxCallParser._print,
    "R.assert_op": RelaxCallParser._assert_op,
    "R.hint_on_device": RelaxCallParser._hint_on_device,
    "R.match_cast": RelaxCallParser._match_cast_value,
    "R.output": RelaxCallParser._statement_only,
    "R.func_attr": RelaxCallParser._statement_only,
    "R.dataflow": RelaxCallParser._statement_only,
}


def _is_none(node: syntax.Node) -> bool:
    return isinstance(node, syntax.Constant) and node.value is None


def _numbers(value: Any) -> Iterator[float]:
    """The numbers of an `R.const` value (nested lists of numbers)."""
    if isinstance(value, list):
        for item in value:
            yield from _numbers(item)
    else:
        yield value

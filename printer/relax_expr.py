"""Relax expressions, calls, struct info and attribute values as TVMScript text.

Mirrors TVM's relax printer (`call.cc`, `expr.cc`, `struct_info.cc`, `tir.cc`):
every form here is what TVM prints, in the spelling of the dialect. TIR scalar
expressions (shape dims, prim values) go through the TIR printer; this file only
decides where they are quoted and which symbolic variables they declare.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from tvmlite.dsl import relax, tir
from tvmlite.dsl.comments import Comments
from tvmlite.dsl.index_map import IndexMap
from tvmlite.dsl.module import TVM027, RawCall
from tvmlite.printer.comments import noted, role
from tvmlite.printer.context import PrintContext
from tvmlite.printer.literals import (
    dtype_text,
    float_text,
    is_special,
    special_text,
    string_text,
    tuple_text,
)
from tvmlite.printer.names import NameTable, dotted_identifier, identifier
from tvmlite.printer.relax_call import RelaxCallPrinter
from tvmlite.printer.tir_expr import ExprPrinter

# Calls whose binding annotation TVM hides when it equals the output struct info.
HIDDEN_ANNOTATION_CALLS = ("relax.call_tir", "relax.call_dps_packed", "relax.dist.call_tir")
# Scalar constant dtypes TVM prints as `R.const(v, "dtype")`; others go to metadata.
_CONST_DTYPES = ("int8", "int16", "int32", "int64", "float16", "float32", "float64", "bool")


def tir_vars(e: Any) -> Iterator[tir.Var]:
    """The TIR vars of a scalar expression, in printing order (operands left to right)."""
    if isinstance(e, tir.Var):
        yield e
    elif isinstance(e, tir.PrimExpr):
        for f in dataclasses.fields(e):
            if f.name != "span":
                yield from tir_vars(getattr(e, f.name))
    elif isinstance(e, tuple):
        for item in e:
            yield from tir_vars(item)


@dataclasses.dataclass
class FunctionFrame:
    """Per top-level function: the statements TVM puts before the body (`R.func_attr`,
    `cls = Module`, classic `n = T.int64()`), in the order they were needed.
    `func_vars` collects the vars defined by the signature while it is printed;
    expressions using them are quoted there."""

    prelude: list[str] = dataclasses.field(default_factory=list)
    func_vars: set[int] | None = None
    depth: int | None = None  # NameTable frame of the function: where symbolic vars live
    module_alias_printed: bool = False
    # the function's comments: those of the prelude lines ("cls", "decl:<name>") are
    # printed with them, once each
    comments: Comments | None = None
    noted: set[str] = dataclasses.field(default_factory=set)

    def add(self, line: str, name: str) -> None:
        """A prelude line, with the comments the text had on it (role `name`)."""
        comments = None if name in self.noted else self.comments
        self.noted.add(name)
        self.prelude.extend(noted(line, role(comments, name)))

    def unprinted(self) -> list[str]:
        """The comments of prelude lines the text had and the printer did not need
        (an unused declaration): they stay with the prelude."""
        lines: list[str] = []
        for key, remark in self.comments.roles if self.comments is not None else ():
            if (key == "cls" or key.startswith("decl:")) and key not in self.noted:
                lines.extend(remark.lines())
        return lines


class RelaxExprPrinter:
    def __init__(self, ctx: PrintContext) -> None:
        self.ctx = ctx
        self.names = ctx.names
        self.frame = FunctionFrame()
        self.calls = RelaxCallPrinter(self)  # the call forms
        self.free_decls: list[str] = []  # `gv: R.Tuple` lines for unbound vars just used

    # ------------------------------------------------------------ TIR scalars

    def define_tir_var(self, var: tir.Var) -> str:
        """First use of a symbolic var: classic declares it at the top of the function
        (`n = T.int64()`); 0.27 too when the body defines it, but a var of the
        signature at module level (`n = TypeVar("n")`)."""
        name = self.names.get(var)
        if name is not None:
            return name
        name = self.names.define(var, var.name or "v", self.frame.depth)
        in_signature = self.frame.func_vars is not None
        if in_signature:
            self.frame.func_vars.add(id(var))
        if in_signature and not self.ctx.classic:
            self.ctx.function_typevars.add(name)
        else:
            # classic TVM prints `n = T.int64()` without importing T; 0.27 imports it
            self.ctx.uses_tir = self.ctx.uses_tir or not self.ctx.classic
            self.frame.add(f"{name} = T.{dtype_text(var.dtype)}()", f"decl:{var.name}")
        return name

    def prim(self, e: tir.PrimExpr) -> str:
        """A scalar in Relax context (ints bare). In a signature, an expression over a
        signature var is quoted: classic `"n"`, `"n * 4"`; 0.27 `n`, `"n * 4"`."""
        if isinstance(e, tir.IntImm):
            return str(bool(e.value)) if e.dtype == "bool" else str(e.value)
        quote = False
        for var in tir_vars(e):
            self.define_tir_var(var)
            func_vars = self.frame.func_vars
            quote = quote or (func_vars is not None and id(var) in func_vars)
        if isinstance(e, tir.Var):
            text = self.names.get(e) or e.name
            return string_text(text) if quote and self.ctx.classic else text
        text = self.ctx.tir.exprs.expr(e, relax_context=True)
        if "T." in text:
            self.ctx.uses_tir = True
        return string_text(text) if quote else text

    # ------------------------------------------------------------ struct info

    def sinfo(self, si: relax.StructInfo) -> str:
        return getattr(self, _SINFO[type(si)])(si)

    def _object_sinfo(self, si: relax.ObjectStructInfo) -> str:
        return "R.Object" if self.ctx.classic else "R.Any"

    def _string_sinfo(self, si: relax.StringStructInfo) -> str:
        if self.ctx.classic:
            return "R.Object"
        self.ctx.uses_ir = True
        return "I.StringType()"

    def _prim_sinfo(self, si: relax.PrimStructInfo) -> str:
        if not self.ctx.classic:
            self.ctx.uses_tir = True
            return f"T.{dtype_text(si.dtype)}"
        if si.value is not None:
            return f"R.Prim(value={self.prim(si.value)})"
        return f'R.Prim("{dtype_text(si.dtype)}")'

    def _shape_sinfo(self, si: relax.ShapeStructInfo) -> str:
        if si.values is not None:
            return f"R.Shape([{', '.join(self.prim(v) for v in si.values)}])"
        return f"R.Shape(ndim={si.ndim})"

    def _tensor_sinfo(self, si: relax.TensorStructInfo) -> str:
        args = []
        if isinstance(si.shape, relax.Var):
            args.append(self.expr(si.shape))
        elif si.shape is not None:
            args.append(tuple_text([self.prim(v) for v in si.shape]))
        if si.dtype != "void":
            args.append(f'dtype="{dtype_text(si.dtype)}"')
        if si.shape is None and si.ndim != -1:
            args.append(f"ndim={si.ndim}")
        if si.vdevice is not None:
            args.append(f"vdevice={string_text(si.vdevice)}")
        return f"R.Tensor({', '.join(args)})" if args else "R.Tensor"

    def _dtensor_sinfo(self, si: relax.DTensorStructInfo) -> str:
        shape = tuple_text([self.prim(v) for v in si.shape or ()])
        args = (
            shape,
            string_text(si.dtype),
            string_text(si.device_mesh),
            string_text(si.placement),
        )
        return f"R.DTensor({', '.join(args)})"

    def _tuple_sinfo(self, si: relax.TupleStructInfo) -> str:
        if not si.fields:
            return "R.Tuple"
        return f"R.Tuple({', '.join(self.sinfo(f) for f in si.fields)})"

    def _func_sinfo(self, si: relax.FuncStructInfo) -> str:
        ret = self.sinfo(si.ret)
        if si.params is None:
            kwargs = []
            if not isinstance(si.ret, relax.ObjectStructInfo):
                kwargs.append(f"ret={ret}")
            if si.purity:
                kwargs.append("purity=True")
            return f"R.Callable({', '.join(kwargs)})" if kwargs else "R.Callable"
        params = tuple_text([self.sinfo(p) for p in si.params])
        return f"R.Callable({params}, {ret}, {si.purity})"

    # ------------------------------------------------------------ expressions

    def expr(self, e: relax.Expr) -> str:
        return getattr(self, _EXPR[type(e)])(e)

    def _var(self, v: relax.Var) -> str:
        name = self.names.get(v)
        if name is not None:
            return name
        # An unbound var (ill-formed IR) still prints: TVM declares it before the
        # statement that first uses it.
        name = self.names.define(v, v.name or "v")
        self.free_decls.append(f"{name}: {self.sinfo(v.struct_info)}")
        return name

    def take_free_decls(self) -> list[str]:
        lines, self.free_decls = self.free_decls, []
        return lines

    def _global_var(self, gv: relax.GlobalVar) -> str:
        module = self.ctx.module_functions
        name = identifier(gv.name, "the function name")
        if module is None or name not in module:
            return name
        if not self.frame.module_alias_printed:
            self.frame.add(f"cls = {self.ctx.module_name}", "cls")
            self.frame.module_alias_printed = True
        return f"cls.{name}"

    def _extern_func(self, e: relax.ExternFunc) -> str:
        if e.struct_info is None:
            return f"R.ExternFunc({string_text(e.global_symbol)})"
        return f"R.ExternFunc({string_text(e.global_symbol)}, {self.sinfo(e.struct_info)})"

    def _op(self, e: relax.Op) -> str:
        return f"I.Op({string_text(e.name)})"

    def _constant(self, c: relax.Constant) -> str:
        data = c.data
        dtype = str(data.dtype)
        if data.ndim != 0 or dtype not in _CONST_DTYPES:
            return self.ctx.metadata_ref(c)
        if c.struct_info is not None:
            return f"R.dist.const({scalar_text(data.item(), dtype)}, {self.sinfo(c.struct_info)})"
        return f'R.const({scalar_text(data.item(), dtype)}, "{dtype}")'

    def _tuple(self, t: relax.Tuple) -> str:
        if not t.fields:
            return "R.tuple()"
        return tuple_text([self.expr(f) for f in t.fields])

    def _tuple_get_item(self, t: relax.TupleGetItem) -> str:
        return f"{self.expr(t.tuple_value)}[{t.index}]"

    def _shape_expr(self, s: relax.ShapeExpr) -> str:
        return f"R.shape([{', '.join(self.prim(v) for v in s.values)}])"

    def _prim_value(self, p: relax.PrimValue) -> str:
        """0.27 prints the scalar bare. Classic wraps float immediates only
        (`R.prim_value(T.float64(0.5))`): ints, bools and symbolic values stay bare,
        as in the classic corpus."""
        text = self.prim(p.value)
        if self.ctx.classic and isinstance(p.value, tir.FloatImm):
            return f"R.prim_value({text})"
        return text

    def _string_imm(self, s: relax.StringImm) -> str:
        return f"R.str({string_text(s.value)})"

    def _dtype_imm(self, d: relax.DataTypeImm) -> str:
        return f'R.dtype("{dtype_text(d.value)}")'

    def _call(self, call: relax.Call) -> str:
        return self.calls.call(call)

    # ------------------------------------------------------------ attribute values

    def value(self, v: Any) -> str:
        """An attribute value in Python-literal style (lists for tuples, sorted dicts)."""
        if isinstance(v, bool):
            return str(v)
        if isinstance(v, np.generic):
            return self.value(v.item())
        if isinstance(v, int):
            return str(v)
        if isinstance(v, float):
            return special_text(v) if is_special(v) else float_text(v)
        if isinstance(v, str):
            return string_text(v)
        if v is None:
            return "None"
        if isinstance(v, (tuple, list)):
            return f"[{', '.join(self.value(x) for x in v)}]"
        if isinstance(v, dict):
            items = sorted(v.items())
            return "{" + ", ".join(f"{self.value(k)}: {self.value(x)}" for k, x in items) + "}"
        if isinstance(v, tir.PrimExpr):
            return self.prim(v)
        if isinstance(v, relax.StructInfo):
            return self.sinfo(v)
        if isinstance(v, IndexMap):
            return self.index_map(v)
        if isinstance(v, RawCall):  # global-info data, kept as written
            return self.raw_call(v)
        return self.expr(v)

    def raw_call(self, call: RawCall) -> str:
        """`I.vdevice(...)`, `R.device_mesh((2,), I.Range(0, 2))`: tuples and lists
        inside print as written (attribute values print both as lists)."""

        def arg(x: Any) -> str:
            if isinstance(x, tuple):
                return tuple_text([arg(e) for e in x])
            if isinstance(x, list):
                return f"[{', '.join(arg(e) for e in x)}]"
            return self.value(x)

        args = [arg(a) for a in call.args]
        args += [f"{identifier(k, 'the keyword')}={arg(x)}" for k, x in call.kwargs]
        return f"{dotted_identifier(call.func, 'the call')}({', '.join(args)})"

    def index_map(self, m: IndexMap) -> str:
        self.ctx.uses_tir = True
        return index_map_text(
            m, self.names, lambda e: self.ctx.tir.exprs.expr(e, relax_context=True)
        )


def index_map_text(m: IndexMap, names: NameTable, expr: Callable[[tir.PrimExpr], str]) -> str:
    """`T.index_map(lambda i, j: (j, i))`, the inverse as a keyword when given; the
    lambdas' parameters are named in frames of their own."""

    def lambda_text(lam: IndexMap) -> str:
        names.push()
        try:
            params = ", ".join(names.define(v, v.name) for v in lam.initial_indices)
            body = [expr(e) for e in lam.final_indices]
        finally:
            names.pop()
        return f"lambda {params}: {tuple_text(body)}"

    text = lambda_text(m)
    if m.inverse_index_map is not None:
        text += f", inverse_index_map={lambda_text(m.inverse_index_map)}"
    return f"T.index_map({text})"


def index_map_script(m: IndexMap) -> str:
    """`index_map_text` outside any module (an index map kept as a string attribute)."""
    names = NameTable()
    printer = ExprPrinter(TVM027, names)
    return index_map_text(m, names, lambda e: printer.expr(e, relax_context=True))


def scalar_text(value: Any, dtype: str) -> str:
    if dtype == "bool":
        return str(bool(value))
    if dtype.startswith("float"):
        value = float(value)
        return special_text(value) if is_special(value) else float_text(value)
    return str(int(value))


_SINFO = {
    relax.ObjectStructInfo: "_object_sinfo",
    relax.StringStructInfo: "_string_sinfo",
    relax.PrimStructInfo: "_prim_sinfo",
    relax.ShapeStructInfo: "_shape_sinfo",
    relax.TensorStructInfo: "_tensor_sinfo",
    relax.DTensorStructInfo: "_dtensor_sinfo",
    relax.TupleStructInfo: "_tuple_sinfo",
    relax.FuncStructInfo: "_func_sinfo",
}

_EXPR = {
    relax.Var: "_var",
    relax.DataflowVar: "_var",
    relax.GlobalVar: "_global_var",
    relax.ExternFunc: "_extern_func",
    relax.Op: "_op",
    relax.Constant: "_constant",
    relax.Tuple: "_tuple",
    relax.TupleGetItem: "_tuple_get_item",
    relax.ShapeExpr: "_shape_expr",
    relax.PrimValue: "_prim_value",
    relax.StringImm: "_string_imm",
    relax.DataTypeImm: "_dtype_imm",
    relax.Call: "_call",
}

"""Building one Relax function binding by binding, as TVM's `relax.BlockBuilder` does.

The importer writes what TVM's translator writes, so the bindings it emits must come
out as TVM's builder makes them: every call argument that is not a leaf (or a tuple
of leaves) is bound first, left to right and depth first, the same argument object
only once; each binding gets a fresh name from one name supply (`lv`, `lv1`, ...
inside a dataflow block, `gv`, `gv1`, ... outside or for block outputs); struct info
is inferred by the operator registry, as the parser infers it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

from tvmlite.dsl import ops, relax, tir
from tvmlite.dsl.analysis import free_vars
from tvmlite.dsl.parse.relax.expr import is_leaf
from tvmlite.dsl.verify.relax import struct_info_of


class NameSupply:
    """Fresh names as TVM's NameSupply gives them: a name the first time, then the
    name with a counter appended, skipping any name already handed out."""

    def __init__(self) -> None:
        self._next: dict[str, int] = {}

    def fresh(self, hint: str) -> str:
        if hint not in self._next:
            self._next[hint] = 0
            return hint
        while True:
            self._next[hint] += 1
            name = f"{hint}{self._next[hint]}"
            if name not in self._next:
                self._next[name] = 0
                return name


def _defined_vars(params: list[relax.Var]) -> set[tir.Var]:
    """The symbolic vars a caller's arguments give values: the bare dims of the
    parameters' shapes and their scalar values."""
    found: set[tir.Var] = set()
    for param in params:
        sinfo = param.struct_info
        if isinstance(sinfo, relax.TensorStructInfo) and isinstance(sinfo.shape, tuple):
            found.update(d for d in sinfo.shape if isinstance(d, tir.Var))
        elif isinstance(sinfo, relax.ShapeStructInfo) and sinfo.values is not None:
            found.update(d for d in sinfo.values if isinstance(d, tir.Var))
        elif isinstance(sinfo, relax.PrimStructInfo) and isinstance(sinfo.value, tir.Var):
            found.add(sinfo.value)
    return found


def well_defined(sinfo: relax.StructInfo, defined: set[tir.Var]) -> relax.StructInfo:
    """`sinfo` with every shape or value that uses a var outside `defined` erased (a
    function's result as its signature can state it: TVM's EraseToWellDefined)."""

    def known(exprs: tuple[tir.PrimExpr, ...]) -> bool:
        return all(v in defined for v in free_vars(list(exprs)))

    if isinstance(sinfo, relax.TensorStructInfo) and isinstance(sinfo.shape, tuple):
        if known(sinfo.shape):
            return sinfo
        return relax.TensorStructInfo(None, sinfo.dtype, sinfo.ndim, sinfo.vdevice)
    if isinstance(sinfo, relax.ShapeStructInfo) and sinfo.values is not None:
        return sinfo if known(sinfo.values) else relax.ShapeStructInfo(None, sinfo.ndim)
    if isinstance(sinfo, relax.PrimStructInfo) and sinfo.value is not None:
        return sinfo if known((sinfo.value,)) else relax.PrimStructInfo(sinfo.dtype)
    if isinstance(sinfo, relax.TupleStructInfo):
        fields = tuple(well_defined(f, defined) for f in sinfo.fields)
        same = all(a is b for a, b in zip(fields, sinfo.fields, strict=True))
        return sinfo if same else relax.TupleStructInfo(fields)
    return sinfo


class GraphBuilder:
    """Emits normalized bindings into the blocks of the function being built."""

    def __init__(self, signatures: Mapping[str, relax.FuncStructInfo] | None = None) -> None:
        self.names = NameSupply()
        self.signatures: dict[str, relax.FuncStructInfo] = dict(signatures or {})
        self.blocks: list[relax.BindingBlock] = []
        self.bindings: list[relax.Binding] = []
        self.in_dataflow = False
        # functions made besides the one being built (`torch.cond`'s branches)
        self.functions: dict[str, relax.Function] = {}
        # argument objects already bound in the current block (TVM's normalize cache)
        self._bound_args: dict[int, tuple[relax.Expr, relax.Var]] = {}
        # struct info of calls made here, by id (calls carry none themselves)
        self._call_sinfo: dict[int, tuple[relax.Call, relax.StructInfo]] = {}

    # ------------------------------------------------------------ expressions

    def call(self, op: str, *args: Any, **kwargs: Any) -> relax.Call:
        """`relax.<op>(*args, **kwargs)` as TVM's Python wrapper builds it: literals
        converted, attributes normalized and in schema order. Its arguments may be
        calls not yet bound; `emit` binds them."""
        call = ops.make_call(f"relax.{op}", list(args), kwargs)
        self._call_sinfo[id(call)] = (call, ops.infer_struct_info(call))
        return call

    def sinfo(self, expr: relax.Expr) -> relax.StructInfo:
        """The struct info of `expr` (a leaf, a tuple, or a call made by `call`)."""
        cached = self._call_sinfo.get(id(expr))
        if cached is not None and cached[0] is expr:
            return cached[1]
        return struct_info_of(expr, self.signatures)

    # ------------------------------------------------------------ bindings

    def emit(
        self, expr: relax.Expr, name: str | None = None, sinfo: relax.StructInfo | None = None
    ) -> relax.Var:
        """Bind `expr` (normalized first) to a fresh var and return the var; `sinfo`,
        when given, is the var's struct info instead of the value's."""
        value = self._normalize(expr)
        hint = name or ("lv" if self.in_dataflow else "gv")
        cls = relax.DataflowVar if self.in_dataflow else relax.Var
        var = cls(self.names.fresh(hint), sinfo or self.sinfo(value))
        self.bindings.append(relax.VarBinding(var, value))
        return var

    def emit_output(self, expr: relax.Expr) -> relax.Var:
        """Bind `expr` to a var that leaves the dataflow block (`gv`)."""
        value = self._normalize(expr)
        var = relax.Var(self.names.fresh("gv"), self.sinfo(value))
        self.bindings.append(relax.VarBinding(var, value))
        return var

    def match_cast(self, expr: relax.Expr, sinfo: relax.StructInfo) -> relax.Var:
        value = self._normalize(expr)
        hint = "lv" if self.in_dataflow else "gv"
        cls = relax.DataflowVar if self.in_dataflow else relax.Var
        var = cls(self.names.fresh(hint), sinfo)
        self.bindings.append(relax.MatchCast(var, value, sinfo))
        return var

    def scoped(self, expr: relax.Expr) -> relax.SeqExpr:
        """`expr` as the body of a branch: normalized in a block of its own, a call
        bound there (TVM's normalization of an `If`'s arms)."""
        saved = (self.bindings, self._bound_args, self.in_dataflow)
        self.bindings, self._bound_args, self.in_dataflow = [], {}, False
        try:
            value = self._normalize(expr)
            if not is_leaf(value):
                value = self.emit(value)
            blocks = (relax.BindingBlock(tuple(self.bindings)),) if self.bindings else ()
        finally:
            self.bindings, self._bound_args, self.in_dataflow = saved
        return relax.SeqExpr(blocks, value)

    @contextlib.contextmanager
    def function(self) -> Iterator[None]:
        """Build another function (finished with `finish`) in the middle of this one;
        names still come from the one name supply, as in TVM's builder."""
        saved = (self.blocks, self.bindings, self._bound_args, self.in_dataflow)
        self.blocks, self.bindings, self._bound_args, self.in_dataflow = [], [], {}, False
        try:
            yield
        finally:
            self.blocks, self.bindings, self._bound_args, self.in_dataflow = saved

    def add_function(self, name: str, func: relax.Function) -> None:
        """Keep `func` for the module; calls of `name` get its struct info."""
        self.functions[name] = func
        params = tuple(p.struct_info for p in func.params)
        self.signatures[name] = relax.FuncStructInfo(params, func.ret_struct_info, func.is_pure)

    def begin_dataflow(self) -> None:
        self._close_block()
        self.in_dataflow = True

    def end_dataflow(self) -> None:
        self._close_block()
        self.in_dataflow = False

    def finish(
        self,
        name: str,
        params: list[relax.Var],
        result: relax.Expr,
        attrs: Mapping[str, Any],
        pure: bool = True,
    ) -> relax.Function:
        """The public function `name` whose body is every block emitted, returning
        `result` (normalized in a block of its own, as TVM's builder does)."""
        self._close_block()
        value = self._normalize(result)
        self._close_block()
        body = relax.SeqExpr(tuple(self.blocks), value)
        self.blocks = []
        attrs = {**attrs, "global_symbol": name}
        ret = well_defined(self.sinfo(value), _defined_vars(params))
        return relax.Function(tuple(params), body, ret, pure, tuple(attrs.items()))

    # ------------------------------------------------------------ normalization

    def _close_block(self) -> None:
        if self.bindings:
            self.blocks.append(relax.BindingBlock(tuple(self.bindings), self.in_dataflow))
        self.bindings = []
        self._bound_args = {}

    def _normalize(self, expr: relax.Expr) -> relax.Expr:
        """`expr` with every non-leaf argument bound (TVM's Normalize)."""
        if isinstance(expr, relax.Call):
            return self._normalize_args(expr)
        if isinstance(expr, relax.Tuple):
            return self._tuple(expr)
        if isinstance(expr, relax.TupleGetItem):
            inner = self._argument(expr.tuple_value)
            if inner is expr.tuple_value:
                return expr
            return relax.TupleGetItem(inner, expr.index)
        return expr

    def _normalize_args(self, call: relax.Call) -> relax.Call:
        args = tuple(self._argument(a) for a in call.args)
        if all(a is b for a, b in zip(args, call.args, strict=True)):
            return call
        normalized = relax.Call(call.op, args, call.attrs, call.sinfo_args)
        cached = self._call_sinfo.get(id(call))
        if cached is not None and cached[0] is call:
            self._call_sinfo[id(normalized)] = (normalized, cached[1])
        return normalized

    def _tuple(self, tup: relax.Tuple) -> relax.Tuple:
        fields = tuple(self._argument(f) for f in tup.fields)
        if all(a is b for a, b in zip(fields, tup.fields, strict=True)):
            return tup
        return relax.Tuple(fields)

    def _argument(self, arg: relax.Expr) -> relax.Expr:
        if is_leaf(arg):
            return arg
        if isinstance(arg, relax.Tuple):
            return self._tuple(arg)
        seen = self._bound_args.get(id(arg))
        if seen is not None and seen[0] is arg:
            return seen[1]
        var = self.emit(arg)
        self._bound_args[id(arg)] = (arg, var)
        return var

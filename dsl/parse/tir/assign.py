"""TIR assignments: buffer stores, scalar bindings (LetStmt or Bind, by dialect),
variable declarations and the `T.*` calls that bind a name (`T.match_buffer`,
`T.alloc_buffer` and friends, `T.axis.*`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tvmlite.dsl import dtype as dt
from tvmlite.dsl import tir
from tvmlite.dsl.tir_layout import DEFAULT_LAYOUT, row_major
from tvmlite.grammar import syntax

if TYPE_CHECKING:  # stmt.py builds this helper: a runtime import would be a cycle
    from tvmlite.dsl.parse.tir.stmt import StmtParser
from tvmlite.dsl.parse.scope import bind_call
from tvmlite.dsl.parse.tir.block import AXIS_KINDS, FUNCTION
from tvmlite.dsl.parse.tir.expr import _ARITH, _BITWISE, META_BUILTINS, access_dtype
from tvmlite.dsl.parse.tir.ops import make_const, materialize
from tvmlite.dsl.parse.tir.views import ViewParser

_ALLOC_FORMS = {"alloc_local": "local", "alloc_shared": "shared"}
_SCOPE_FORMS = {scope: form for form, scope in _ALLOC_FORMS.items()}


@dataclass(frozen=True, slots=True)
class Scoped:
    """A statement whose `body` is the rest of the enclosing sequence."""

    stmt: tir.LetStmt | tir.AttrStmt


Result = tir.Stmt | list[tir.Stmt] | Scoped | None


class AssignParser:
    """Assignments; the function parser's `handles` maps each `T.handle` parameter to the
    buffer matched to it, `predeclared` holds the function's top-level
    `n = T.int32()` vars, created before the signature is read."""

    def __init__(self, fn: StmtParser) -> None:
        self.fn = fn  # the function body being parsed: its state and other helpers
        self.ctx = fn.ctx
        self.exprs = fn.exprs
        self.views = ViewParser(self)  # `A.view(...)`, `A.local(...)`, `data=A.data`

    # ------------------------------------------------------------ assignments

    def _assign(self, node: syntax.Assign) -> Result:
        if len(node.targets) != 1:
            raise self.ctx.error("chained assignment is not supported in TIR", node)
        target, value = node.targets[0], node.value
        if isinstance(target, syntax.Subscript):
            return self.store(target, value, node)
        name = syntax.dotted(value.func) if isinstance(value, syntax.Call) else None
        if name is not None and name.startswith("T."):
            assert isinstance(value, syntax.Call)
            short = name[2:]
            if short in AXIS_KINDS:
                return self.fn.block.axis(AXIS_KINDS[short], target, value)
            if short == "axis.remap":
                return self.fn.block.remap(target, value)
            if short in META_BUILTINS:
                raise self.ctx.error(
                    f"T.{short} is not supported: it needs Python evaluation", value
                )
            if short in tir.SCOPE_IDS:
                return self.scope_id(target, value)
        declared = declarations(target, value)
        if declared:
            for name, dtype, call in declared:
                pointee = self.exprs.pointee(call) if dtype == "handle" else None
                self.declare(name, dtype, call, pointee)
            return None
        if not isinstance(target, syntax.Name):
            raise self.ctx.error(
                "only a name, a buffer element or block axes can be assigned", target
            )
        if isinstance(value, syntax.Call) and isinstance(value.func, syntax.Attribute):
            method = value.func.attr
            if method in ("view", "local") and isinstance(value.func.value, syntax.Name):
                return getattr(self.views, method)(target, value)
        if name is not None and name.startswith("T."):
            assert isinstance(value, syntax.Call)
            handler = ASSIGN_CALLS.get(name[2:])
            if handler is not None:
                return handler(self, target, value)
        old = self.exprs.scope.lookup(target.id)
        if not self.fn.classic and isinstance(old, tir.Buffer) and tir.is_scalar_buffer(old):
            zero = tir.IntImm("int32", 0, target.span)  # 0.27 `acc = v`: its one element
            return tir.BufferStore(old, self.exprs.typed(value, old.dtype), (zero,), node.span)
        if not self.fn.classic and self.stored(target.id):
            return self.mutable(target, None, value, node)
        return self.bind(target, None, value, node, let=self.fn.classic)

    def _ann_assign(self, node: syntax.AnnAssign) -> Result:
        if not isinstance(node.target, syntax.Name):
            raise self.ctx.error("only a name can be annotated", node.target)
        classic_let = self.fn.classic and node.value is not None  # `x: T.void = f()`
        dtype, pointee, let = self.annotation(node.annotation, void=classic_let)
        if node.value is None:
            if dtype is None or dtype == "void":
                raise self.ctx.error("T.let needs a value", node)
            if not self.fn.classic and dtype != "handle":
                return self.scalar(node.target, dtype, node)
            return self.declare(node.target, dtype, node, pointee)
        mutable = not (let or self.fn.classic) and dtype != "handle"
        if mutable and self.stored(node.target.id):
            return self.mutable(node.target, dtype, node.value, node)
        return self.bind(
            node.target, (dtype, pointee), node.value, node, let=let or self.fn.classic
        )

    def annotation(
        self, node: syntax.Node, void: bool = False
    ) -> tuple[str | None, tuple[str, str] | None, bool]:
        """(dtype, pointee, is T.let) of `T.float32`, `T.handle("f32")`, `T.let[T.int32]`;
        `T.void` only where `void` says a let binds a void call's value there."""
        if syntax.dotted(node) == "T.let":
            return None, None, True
        if isinstance(node, syntax.Subscript) and syntax.dotted(node.value) == "T.let":
            if len(node.indices) != 1:
                raise self.ctx.error("T.let[...] takes one type", node)
            self.ctx.nest(node.indices[0], "type")
            dtype, pointee, _ = self.annotation(node.indices[0], void=True)
            self.ctx.depth -= 1
            return dtype, pointee, True
        if void and syntax.dotted(node) == "T.void":
            return "void", None, False
        if isinstance(node, syntax.Call) and syntax.dotted(node.func) == "T.handle":
            return "handle", self.exprs.pointee(node), False
        if isinstance(node, syntax.Call) and syntax.dotted(node.func) == "T.TensorMap":
            if node.args or node.keywords:
                raise self.ctx.error("T.TensorMap() takes no arguments", node)
            return "handle", tir.TENSOR_MAP, False
        name = syntax.dotted(node)
        if name is None or not name.startswith("T."):
            raise self.ctx.error("expected a TIR type such as T.int32", node)
        if not dt.is_valid(name[2:]) or name[2:] == "void":
            raise self.ctx.error(dt.unknown(name[2:]), node)
        return name[2:], None, False

    def scalar(self, target: syntax.Name, dtype: str, node: syntax.Node) -> Result:
        """0.27's `acc: T.float32`: a local buffer of one element, named bare after. Its
        layout is the row-major one, which in an s_tir function (where buffers have
        none by default) is written out: TVM names such a scalar bare there too."""
        one = tir.IntImm("int32", 1, node.span)
        data = tir.Var(target.id, "handle", (dtype, "local"), target.span)
        layout = row_major((one,)) if self.fn.buffers.s_tir else DEFAULT_LAYOUT
        buffer = tir.Buffer(
            target.id, data, dtype, (one,), scope="local", span=node.span, layout=layout
        )
        self.check_rebind(target)
        self.exprs.define(target.id, buffer)
        return tir.AllocBuffer(buffer, "alloc_local", node.span)

    def declare(
        self, target: syntax.Name, dtype: str, node: syntax.Node, pointee: Any = None
    ) -> Result:
        """`n = T.int32()`: a var with no value (symbolic shape, or a `T.Let` key)."""
        var = self.fn.predeclared.pop(target.id, None) if self.fn.level == FUNCTION else None
        if var is None or var.dtype != dtype or var.pointee != pointee:
            var = tir.Var(target.id, dtype, pointee, target.span)
        self.check_rebind(target)
        self.exprs.define(target.id, var)
        if self.fn.level == FUNCTION:  # printed where the var is first used, as `decl:<name>`
            self.fn.func_comments = self.fn.block.header_comments(
                self.fn.func_comments, f"decl:{target.id}"
            )
        else:  # where the text placed it: on the next statement (see Comments.declared)
            self.fn.declared.append(target.id)
        return None

    def check_rebind(self, target: syntax.Name) -> None:
        old = self.exprs.scope.lookup(target.id)
        if isinstance(old, tir.Buffer):
            raise self.ctx.error(
                f"'{target.id}' is already a buffer and cannot be redefined", target
            )

    def bind(
        self,
        target: syntax.Name,
        annotated: Any,
        value_node: syntax.Node,
        node: syntax.Node,
        let: bool,
    ) -> Result:
        """Classic `x = v` / `x: T.f32 = v` and 0.27 `x: T.let[...] = v` scope over the
        rest of the sequence (LetStmt); 0.27 `x = v` / `x: T.f32 = v` is a flat Bind."""
        dtype, pointee = annotated if annotated is not None else (None, None)
        value = self.exprs.typed(value_node, dtype) if dtype else self.exprs.expr(value_node)
        return self.bind_value(target, pointee, value, node, let)

    def bind_value(
        self, target: syntax.Name, pointee: Any, value: tir.PrimExpr, node: syntax.Node, let: bool
    ) -> Result:
        self.check_rebind(target)
        var = tir.Var(target.id, value.dtype, pointee, target.span)
        self.exprs.define(target.id, var)
        if let:
            return Scoped(tir.LetStmt(var, value, tir.Evaluate(tir.IntImm("int32", 0)), node.span))
        return tir.Bind(var, value, node.span)

    def stored(self, name: str) -> bool:
        """Whether 0.27's `name = v` must be a one-element buffer, as TVM makes every
        such scalar: when the name is assigned again or its buffer is named
        (`name.source`); otherwise it is a Bind, of the same value and printed alike."""
        if name in self.fn.source_names:
            return True
        return name in self.fn.assigned_again and reassigned(name, self.fn.following)

    def mutable(
        self, target: syntax.Name, dtype: str | None, value_node: syntax.Node, node: syntax.Node
    ) -> Result:
        """0.27's `x: T.f32 = v` (or `x = v`) of a name assigned again later, as in a loop
        that accumulates: a mutable scalar, the local one-element buffer TVM makes of it,
        and the store of its first value. A name assigned once stays an immutable Bind:
        the same value, printed the same, and plain to index analysis."""
        value = self.exprs.typed(value_node, dtype) if dtype else self.exprs.expr(value_node)
        if value.dtype == "handle" or dt.lanes(value.dtype) != 1:
            return self.bind_value(target, None, value, node, let=False)
        alloc = self.scalar(target, value.dtype, node)
        assert isinstance(alloc, tir.AllocBuffer)
        zero = tir.IntImm("int32", 0, target.span)
        return [alloc, tir.BufferStore(alloc.buffer, value, (zero,), node.span)]

    def store(self, target: syntax.Subscript, value_node: syntax.Node, node: syntax.Node) -> Result:
        if isinstance(target.value, syntax.Name):
            found = self.exprs.lookup(target.value.id, target.value)
            if not isinstance(found, tir.Buffer):
                raise self.ctx.error(
                    f"cannot store to '{target.value.id}': it is not a buffer", target
                )
        buffer = self.exprs.buffer_of(target.value)
        indices = self.exprs.indices(buffer, target)
        value = self.exprs.typed(value_node, access_dtype(buffer, indices))
        return tir.BufferStore(buffer, value, indices, node.span)

    def _aug_assign(self, node: syntax.AugAssign) -> Result:
        if not isinstance(node.target, syntax.Subscript) and not self.scalar_name(node.target):
            raise self.ctx.error("augmented assignment is only supported on buffer elements", node)
        kind = _ARITH.get(node.op)
        load = self.exprs.value(node.target)
        if node.op in _BITWISE:
            new = self.exprs.bitwise(_BITWISE[node.op], load, self.exprs.value(node.value), node)
        elif kind is not None:
            new = self.exprs.binop(kind, load, self.exprs.value(node.value), node)
        else:
            raise self.ctx.error(f"operator '{node.op}=' is not supported in TIR", node)
        assert isinstance(load, tir.BufferLoad)
        return tir.BufferStore(load.buffer, new, load.indices, node.span)

    def scalar_name(self, node: syntax.Node) -> bool:
        """Whether `node` names a 0.27 scalar (`acc += v` stores to its one element)."""
        if self.fn.classic or not isinstance(node, syntax.Name):
            return False
        found = self.exprs.scope.lookup(node.id)
        return isinstance(found, tir.Buffer) and tir.is_scalar_buffer(found)

    # ------------------------------------------------------------ buffers from assignments

    def _match_buffer(self, target: syntax.Name, call: syntax.Call) -> Result:
        if not call.args:
            raise self.ctx.error("T.match_buffer expects a handle or a buffer region first", call)
        source = call.args[0]
        if isinstance(source, syntax.Subscript):
            self.check_rebind(target)
            self.exprs.define(target.id, self.fn.block.match_region(target.id, call))
            return None
        if self.fn.level != FUNCTION:
            raise self.ctx.error(
                "T.match_buffer of a parameter must be at the function's top level", call
            )
        handle = self.exprs.value(source)
        if not isinstance(handle, tir.Var) or handle not in self.fn.handles:
            raise self.ctx.error("T.match_buffer expects a T.handle parameter", source)
        if self.fn.handles[handle] is not None:
            raise self.ctx.error(f"parameter '{handle.name}' is matched twice", source)
        buffer = self.fn.buffers.make_buffer(
            target.id, self.fn.buffers.buffer_args(call, call.args[1:], "T.match_buffer"), call
        )
        self.fn.handles[handle] = buffer
        self.check_rebind(target)
        self.exprs.define(target.id, buffer)
        role = f"match_buffer:{handle.name}"
        self.fn.func_comments = self.fn.block.header_comments(self.fn.func_comments, role)
        return None

    def _alloc(self, target: syntax.Name, call: syntax.Call) -> Result:
        """`T.alloc_buffer` is block-level in classic and a flat statement in 0.27;
        `T.sblock_alloc_buffer` is always block-level."""
        short = syntax.dotted(call.func)[2:]  # type: ignore[index]
        self.check_rebind(target)
        if short == "sblock_alloc_buffer" or (short == "alloc_buffer" and self.fn.classic):
            self.exprs.define(target.id, self.fn.block.block_alloc(target.id, call))
            return None
        annotated = [kw for kw in call.keywords if kw.name == "annotations"]
        plain = dataclasses.replace(
            call, keywords=tuple(k for k in call.keywords if k not in annotated)
        )
        named = self.fn.buffers.buffer_args(plain, call.args, f"T.{short}")
        data_value = None
        if short == "decl_buffer" and "data" in named:
            value = self.exprs.storage(named["data"])
            if not isinstance(value, tir.Var):  # `data=T.address_of(A[4])`: a fresh var
                data_value = materialize(value)
                if data_value.dtype != "handle":
                    raise self.ctx.error("data= must be a handle", named["data"])
                del named["data"]
        buffer = self.fn.buffers.make_buffer(
            target.id, named, call, scope=_ALLOC_FORMS.get(short, "global")
        )
        if short == "alloc_buffer":  # TVM 0.27 keeps (and prints) the scope's own form
            short = _SCOPE_FORMS.get(buffer.scope, short)
        annotations = self.fn.buffers.attr_dict(annotated[0].value) if annotated else ()
        if short == "decl_buffer" and not annotations and data_value is None:
            owner = self.views.data_owner(named.get("data"))
            return self.views.declare(target, buffer, owner, call)
        self.exprs.define(target.id, buffer)
        return tir.AllocBuffer(
            buffer, short, call.span, annotations=annotations, data_value=data_value
        )

    def _decl_scalar(self, target: syntax.Name, call: syntax.Call) -> Result:
        return self.views.decl_scalar(target, call)

    def _buffer_alias(self, target: syntax.Name, call: syntax.Call) -> Result:
        """Classic `A = T.Buffer((n,), data=ptr)`: a name for a view, no statement."""
        self.check_rebind(target)
        self.exprs.define(
            target.id,
            self.fn.buffers.make_buffer(
                target.id, self.fn.buffers.buffer_args(call, call.args, "T.Buffer"), call
            ),
        )
        return None

    # ------------------------------------------------------------ GPU threads

    def launch_thread(self, call: syntax.Call, target: syntax.Name | None) -> tir.AttrStmt:
        """`T.launch_thread("threadIdx.x", n)` (a new thread var named by `target`) or
        `T.launch_thread(tx, n)` (a var from `T.env_thread`): a `thread_extent`
        attribute whose node is the thread's IterVar. Its body is filled by the caller."""
        if len(call.args) != 2 or call.keywords:
            raise self.ctx.error("T.launch_thread expects 2 arguments (thread, extent)", call)
        thread, extent_node = call.args
        extent = materialize(self.exprs.integer(extent_node, "a thread extent"))
        if isinstance(thread, syntax.Constant) and isinstance(thread.value, str):
            if target is None:
                raise self.ctx.error(
                    f'name the thread: `with T.launch_thread("{thread.value}", n) as tx:`', call
                )
            tag = thread.value
            var = tir.Var(target.id, extent.dtype, span=target.span)
            self.check_rebind(target)
            self.exprs.define(target.id, var)
        else:
            var = self.exprs.value(thread)
            if not isinstance(var, tir.Var) or var not in self.fn.env_threads:
                what = "T.launch_thread expects a thread tag or a T.env_thread var"
                raise self.ctx.error(what, thread)
            tag = self.fn.env_threads[var]
            if target is not None:
                what = "T.launch_thread of a T.env_thread var does not bind a name"
                raise self.ctx.error(what, target)
        kind = "virtual_thread" if tag.startswith("vthread") else "thread_extent"
        zero = make_const(0, extent.dtype, call.span)
        iv = tir.IterVar(var, tir.Range(zero, extent, call.span), tir.THREAD, tag, call.span)
        return tir.AttrStmt(iv, kind, extent, tir.Evaluate(zero), call.span)

    def _launch_thread(self, target: syntax.Name, call: syntax.Call) -> Result:
        return Scoped(self.launch_thread(call, target))

    def _env_thread(self, target: syntax.Name, call: syntax.Call) -> Result:
        """`tx = T.env_thread("threadIdx.x")`: a thread var launched later, maybe twice."""
        if len(call.args) != 1 or call.keywords:
            raise self.ctx.error("T.env_thread expects 1 argument (the thread tag)", call)
        tag = self.exprs.str_arg(call.args[0], "the thread tag")
        var = tir.Var(target.id, "int32", span=target.span)
        self.check_rebind(target)
        self.exprs.define(target.id, var)
        self.fn.env_threads[var] = tag
        return None

    def scope_id(self, target: syntax.Node, call: syntax.Call) -> Result:
        """tirx `tx = T.thread_id([128])`, `bx, by = T.cta_id([8, 4], dtype="uint32")`,
        `T.cta_id_in_cluster([2, 1], preferred=[2, 2])`, `bx = T.cta_id()` (deferred
        extent): one var per extent, defined for the rest of the sequence."""
        kind = syntax.dotted(call.func)[2:]  # type: ignore[index]
        names = target.elts if isinstance(target, syntax.Tuple) else (target,)
        if not all(isinstance(n, syntax.Name) for n in names):
            raise self.ctx.error(f"T.{kind} defines names: assign it to names", target)
        allowed = ("dtype",) if kind == "cta_id_in_pair" else ("extents", "preferred", "dtype")
        named = bind_call(self.ctx, call, f"T.{kind}", allowed)
        dtype = self.exprs.dtype_arg(named["dtype"]) if "dtype" in named else "int32"
        if dtype not in ("int32", "uint32"):
            raise self.ctx.error(
                f'the ids of T.{kind} are "int32" or "uint32", got "{dtype}"', named["dtype"]
            )
        extents = self._extent_list(named.get("extents"), kind)
        preferred = self._extent_list(named.get("preferred"), kind)
        count = 1 if extents is None else len(extents)
        if len(names) != count or isinstance(target, syntax.Tuple) != (count > 1):
            what = "a deferred extent defines one id" if extents is None else f"{count} ids"
            raise self.ctx.error(
                f"T.{kind} defines {what}; {len(names)} name(s) are assigned", target
            )
        variables = []
        for name in names:
            assert isinstance(name, syntax.Name)
            self.check_rebind(name)
            var = tir.Var(name.id, dtype, span=name.span)
            self.exprs.define(name.id, var)
            variables.append(var)
        return tir.ScopeIdDef(kind, tuple(variables), extents, preferred, call.span)

    def _extent_list(self, node: syntax.Node | None, kind: str) -> tuple[tir.PrimExpr, ...] | None:
        if node is None or isinstance(node, syntax.Constant) and node.value is None:
            return None
        if not isinstance(node, syntax.List) or not node.elts:
            raise self.ctx.error(f"T.{kind} takes a list of extents, such as [32]", node)
        out = []
        for item in node.elts:
            extent = materialize(self.exprs.integer(item, f"an extent of T.{kind}"))
            if not tir.is_index_dtype(extent.dtype) or dt.lanes(extent.dtype) != 1:
                raise self.ctx.error(f"an extent of T.{kind} must be an integer", item)
            out.append(extent)
        return tuple(out)

    def _bind_call(self, target: syntax.Name, call: syntax.Call) -> Result:
        if len(call.args) != 1:
            raise self.ctx.error(f"T.bind expects 1 argument, got {len(call.args)}", call)
        return self.bind(target, None, call.args[0], call, let=False)


ASSIGN_CALLS: dict[str, Callable[[AssignParser, syntax.Name, syntax.Call], Result]] = {
    "match_buffer": AssignParser._match_buffer,
    "alloc_buffer": AssignParser._alloc,
    "sblock_alloc_buffer": AssignParser._alloc,
    "alloc_local": AssignParser._alloc,
    "alloc_shared": AssignParser._alloc,
    "decl_buffer": AssignParser._alloc,
    "decl_scalar": AssignParser._decl_scalar,
    "Buffer": AssignParser._buffer_alias,
    "bind": AssignParser._bind_call,
    "launch_thread": AssignParser._launch_thread,
    "env_thread": AssignParser._env_thread,
}


def declarations(
    target: syntax.Node, value: syntax.Node
) -> list[tuple[syntax.Name, str, syntax.Call]]:
    """`n = T.int32()` or 0.27's `m, n = T.int32(), T.int32()`: (name, dtype, call)
    for each var declared; empty when the statement is something else."""
    names = target.elts if isinstance(target, syntax.Tuple) else (target,)
    values = value.elts if isinstance(value, syntax.Tuple) else (value,)
    if len(names) != len(values) or isinstance(target, syntax.Tuple) != isinstance(
        value, syntax.Tuple
    ):
        return []
    out = []
    for name, call in zip(names, values, strict=True):
        callee = syntax.dotted(call.func) if isinstance(call, syntax.Call) else None
        if not isinstance(name, syntax.Name) or callee is None or not callee.startswith("T."):
            return []
        assert isinstance(call, syntax.Call)
        if call.args and callee != "T.handle" or not dt.is_valid(callee[2:]):
            return []  # `T.handle("float32", "global")` declares a typed handle
        out.append((name, callee[2:], call))
    return out


def reassigned(name: str, nodes: tuple[syntax.Node, ...]) -> bool:
    """Whether a statement among `nodes` (or nested in one) assigns `name` again."""
    for node in nodes:
        if isinstance(node, syntax.Assign):
            if any(isinstance(t, syntax.Name) and t.id == name for t in node.targets):
                return True
        elif isinstance(node, syntax.AugAssign):
            if isinstance(node.target, syntax.Name) and node.target.id == name:
                return True
        elif isinstance(node, syntax.If):
            if reassigned(name, node.body) or reassigned(name, node.orelse):
                return True
        elif isinstance(node, syntax.For | syntax.While | syntax.With):
            if reassigned(name, node.body):
                return True
    return False

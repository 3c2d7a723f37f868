"""TIR statements as TVM prints them: loops with `T.grid` folding, blocks with
`T.axis.remap` grouping, buffer declarations, and the scoping forms that
differ between the classic and the 0.27 spelling.

Lines are collected per frame (a loop or block body, a function body). A free
variable met while printing a statement is declared (`n = T.int32()`) in the
current frame, so its line lands just before the statement, as in TVM."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from tvmlite.dsl import tir
from tvmlite.dsl.comments import Comments
from tvmlite.dsl.tir_layout import DEFAULT_LAYOUT, row_major
from tvmlite.dsl.walk import walk
from tvmlite.printer.comments import after_lines, role
from tvmlite.printer.literals import dtype_text, string_text
from tvmlite.printer.names import NameTable, sanitize
from tvmlite.printer.tir_expr import (
    BITWISE,
    ExprPrinter,
    declaration_text,
    int_const,
    iter_vars_of,
    range_end,
    same_expr,
    type_text,
)
from tvmlite.printer.tir_free import use_homes
from tvmlite.printer.tir_layout import layout_kwargs
from tvmlite.printer.tir_views import scalar_text, view_text

INDENT = "    "
LOOP_PREFIX = {
    tir.PARALLEL: "T.parallel",
    tir.VECTORIZED: "T.vectorized",
    tir.UNROLLED: "T.unroll",
    tir.THREAD_BINDING: "T.thread_binding",
}
ALLOC_SCOPES = {"alloc_local": "local", "alloc_shared": "shared"}


def indent(lines: list[str]) -> list[str]:
    return [INDENT + line for line in lines] if lines else [INDENT + "pass"]


def is_dict_attr(s: tir.Stmt | None) -> bool:
    """A `T.attr({"key": value})` (node 0), which 0.27 prints as a dict."""
    return (
        isinstance(s, tir.AttrStmt)
        and isinstance(s.node, tir.IntImm)
        and s.node.dtype == "int32"
        and s.node.value == 0
    )


def is_plain_scalar(buffer: tir.Buffer) -> bool:
    """A local one-element buffer with nothing else set: what `acc: T.float32` declares."""
    plain = not (buffer.strides or buffer.align or buffer.offset_factor or buffer.allocated_addr)
    return (
        tir.is_scalar_buffer(buffer)
        and plain
        and buffer.scope == "local"
        and buffer.elem_offset is None
        and buffer.layout in (DEFAULT_LAYOUT, row_major(buffer.shape))
        and buffer.data.pointee == (buffer.dtype, "local")
    )


def unroll_keyword(annotations: tuple[tuple[str, object], ...]) -> str | None:
    """`unroll=...` of a serial loop whose one annotation is what that keyword sets."""
    if len(annotations) != 1:
        return None
    key, value = annotations[0]
    if key == "disable_unroll" and value is True:
        return "False"
    if key == "pragma_unroll" and (value is True or type(value) is int):
        return str(value)
    return None


def default_offset(buffer: tir.Buffer) -> bool:
    """An offset TVM leaves out: a zero of the index dtype of the buffer's shape (a
    `T.int64(0)` offset of an int32-shaped buffer is printed); a 0-d buffer's index
    dtype is TVM's default, int64."""
    offset = buffer.elem_offset
    index = buffer.shape[0].dtype if buffer.shape else "int64"
    return isinstance(offset, tir.IntImm) and offset.value == 0 and offset.dtype == index


def is_nothing(s: tir.Stmt) -> bool:
    """`T.evaluate(0)`, what an empty sequence parses to."""
    value = s.value if isinstance(s, tir.Evaluate) else None
    return isinstance(value, tir.IntImm) and value.value == 0 and s.comments is None


def is_true(e: tir.PrimExpr) -> bool:
    return isinstance(e, tir.IntImm) and e.value == 1


@dataclass(slots=True)
class Printing:
    """A statement being printed: the frame its lines go to (`frames - 1`), from line
    `start` on, its naming depth, and how many lines were put above it."""

    stmt: tir.Stmt
    frames: int
    depth: int | None
    start: int
    placed: int = 0


class StmtPrinter:
    """Prints TIR statements into frames of lines; holds the expression printer
    (`exprs`) and declares, in the current frame, the vars and buffers it meets
    undeclared. `TIRPrinter` holds one and prints functions."""

    def __init__(self, dialect: str, names: NameTable) -> None:
        self.exprs = ExprPrinter(dialect, names)
        self.names = names
        self.modern = self.exprs.modern
        self.frames: list[list[str]] = [[]]
        self.loops: list[tir.For] = []  # enclosing loops, for `T.axis.remap`
        self.sugar = True  # T.grid and T.axis.remap (script(syntax_sugar=False): neither)
        self.exprs.declare = self.declare_var
        self.exprs.undefined_buffer = self.undefined_buffer
        self.block_kw = "T.sblock" if self.modern else "T.block"
        # the function's comments, for the `n = T.int32()` lines it writes where a var
        # is first used; each role is printed once
        self.func_comments: Comments | None = None
        self.declared: set[str] = set()
        # the statements being printed, outermost first: (id, frame count when it began,
        # naming depth); and where each free var or buffer is declared (see tir_free)
        self.printing: list[Printing] = []
        self.root: tir.Stmt | None = None
        self.homes: dict[int, int] | None = None

    # ------------------------------------------------------------ frames

    def emit(
        self,
        line: str,
        comments: Comments | None = None,
        name: str = "",
        above: Printing | None = None,
    ) -> None:
        """Add a line to the current frame, with the comments of its role; or put it
        `above` a statement being printed (a declaration: after those put there)."""
        lines = []
        found = None if comments is None else role(comments, name)
        if found is not None:
            lines.extend(found.above)
            if found.trailing is not None:
                line = f"{line}  {found.trailing}"
        lines.append(line)
        if above is None:
            self.frames[-1].extend(lines)
            return
        # above the statement printed in that frame now (TVM puts a declaration before
        # the statement it is making, in the frame it chose)
        current = next(p for p in reversed(self.printing) if p.frames == above.frames)
        at = current.start + current.placed
        self.frames[current.frames - 1][at:at] = lines
        current.placed += len(lines)

    def body(self, stmt: tir.Stmt | None) -> list[str]:
        """Lines of `stmt` printed in a fresh frame (its own naming scope)."""
        self.open()
        if stmt is not None:
            self.stmt(stmt)
        return self.close()

    def open(self) -> None:
        self.names.push()
        self.frames.append([])

    def close(self) -> list[str]:
        self.names.pop()
        return self.frames.pop()

    def declare_var(self, var: tir.Var) -> str:
        home = self.home(var)
        name = self.names.define(var, var.name, None if home is None else home.depth)
        self.emit_declaration(f"{name} = {declaration_text(var)}", var, home)
        return name

    def emit_declaration(self, line: str, var: tir.Var, above: Printing | None = None) -> None:
        """`n = T.int32()`, with the comments of the function-level line that
        declared the var, the first time it is printed."""
        role_name = f"decl:{var.name}"
        comments = None if role_name in self.declared else self.func_comments
        self.declared.add(role_name)
        self.emit(line, comments, role_name, above)

    def undefined_buffer(self, buffer: tir.Buffer) -> str:
        home = self.home(buffer)
        name = self.names.define(buffer, buffer.name, None if home is None else home.depth)
        self.emit(f"{name} = {self.buffer_decl(buffer, 'T.Buffer', [])}", above=home)
        return name

    def home(self, obj: tir.Var | tir.Buffer) -> Printing | None:
        """The statement being printed above which a free var or buffer is declared:
        the innermost that holds all its uses, or one further out above which the
        text declared the var (`Comments.declared`); None: the current frame."""
        if not self.printing:
            return None
        if self.root is not None and self.homes is None:
            self.homes = use_homes(self.root)
        found = None if self.homes is None else self.homes.get(id(obj))
        for k in range(len(self.printing) - 1, -1, -1):
            if id(self.printing[k].stmt) != found:
                continue
            for outer in reversed(self.printing[: k + 1]):
                comments = outer.stmt.comments
                if isinstance(obj, tir.Var) and comments and obj.name in comments.declared:
                    return outer
            return self.printing[k]
        return None

    def stmt(self, s: tir.Stmt) -> None:
        if not self.printing:  # a new body: its free vars and buffers are found on demand
            self.root, self.homes = s, None
        with self.printing_of(s):
            getattr(self, "visit_" + type(s).__name__)(s)
        if s.comments is not None:
            self.frames[-1].extend(after_lines(s.comments))

    @contextmanager
    def printing_of(self, s: tir.Stmt) -> Iterator[None]:
        """`s` on the stack of statements being printed while its lines are made."""
        self.printing.append(Printing(s, len(self.frames), self.names.depth, len(self.frames[-1])))
        try:
            yield
        finally:
            self.printing.pop()

    # ------------------------------------------------------------ simple statements

    def visit_SeqStmt(self, s: tir.SeqStmt) -> None:
        i = 0
        while i < len(s.seq):
            with self.printing_of(s.seq[i]):  # a free var's declaration may go above it
                i += self.seq_item(s.seq, i)

    def seq_item(self, seq: tuple[tir.Stmt, ...], i: int) -> int:
        """Print `seq[i]`, with the items after it that print as one with it; returns
        how many items were printed."""
        item, rest = seq[i], seq[i + 1 :]
        if self.modern and is_dict_attr(item) and item.body is None:
            # consecutive flat `T.attr({...})` print as one dict, as TVM does
            group = [item]
            for later in rest:
                if not (is_dict_attr(later) and later.body is None and later.comments is None):
                    break
                group.append(later)
            self.emit(self.dict_attr(group), item.comments)
            return len(group)
        if not self.modern and isinstance(item, tir.AttrStmt) and item.body is None:
            # classic has no flat attr: the rest of the sequence becomes its body
            body = rest[0] if len(rest) == 1 else tir.SeqStmt(rest) if rest else None
            self.stmt(dataclasses.replace(item, body=body))
            return len(seq) - i
        if self.mutable_scalar(item, rest):
            init = rest[0]
            assert isinstance(item, tir.AllocBuffer) and isinstance(init, tir.BufferStore)
            value = self.exprs.text(init.value)
            name = self.names.define(item.buffer, item.buffer.name)
            line = f"{name}: T.{dtype_text(item.buffer.dtype)} = {value}"
            self.emit(line, item.comments)
            return 2
        if isinstance(item, tir.LetStmt):
            self.visit_LetStmt(item, concise=not rest)
            self.frames[-1].extend(after_lines(item.comments))
        elif isinstance(item, tir.AttrStmt):  # TVM never launches a thread flat here
            self.visit_AttrStmt(item, concise=False)
        else:
            self.stmt(item)
        return 1

    def mutable_scalar(self, s: tir.Stmt, rest: tuple[tir.Stmt, ...]) -> bool:
        """`x: T.float32 = v`, as 0.27 prints a local scalar's allocation and first store,
        for the scalar buffer the parser makes of it."""
        if not (isinstance(s, tir.AllocBuffer) and self.exprs.bare_scalar(s.buffer) and rest):
            return False
        if s.form != "alloc_local" or s.annotations or not is_plain_scalar(s.buffer):
            return False
        init = rest[0]
        if not isinstance(init, tir.BufferStore) or init.buffer is not s.buffer:
            return False
        if init.comments is not None or not self.exprs.scalar_access(init.buffer, init.indices):
            return False
        # the parser reads `x: T.f32 = v` as this buffer when x is stored to again, or
        # named as a buffer (`T.reads(x.source[0])`); else it is an immutable Bind
        return any(
            isinstance(n, tir.BufferStore | tir.BufferRegion) and n.buffer is s.buffer
            for n in walk(rest[1:])
        )

    def visit_BufferStore(self, s: tir.BufferStore) -> None:
        target = self.exprs.buffer_name(s.buffer)
        if not self.exprs.scalar_access(s.buffer, s.indices):
            target += self.exprs.indices(s.indices, slices=True)
        self.emit(f"{target} = {self.exprs.text(s.value)}", s.comments)

    def visit_Evaluate(self, s: tir.Evaluate) -> None:
        value = self.exprs.text(s.value)
        self.emit(value if self.bare_call(s.value) else f"T.evaluate({value})", s.comments)

    def bare_call(self, e: tir.PrimExpr) -> bool:
        """Whether an evaluated expression prints without `T.evaluate`: a call, but not
        one 0.27 writes as an operator (`n & m` is a node of its own there)."""
        operator = e.op in BITWISE or e.op == "bitwise_not" if isinstance(e, tir.Call) else False
        return isinstance(e, tir.Call) and not (self.modern and operator)

    def visit_Return(self, s: tir.Return) -> None:
        value = self.exprs.text(s.value)
        self.emit(f"return {value}" if self.modern else f"T.evaluate(T.ret({value}))", s.comments)

    def visit_Break(self, s: tir.Break) -> None:
        self.emit("T.break_loop()" if self.modern else "break", s.comments)

    def visit_Continue(self, s: tir.Continue) -> None:
        self.emit("T.continue_loop()" if self.modern else "continue", s.comments)

    def visit_AssertStmt(self, s: tir.AssertStmt) -> None:
        cond = self.exprs.text(s.condition)
        valued = any(not isinstance(m, str) for m in s.message)
        if self.modern or valued:  # the classic form has no place for a value
            parts = ", ".join(
                string_text(m) if isinstance(m, str) else self.exprs.text(m) for m in s.message
            )
            self.emit(f"assert {cond}, ({string_text(s.error_kind)}, [{parts}])", s.comments)
        else:
            self.emit(f"assert {cond}, {string_text(''.join(s.message))}", s.comments)

    def visit_Bind(self, s: tir.Bind) -> None:
        value = self.exprs.text(s.value)
        name = self.names.get(s.var)
        if name is None:
            name = self.names.define(s.var, s.var.name)
            self.emit(f"{name}: {type_text(s.var)} = {value}", s.comments)
        else:
            self.emit(f"{name} = {value}", s.comments)

    def visit_ScopeIdDef(self, s: tir.ScopeIdDef) -> None:
        """`bx, by = T.cta_id([8, 4])`; keywords only where they differ from TVM's defaults."""
        args = []
        if s.extents is not None:
            args.append(f"[{', '.join(self.exprs.text(e) for e in s.extents)}]")
        if s.preferred is not None:
            args.append(f"preferred=[{', '.join(self.exprs.text(e) for e in s.preferred)}]")
        if s.vars[0].dtype != "int32":
            args.append(f'dtype="{dtype_text(s.vars[0].dtype)}"')
        names = ", ".join(self.names.define(v, v.name) for v in s.vars)
        self.emit(f"{names} = T.{s.kind}({', '.join(args)})", s.comments)

    def visit_LetStmt(self, s: tir.LetStmt, concise: bool = True) -> None:
        value = self.exprs.text(s.value)
        self.open()
        name = self.names.define(s.var, s.var.name)
        if self.modern and is_dict_attr(s.body):  # after the let's line: not alone, so `with`
            self.visit_AttrStmt(s.body, concise=False)  # type: ignore[arg-type]
            self.frames[-1].extend(after_lines(s.body.comments))
        elif self.modern and is_nothing(s.body):
            pass  # a flat let ends its sequence: TVM's Bind has no body to print
        else:
            self.stmt(s.body)
        lines = self.close()
        if self.modern:
            annotation = f"T.let[{type_text(s.var)}]"
            self.emit(f"{name}: {annotation} = {value}", s.comments)
            self.frames[-1].extend(lines)
        elif concise:
            self.emit(f"{name}: {type_text(s.var)} = {value}", s.comments)
            self.frames[-1].extend(lines)
        else:
            self.emit(f"with T.LetStmt({value}) as {name}:", s.comments)
            self.frames[-1].extend(indent(lines))

    def visit_AttrStmt(self, s: tir.AttrStmt, concise: bool = True) -> None:
        if isinstance(s.node, tir.IterVar) and s.body is not None:
            self.launch_thread(s, s.node, concise)
            return
        if s.key == tir.HINT and isinstance(s.node, tir.AttrDict):
            self.hint(s, concise)
            return
        node = self.attr_node(s.node)
        value = self.exprs.text(s.value)
        head = f"T.attr({node}, {string_text(s.key)}, {value})"
        if self.modern and node == "0":  # flat only as the whole body of its parent
            group = [s]  # nested dict attrs print as one dict, as TVM does
            while is_dict_attr(group[-1].body) and group[-1].body.comments is None:
                group.append(group[-1].body)
            s = dataclasses.replace(s, body=group[-1].body)
            head = self.dict_attr(group)
            if s.body is None or concise:
                self.emit(head, s.comments)
                if s.body is not None:
                    self.stmt(s.body)
                return
        if s.body is None:
            self.emit(head, s.comments)
            return
        self.emit(f"with {head}:", s.comments)
        self.frames[-1].extend(indent(self.body(s.body)))

    def hint(self, s: tir.AttrStmt, concise: bool) -> None:
        """`T.hint("message", k=v)`: flat as the whole body of its parent (or with no
        body), `with T.hint(...):` inside a sequence, as TVM prints it."""
        assert isinstance(s.node, tir.AttrDict)
        args = [
            string_text(v) if k == "message" else f"{k}={self.exprs.value_text(v)}"
            for k, v in s.node.items
        ]
        head = f"T.hint({', '.join(args)})"
        if s.body is None or concise:
            self.emit(head, s.comments)
            if s.body is not None:
                self.stmt(s.body)
            return
        self.emit(f"with {head}:", s.comments)
        self.frames[-1].extend(indent(self.body(s.body)))

    def dict_attr(self, group: list[tir.AttrStmt]) -> str:
        pairs = ", ".join(f"{string_text(a.key)}: {self.exprs.text(a.value)}" for a in group)
        return f"T.attr({{{pairs}}})"

    def launch_thread(self, s: tir.AttrStmt, iv: tir.IterVar, concise: bool) -> None:
        """`tx = T.launch_thread("threadIdx.x", n)` when it is the whole body of its
        parent, else `with ... as tx:`; a var already named (`T.env_thread`) is
        launched as `with T.launch_thread(tx, n):`."""
        size, body = self.exprs.text(s.value), s.body
        known = self.names.get(iv.var)
        if known is not None:
            self.emit(f"with T.launch_thread({known}, {size}):", s.comments)
            self.frames[-1].extend(indent(self.body(body)))
            return
        call = f"T.launch_thread({string_text(iv.thread_tag)}, {size})"
        if concise:
            self.emit(f"{self.names.define(iv.var, iv.var.name)} = {call}", s.comments)
            self.stmt(body)
            return
        self.open()
        name = self.names.define(iv.var, iv.var.name)
        self.stmt(body)
        lines = self.close()
        self.emit(f"with {call} as {name}:", s.comments)
        self.frames[-1].extend(indent(lines))

    def attr_node(self, node: object) -> str:
        if node is None:
            return "0"
        if isinstance(node, tir.IntImm) and node.dtype == "int32":
            return str(node.value)
        if isinstance(node, tir.CommReducer):
            return self.comm_reducer(node)
        return self.exprs.value_text(node)

    def comm_reducer(self, r: tir.CommReducer) -> str:
        self.names.push()
        try:
            params = ", ".join(self.names.define(v, v.name) for v in (*r.lhs, *r.rhs))
            results = [self.exprs.text(e) for e in r.result]
        finally:
            self.names.pop()
        body = results[0] if len(results) == 1 else f"({', '.join(results)})"
        identity = ", ".join(self.exprs.text(e) for e in r.identity)
        return f"T.comm_reducer(lambda {params}: {body}, [{identity}])"

    def visit_IfThenElse(self, s: tir.IfThenElse) -> None:
        self.emit(f"if {self.exprs.text(s.condition)}:", s.comments)
        then = self.body(s.then_case)
        self.frames[-1].extend(indent(then))
        if s.else_case is not None:
            orelse = self.body(s.else_case)
            self.emit("else:", s.comments, "else")
            self.frames[-1].extend(indent(orelse))

    def visit_While(self, s: tir.While) -> None:
        self.emit(f"while {self.exprs.text(s.condition)}:", s.comments)
        self.frames[-1].extend(indent(self.body(s.body)))

    def visit_AllocBuffer(self, s: tir.AllocBuffer) -> None:
        declared = self.modern and s.form == "decl_buffer" and not s.annotations
        owner = s.source or self.exprs.data_owner.get(id(s.buffer.data))
        view = view_text(self.exprs, s.buffer, owner) if declared and owner else None
        name = self.names.define(s.buffer, s.buffer.name)
        scalar = s.form == "alloc_local" and not s.annotations and is_plain_scalar(s.buffer)
        if scalar and self.exprs.bare_scalar(s.buffer):
            self.emit(f"{name}: T.{dtype_text(s.buffer.dtype)}", s.comments)  # `acc: T.float32`
            return
        notes = [f"annotations={self.exprs.dict_text(s.annotations)}"] if s.annotations else []
        data = None if s.source is None else f"{self.exprs.buffer_name(s.source)}.data"
        if s.data_value is not None:  # `data=T.address_of(A[4])`
            data = self.exprs.text(s.data_value)
        if declared and view is None and self.named(s.buffer.data):
            view = scalar_text(self.exprs, s.buffer, data or self.exprs.text(s.buffer.data))
        decl = view or self.buffer_decl(s.buffer, "T." + s.form, [], data=data, trailing=notes)
        self.emit(f"{name} = {decl}", s.comments)

    def named(self, var: tir.Var) -> bool:
        """Whether `var` already prints as something (a name, or another buffer's data)."""
        return self.names.get(var) is not None or id(var) in self.exprs.inline

    # ------------------------------------------------------------ loops

    def visit_For(self, s: tir.For) -> None:
        grid = self.grid_of(s)
        self.open()
        self.loops.extend(grid)
        if len(grid) > 1:
            targets = ", ".join(self.names.define(g.loop_var, g.loop_var.name) for g in grid)
            extents = ", ".join(self.exprs.text(g.extent) for g in grid)
            head = f"for {targets} in T.grid({extents}):"
        else:
            head = f"for {self.names.define(s.loop_var, s.loop_var.name)} in {self.loop_iter(s)}:"
        self.stmt(grid[-1].body)
        del self.loops[-len(grid) :]
        lines = self.close()
        self.emit(head, s.comments)
        self.frames[-1].extend(indent(lines))

    def grid_of(self, s: tir.For) -> list[tir.For]:
        """The loops `T.grid` folds: perfectly nested serial loops from 0, without
        annotations or step, whose extents do not use the grid's own vars (nor comments,
        which keep an inner loop on its own line)."""
        if not self.sugar:
            return [s]
        grid: list[tir.For] = []
        seen: set[int] = set()
        loop: tir.Stmt = s
        while isinstance(loop, tir.For) and (loop is s or loop.comments is None):
            plain = loop.kind == tir.SERIAL and not loop.annotations and int_const(loop.min) == 0
            step_ok = loop.step is None or int_const(loop.step) == 1
            if not (plain and step_ok) or any(id(v) in seen for v in iter_vars_of(loop.extent)):
                break
            grid.append(loop)
            seen.add(id(loop.loop_var))
            loop = loop.body
        return grid or [s]

    def loop_iter(self, s: tir.For) -> str:
        args = []
        if int_const(s.min) == 0:
            args.append(self.exprs.text(s.extent))
        else:
            args += [self.exprs.text(s.min), self.exprs.text(range_end(s.min, s.extent))]
        step = None
        if s.step is not None and int_const(s.step) != 1:
            if len(args) == 1:
                args.insert(0, self.exprs.text(s.min))
            step = self.exprs.text(s.step)  # `range(a, b, 3)`, `T.unroll(a, b, step=3)`
        if s.kind == tir.THREAD_BINDING:
            args.append(f"thread={string_text(s.thread)}")
        unroll = unroll_keyword(s.annotations) if s.kind == tir.SERIAL else None
        if unroll is not None:
            args.append(f"unroll={unroll}")
        elif s.annotations:
            args.append(f"annotations={self.exprs.dict_text(s.annotations)}")
        if s.kind == tir.SERIAL:
            prefix = "T.serial" if s.annotations else "range"
        else:
            prefix = LOOP_PREFIX[s.kind]
        if step is not None:
            args.append(step if prefix == "range" else f"step={step}")
        return f"{prefix}({', '.join(args)})"

    # ------------------------------------------------------------ blocks

    def visit_BlockRealize(self, s: tir.BlockRealize) -> None:
        self.block(s.block, s)

    def visit_Block(self, s: tir.Block) -> None:
        self.block(s, None)

    def block(self, b: tir.Block, realize: tir.BlockRealize | None) -> None:
        notes = b.comments  # the header lines'; the `with` line's are the realize's
        self.open()
        self.block_axes(b, realize)
        if realize is not None and not is_true(realize.predicate):
            self.emit(f"T.where({self.exprs.text(realize.predicate)})", notes, "where")
        self.emit(f"T.reads({', '.join(self.exprs.region(r) for r in b.reads)})", notes, "reads")
        self.emit(f"T.writes({', '.join(self.exprs.region(r) for r in b.writes)})", notes, "writes")
        if b.annotations:
            attr = "T.sblock_attr" if self.modern else "T.block_attr"
            self.emit(f"{attr}({self.exprs.dict_text(b.annotations)})", notes, "attr")
        self.block_allocs(b.alloc_buffers, notes)
        for i, match in enumerate(b.match_buffers):
            source = self.exprs.region(match.source)
            name = self.names.define(match.buffer, match.buffer.name)
            decl = self.buffer_decl(match.buffer, "T.match_buffer", [source], region=True)
            self.emit(f"{name} = {decl}", notes, f"match:{i}")
        if b.init is not None:
            self.emit("with T.init():", notes, "init")
            self.frames[-1].extend(indent(self.body(b.init)))
        self.stmt(b.body)
        lines = self.close()
        extra = "" if realize is not None else ", no_realize=True"
        head = f"with {self.block_kw}({string_text(b.name)}{extra}):"
        self.emit(head, realize.comments if realize is not None else notes)
        self.frames[-1].extend(indent(lines))

    def block_allocs(self, buffers: tuple[tir.Buffer, ...], notes: Comments | None) -> None:
        form = "T.sblock_alloc_buffer" if self.modern else "T.alloc_buffer"
        for i, buffer in enumerate(buffers):
            name = self.names.define(buffer, buffer.name)
            self.emit(f"{name} = {self.buffer_decl(buffer, form, [])}", notes, f"alloc:{i}")

    def block_axes(self, b: tir.Block, realize: tir.BlockRealize | None) -> None:
        """Single `T.axis.*` lines, with maximal runs of loop-bound spatial and
        reduce axes grouped into one `T.axis.remap`."""
        loops = {id(loop.loop_var): loop for loop in self.loops}
        run: list[int] = []
        for i, iv in enumerate(b.iter_vars):
            if role(b.comments, f"axis:{i}") is not None:
                self.flush_remap(b, realize, run)  # a commented axis starts a line
            value = realize.iter_values[i] if realize is not None else None
            loop = loops.get(id(value)) if isinstance(value, tir.Var) else None
            if (
                self.sugar
                and loop is not None
                and iv.kind in (tir.SPATIAL, tir.REDUCE)
                and same_expr(loop.min, iv.dom.min)
                and same_expr(loop.extent, iv.dom.extent)
            ):
                run.append(i)
                continue
            self.flush_remap(b, realize, run)
            self.single_axis(b, realize, i)
        self.flush_remap(b, realize, run)

    def flush_remap(self, b: tir.Block, realize: tir.BlockRealize | None, run: list[int]) -> None:
        if len(run) == 1:
            self.single_axis(b, realize, run[0])
        elif run:
            assert realize is not None
            kinds = "".join("S" if b.iter_vars[i].kind == tir.SPATIAL else "R" for i in run)
            values = ", ".join(self.exprs.text(realize.iter_values[i]) for i in run)
            targets = ", ".join(
                self.names.define(b.iter_vars[i].var, b.iter_vars[i].var.name) for i in run
            )
            line = f'{targets} = T.axis.remap("{kinds}", [{values}])'
            self.emit(line, b.comments, f"axis:{run[0]}")
        run.clear()

    def single_axis(self, b: tir.Block, realize: tir.BlockRealize | None, i: int) -> None:
        iv = b.iter_vars[i]
        if int_const(iv.dom.min) == 0:
            dom = self.exprs.text(iv.dom.extent)
        else:
            end = range_end(iv.dom.min, iv.dom.extent)
            dom = f"({self.exprs.text(iv.dom.min)}, {self.exprs.text(end)})"
        args = dom if realize is None else f"{dom}, {self.exprs.text(realize.iter_values[i])}"
        name = self.names.define(iv.var, iv.var.name)
        self.emit(f"{name} = T.axis.{iv.kind}({args})", b.comments, f"axis:{i}")

    # ------------------------------------------------------------ buffer declarations

    def buffer_decl(
        self,
        buffer: tir.Buffer,
        callee: str,
        args: list[str],
        *,
        region: bool = False,
        dtype_always: bool = False,
        own_data: bool = False,
        data: str | None = None,
        trailing: list[str] | None = None,
    ) -> str:
        """`T.alloc_buffer((4,), "int64", scope="shared")`-style declarations:
        dtype omitted when float32, keywords only when not the default. The data
        var is taken over as `buf.data` unless it already has a name; `data` is the
        text `data=` gives (always printed when given: a view's source, or the pointer
        expression a declaration's fresh data var is bound to)."""
        args = list(args)
        args.append(self.shape_text(buffer.shape))
        if dtype_always or buffer.dtype != "float32":
            args.append(f'"{dtype_text(buffer.dtype)}"')
        var, own = buffer.data, f"{self.exprs.buffer_name(buffer)}.data"
        # a declaration's own data var is named after it (TVM's, and the parser's): a var
        # of another name is a pointer the text declared (`data=data_ptr`)
        declared_elsewhere = callee == "T.decl_buffer" and var.name != buffer.name
        fresh = (
            not declared_elsewhere
            and self.names.get(var) is None
            and self.exprs.inline.setdefault(id(var), own) == own
        )
        if fresh:
            self.exprs.data_owner.setdefault(id(var), buffer)
        if data is not None or not (own_data or fresh):
            args.append(f"data={data or self.exprs.text(var)}")
        args += self.buffer_kwargs(buffer, callee, region) + (trailing or [])
        return f"{callee}({', '.join(args)})"

    def fresh_stride(self, buffer: tir.Buffer, k: int) -> bool:
        """Whether the k-th stride is a var this declaration introduces: 0.27 quotes
        it there and writes every use as `A.strides[k]` (which this records)."""
        stride = buffer.strides[k]
        if not isinstance(stride, tir.Var) or id(stride) in self.exprs.inline:
            return False
        if self.names.get(stride) is not None:
            return False
        self.exprs.inline[id(stride)] = f"{self.exprs.buffer_name(buffer)}.strides[{k}]"
        return True

    def stride_text(self, buffer: tir.Buffer, k: int) -> str:
        stride = buffer.strides[k]
        if self.modern and self.fresh_stride(buffer, k):
            return f'"{sanitize(stride.name)}"'
        return self.exprs.text(stride)

    def buffer_kwargs(self, buffer: tir.Buffer, callee: str, region: bool) -> list[str]:
        kwargs = []
        if buffer.strides:
            texts = [self.stride_text(buffer, k) for k in range(len(buffer.strides))]
            kwargs.append(f"strides=({', '.join(texts)}{',' if len(texts) == 1 else ''})")
        force_factor = False
        offset = buffer.elem_offset
        fresh = isinstance(offset, tir.Var) and self.names.get(offset) is None
        if fresh and id(offset) not in self.exprs.inline:
            force_factor = True  # a fresh offset var is implied by the declaration
            self.exprs.inline.setdefault(
                id(offset), f"{self.exprs.buffer_name(buffer)}.elem_offset"
            )
        elif offset is not None and not default_offset(buffer):
            kwargs.append(f"elem_offset={self.exprs.text(offset)}")
        if region and offset is None and buffer.offset_factor:
            force_factor = True
        implied = ALLOC_SCOPES.get(callee.removeprefix("T."), "global")
        if buffer.scope != implied:
            kwargs.append(f"scope={string_text(buffer.scope)}")
        if buffer.align not in (0, 64):
            kwargs.append(f"align={buffer.align}")
        if force_factor or buffer.offset_factor:
            kwargs.append(f"offset_factor={buffer.offset_factor or 1}")
        return kwargs + layout_kwargs(buffer, self.exprs.text)

    def shape_text(self, shape: tuple[tir.PrimExpr, ...]) -> str:
        items = [self.exprs.text(e) for e in shape]
        return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"

"""Prim functions as TVM prints them, in the classic and the 0.27 spelling.

The function-level decisions live here: decorator arguments, buffer params
(classic keeps `T.Buffer` only for simple buffers and falls back to a handle
plus `T.match_buffer`; 0.27 types every buffer param and lifts symbolic
shape vars to module-level `TypeVar`s), `T.func_attr`, and the implicit root
block that is printed as a comment."""

from __future__ import annotations

from collections.abc import Iterator

from tvmlite.dsl import tir
from tvmlite.dsl.analysis import contains_block
from tvmlite.dsl.comments import Comments
from tvmlite.dsl.module import TVM027
from tvmlite.dsl.walk import walk
from tvmlite.printer.comments import after_lines, noted, role
from tvmlite.printer.literals import dtype_text, string_text
from tvmlite.printer.names import NameTable, sanitize
from tvmlite.printer.tir_expr import declaration_text, int_const, iter_vars_of, type_text
from tvmlite.printer.tir_layout import layout_kwargs
from tvmlite.printer.tir_stmt import StmtPrinter, default_offset, indent, is_true

__all__ = ["TIRPrinter"]


def buffer_exprs(buffer: tir.Buffer) -> Iterator[tir.PrimExpr]:
    yield from buffer.shape
    yield from buffer.strides
    if buffer.elem_offset is not None:
        yield buffer.elem_offset


def implicit_root(body: tir.Stmt) -> tir.Block | None:
    """The root block TVM elides: no bindings, predicate, regions, annotations,
    init or matches, and something that needs it (allocations or blocks)."""
    if not isinstance(body, tir.BlockRealize) or body.iter_values:
        return None
    block = body.block
    if not is_true(body.predicate) or block.iter_vars:
        return None
    if block.annotations or block.match_buffers or block.reads or block.writes:
        return None
    if block.init is not None:
        return None
    inner = block.body
    if block.alloc_buffers:
        return block
    if isinstance(inner, tir.BlockRealize):
        return block if inner.block.iter_vars else None
    return block if contains_block(inner) else None


def is_simple(buffer: tir.Buffer) -> bool:
    """Classic prints a buffer param inline as `T.Buffer` only when it has no
    vars in its shape, no strides or offset, and default scope and alignment."""
    if buffer.strides or any(True for e in buffer.shape for _ in iter_vars_of(e)):
        return False
    if buffer.elem_offset is not None and int_const(buffer.elem_offset) != 0:
        return False
    return buffer.scope == "global" and buffer.align in (0, 64) and buffer.offset_factor in (0, 1)


class TIRPrinter:
    """Prints one prim function at a time; names come from the shared table.
    Holds the statement printer (`stmts`) and its expression printer (`exprs`,
    which the Relax printer uses for TIR scalars)."""

    def __init__(self, dialect: str, names: NameTable) -> None:
        self.stmts = StmtPrinter(dialect, names)
        self.exprs = self.stmts.exprs
        self.names = names
        self.modern = self.exprs.modern
        self.param_ids: set[int] = set()
        self.keys_as_written = False  # set for a module printed in its own spelling
        self.written: str | None = None  # the spelling the IR was parsed from, if any
        self.tirx_with_blocks = False  # the function being printed: tirx, no s_tir flag

    def prim_func(
        self, name: str, func: tir.PrimFunc, module_level: bool
    ) -> tuple[list[str], list[str]]:
        """Lines of the function at indent 0 and the module-level TypeVar names
        it needs (0.27 only). `module_level` is accepted for the caller's
        symmetry with Relax; TIR prints the same either way."""
        self.stmts.frames, self.stmts.loops, self.exprs.inline, self.exprs.data_owner = (
            [[]],
            [],
            {},
            {},
        )
        self.buffer_named: set[int] = set()
        self.stmts.func_comments, self.stmts.declared = func.comments, set()
        self.names.push()
        try:
            return self.function(name, func)
        finally:
            self.names.pop()

    def function(self, name: str, func: tir.PrimFunc) -> tuple[list[str], list[str]]:
        buffers = {id(var): buf for var, buf in func.buffer_map}
        params = {id(p) for p in func.params}
        symbolic = self.symbolic_vars(func, buffers, params)
        self.buffer_named = self.named_by_buffer(func, buffers) if self.modern else set()
        for var in reversed(symbolic):  # TVM names the last param's vars first
            if id(var) not in self.buffer_named:  # `A.strides[k]`, not a name in the body
                self.names.define(var, var.name)
        inline = {
            id(p)
            for p in func.params
            if id(p) in buffers and (self.modern or is_simple(buffers[id(p)]))
        }
        self.param_ids = params
        for param in func.params:
            if id(param) not in buffers:
                self.names.define(param, param.name)
        defined: set[int] = set()  # params and symbolic vars the signature has defined
        args = []
        for param in func.params:
            args.append(self.param(param, buffers.get(id(param)), id(param) in inline, defined))
            defined.add(id(param))
        type_vars: list[str] = []
        top = len(self.stmts.frames[-1])
        if self.modern:  # TVM declares the function's own symbolic vars before its attrs
            type_vars = [self.names.get(v) or v.name for v in symbolic if v.dtype == "int64"]
            for group in self.declaration_groups(func, buffers, symbolic):
                names = ", ".join(self.names.get(v) or v.name for v in group)
                types = ", ".join(declaration_text(v) for v in group)
                self.stmts.emit_declaration(f"{names} = {types}", group[0])
            self.func_attrs(name, func)
        else:
            self.func_attrs(name, func)
            top = len(self.stmts.frames[-1])
            for var in self.declaration_order(symbolic, buffers.values()):
                self.stmts.emit_declaration(f"{self.names.get(var)} = {declaration_text(var)}", var)
        self.stmts.exprs.s_tir = self.flags_s_tir(func)
        self.tirx_with_blocks = self.modern and not self.stmts.exprs.s_tir
        matches = len(self.stmts.frames[-1])
        if not self.modern:
            self.match_buffers(func, buffers, inline)
        self.function_body(func.body, func.comments)
        body = self.stmts.frames.pop()
        body[matches:matches] = self.unprinted(func.comments, "match_buffer:")
        body[top:top] = self.unprinted(func.comments, "decl:")
        self.stmts.frames = [[]]
        ret = f" -> T.{dtype_text(func.ret_type)}" if func.ret_type is not None else ""
        lines = noted(self.decorator(func), role(func.comments))
        lines += noted(f"def {name}({', '.join(args)}){ret}:", role(func.comments, "def"))
        return lines + indent(body) + after_lines(func.comments), type_vars

    # ------------------------------------------------------------ signature

    def symbolic_vars(
        self, func: tir.PrimFunc, buffers: dict[int, tir.Buffer], params: set[int]
    ) -> list[tir.Var]:
        """Vars used by param buffers that are not params, in first-use order."""
        seen: dict[int, tir.Var] = {}
        for param in func.params:
            buffer = buffers.get(id(param))
            if buffer is None:
                continue
            for e in buffer_exprs(buffer):
                for var in iter_vars_of(e):
                    if id(var) not in params:
                        seen.setdefault(id(var), var)
        return list(seen.values())

    def named_by_buffer(self, func: tir.PrimFunc, buffers: dict[int, tir.Buffer]) -> set[int]:
        """Vars a param buffer introduces that 0.27 names through the buffer, when
        nothing else in the signature uses them: a stride var (quoted there, then
        `A.strides[k]`) and the offset var an `offset_factor` implies (`A.elem_offset`)."""
        named: set[int] = set()
        other: set[int] = set()
        for param in func.params:
            buffer = buffers.get(id(param))
            if buffer is None:
                continue
            for e in buffer.shape:
                other.update(id(v) for v in iter_vars_of(e))
            own = [e for e in buffer.strides]
            if buffer.offset_factor and buffer.elem_offset is not None:
                own.append(buffer.elem_offset)
            elif buffer.elem_offset is not None:
                other.update(id(v) for v in iter_vars_of(buffer.elem_offset))
            for e in own:
                if isinstance(e, tir.Var) and id(e) not in other and id(e) not in named:
                    named.add(id(e))
                else:
                    other.update(id(v) for v in iter_vars_of(e))
        return named - other

    def declaration_groups(
        self, func: tir.PrimFunc, buffers: dict[int, tir.Buffer], symbolic: list[tir.Var]
    ) -> list[list[tir.Var]]:
        """0.27's declarations of the int32 vars each param buffer introduces, as TVM
        orders them: a line of its own for each var inside an expression dim (`x =
        T.int32()` for `"x * 8"`), then one line for the plain dims (`m, n = T.int32(),
        T.int32()`); stride vars the signature names are `A.strides[k]` and need none."""
        wanted = {
            id(v): v for v in symbolic if v.dtype != "int64" and id(v) not in self.exprs.inline
        }
        groups = []
        for param in func.params:
            buffer = buffers.get(id(param))
            if buffer is None:
                continue
            plain = {id(d) for d in buffer.shape if isinstance(d, tir.Var)}
            group: list[tir.Var] = []
            for e in buffer_exprs(buffer):
                for var in iter_vars_of(e):
                    if wanted.pop(id(var), None) is None:
                        continue
                    if id(var) in plain:
                        group.append(var)
                    else:
                        groups.append([var])
            if group:
                groups.append(group)
        return groups

    def declaration_order(self, symbolic: list[tir.Var], buffers: object) -> list[tir.Var]:
        """Classic `n = T.int64()` lines: shape vars by name (the order of the
        module's TypeVars they stand for), then offset vars in first-use order."""
        in_shape = {id(v) for b in buffers for e in b.shape + b.strides for v in iter_vars_of(e)}
        shape_vars = sorted((v for v in symbolic if id(v) in in_shape), key=self.names.get)
        return shape_vars + [v for v in symbolic if id(v) not in in_shape]

    def param(
        self, param: tir.Var, buffer: tir.Buffer | None, inline: bool, defined: set[int]
    ) -> str:
        if buffer is None:
            return f"{self.names.define(param, param.name)}: {type_text(param)}"
        if not inline:
            # the corpus' classic texts name the handle after its buffer; a handle that
            # already has such a name keeps it, so that printing is a fixed point even
            # when the buffer's own name had to be de-duplicated (`buf` -> `buf_1`)
            hint = param.name if param.name.startswith("var_") else "var_" + buffer.name
            return f"{self.names.define(param, hint)}: T.handle"
        name = self.names.define(buffer, buffer.name)
        self.exprs.inline[id(buffer.data)] = f"{name}.data"
        self.exprs.data_owner[id(buffer.data)] = buffer
        shape = [self.signature_expr(e, defined) for e in buffer.shape]
        shape_text = f"({shape[0]},)" if len(shape) == 1 else f"({', '.join(shape)})"
        args = [shape_text, f'"{dtype_text(buffer.dtype)}"']
        if buffer.strides:
            strides = [self.param_stride(buffer, k, defined) for k in range(len(buffer.strides))]
            args.append(f"strides=({', '.join(strides)}{',' if len(strides) == 1 else ''})")
        offset = buffer.elem_offset
        if isinstance(offset, tir.Var) and id(offset) in self.buffer_named:
            self.exprs.inline[id(offset)] = f"{name}.elem_offset"
        elif offset is not None and not default_offset(buffer):
            text = self.signature_expr(offset, defined, quote_params=False)
            args.append(f"elem_offset={text}")
        if buffer.scope != "global":
            args.append(f"scope={string_text(buffer.scope)}")
        if buffer.align not in (0, 64):
            args.append(f"align={buffer.align}")
        if buffer.offset_factor:  # 0 stands for TVM's default (1, with a zero offset)
            args.append(f"offset_factor={buffer.offset_factor}")
        args += layout_kwargs(buffer, lambda e: self.signature_expr(e, defined))
        return f"{name}: T.Buffer({', '.join(args)})"

    def param_stride(self, buffer: tir.Buffer, k: int, defined: set[int]) -> str:
        stride = buffer.strides[k]
        if self.modern and self.stmts.fresh_stride(buffer, k):
            defined.add(id(stride))
            return f'"{sanitize(stride.name)}"'
        return self.signature_expr(stride, defined, quote_params=False)

    def signature_expr(self, e: tir.PrimExpr, defined: set[int], quote_params: bool = True) -> str:
        """A shape entry in a 0.27 signature, quoted when it uses a var not defined
        yet (a param printed later, a symbolic var met for the first time), which the
        quoted text then defines. int64 symbolic vars are module-level TypeVars: bare
        on their own, but never defined inside the function, so an expression over
        one stays quoted. TVM writes a stride or offset that uses only params bare
        (`quote_params=False`)."""
        text = self.exprs.text(e)
        used = list(iter_vars_of(e))
        type_vars = {id(v) for v in used if id(v) not in self.param_ids and v.dtype == "int64"}
        known = defined if quote_params else defined | self.param_ids
        undefined = any(id(v) not in known for v in used)
        quoted = undefined and not (isinstance(e, tir.Var) and id(e) in type_vars)
        defined.update(id(v) for v in used if id(v) not in type_vars)
        return f'"{text}"' if quoted else text

    def match_buffers(
        self, func: tir.PrimFunc, buffers: dict[int, tir.Buffer], inline: set[int]
    ) -> None:
        for param in func.params:
            buffer = buffers.get(id(param))
            if buffer is None or id(param) in inline:
                continue
            handle = self.names.get(param) or param.name
            name = self.names.define(buffer, buffer.name)
            decl = self.stmts.buffer_decl(
                buffer, "T.match_buffer", [handle], dtype_always=True, own_data=True
            )
            self.stmts.declared.add(f"match_buffer:{param.name}")
            self.stmts.emit(f"{name} = {decl}", func.comments, f"match_buffer:{param.name}")

    def unprinted(self, comments: Comments | None, prefix: str) -> list[str]:
        """The comments of declarations (`prefix`: "decl:" or "match_buffer:") the
        text has and the printer did not write (a var nothing uses, a buffer printed
        in the signature): they stay where such lines are printed."""
        lines: list[str] = []
        for key, remark in comments.roles if comments is not None else ():
            if key.startswith(prefix) and key not in self.stmts.declared:
                lines.extend(remark.lines())
        return lines

    def decorator(self, func: tir.PrimFunc) -> str:
        args = []
        if "global_symbol" not in dict(func.attrs):
            args.append("private=True")
        if self.modern and self.flags_s_tir(func):
            args.append("s_tir=True")
        if func.attr(tir.PERSISTENT) is True:
            args.append("persistent=True")
        return "@T.prim_func" + (f"({', '.join(args)})" if args else "")

    def flags_s_tir(self, func: tir.PrimFunc) -> bool:
        """Whether the function prints `s_tir=True`: its flag, as a 0.27 text wrote it
        (a tirx function may hold blocks); classic has no flag, its blocks imply it."""
        return func.s_tir or (self.written != TVM027 and contains_block(func.body))

    def func_attrs(self, name: str, func: tir.PrimFunc) -> None:
        attrs = tuple(
            (self.attr_key(k), v)
            for k, v in func.attrs
            if not (k == "global_symbol" and v == name) and not (k == tir.PERSISTENT and v is True)
        )
        if attrs:
            self.stmts.emit(
                f"T.func_attr({self.exprs.dict_text(attrs)})", func.comments, "func_attr"
            )
        elif (written := role(func.comments, "func_attr")) is not None:
            self.stmts.frames[-1].extend(written.lines())  # its attributes print elsewhere

    def attr_key(self, key: str) -> str:
        """`tir.`/`tirx.` key prefixes follow the dialect printed; a module printed in
        the spelling it was written in keeps them as written (TVM 0.27 prints a
        `tir.noalias` it was given as such)."""
        if self.keys_as_written:
            return key
        for prefix in ("tir.", "tirx."):
            if key.startswith(prefix):
                return ("tirx." if self.modern else "tir.") + key[len(prefix) :]
        return key

    # ------------------------------------------------------------ body

    def env_threads(self, body: tir.Stmt) -> None:
        """A thread var launched more than once is declared first, as TVM does:
        `tx = T.env_thread("threadIdx.x")`."""
        launches: dict[int, list[tir.IterVar]] = {}
        for node in walk(body):
            if isinstance(node, tir.AttrStmt) and isinstance(node.node, tir.IterVar):
                launches.setdefault(id(node.node.var), []).append(node.node)
        for ivs in launches.values():
            if len(ivs) > 1:
                name = self.names.define(ivs[0].var, ivs[0].var.name)
                self.stmts.emit(f"{name} = T.env_thread({string_text(ivs[0].thread_tag)})")

    def function_body(self, body: tir.Stmt, comments: Comments | None) -> None:
        """The body, under the comment line that stands for an implicit root block
        (the user's comments above that line are the function's "root" ones)."""
        self.env_threads(body)
        above = role(comments, "root")
        if above is not None:
            self.stmts.frames[-1].extend(above.lines())
        root = implicit_root(body)
        if root is not None and not root.alloc_buffers and self.tirx_with_blocks:
            root = None  # TVM 0.27 completes a tirx function's blocks with no root block
            body = implicit_root(body).body  # type: ignore[union-attr]
        if root is None:
            self.stmts.stmt(body)
            return
        self.stmts.emit(f'# with {self.stmts.block_kw}("root"):')
        self.stmts.block_allocs(root.alloc_buffers, root.comments)
        self.stmts.stmt(root.body)

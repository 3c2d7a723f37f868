"""`tvmlite.parse`: text to IR. Owns the module level: the dialect, module-level
`TypeVar`s, the `@I.ir_module` class and its members; function bodies go to
`tir/func` (prim functions) and `relax/func` (Relax functions).

Two passes over a module: first every member's name and kind and every Relax
signature, then the bodies, so functions may refer to ones defined later.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar, overload

from tvmlite.diagnostics import ParseError, Source, TVMLiteError, did_you_mean
from tvmlite.dsl import relax, tir
from tvmlite.dsl.comments import (
    HEADER_LINES,
    Comments,
    Remark,
    add,
    carried,
    footer_off,
    loose,
    merged,
    take_head,
)
from tvmlite.dsl.dialect import detect_dialect
from tvmlite.dsl.metadata import (
    ConstantsSource,
    ConstantTable,
    missing_table_message,
    sidecar_path,
)
from tvmlite.dsl.module import IRModule, RawCall
from tvmlite.dsl.parse.relax.expr import metadata_reference
from tvmlite.dsl.parse.relax.func import RelaxFunctionParser
from tvmlite.dsl.parse.relax.sinfo import RelaxContext, SinfoParser, bool_literal, literal_value
from tvmlite.dsl.parse.scope import MAX_NESTING, bind_call
from tvmlite.dsl.parse.tir.func import parse_prim_func
from tvmlite.dsl.verify.relax import STRUCTURAL, WELL_FORMED, verify_module
from tvmlite.dsl.verify.sinfo import prim_signature
from tvmlite.grammar import parse_syntax, syntax, tokenize

# Imports a TVMScript file written as Python carries; they name what is predefined.
_NAMESPACE_IMPORTS = {
    ("tvm.script", ("ir", "I")),
    ("tvm.script", ("tir", "T")),
    ("tvm.script", ("tirx", "T")),
    ("tvm.script", ("relax", "R")),
    ("tvm.tirx.layout", ("Axis", None)),
    ("typing", ("TypeVar", None)),
    ("__future__", ("annotations", None)),
}
_UNSUPPORTED_DECORATORS = ("I.pyfunc", "T.macro", "T.inline", "R.macro", "R.inline")
_OPAQUE = relax.FuncStructInfo(None, relax.ObjectStructInfo())


Parsed = IRModule | tir.PrimFunc | relax.Function
# What `expect=` may ask for: one kind of what a text can hold.
P = TypeVar("P", IRModule, tir.PrimFunc, relax.Function)
_KINDS = {
    IRModule: "an @I.ir_module class",
    tir.PrimFunc: "a lone @T.prim_func",
    relax.Function: "a lone @R.function",
}


@overload
def parse(
    text: str,
    filename: str | None = None,
    *,
    constants: ConstantsSource | None = None,
    check_well_formed: bool = True,
    expect: None = None,
) -> Parsed: ...


@overload
def parse(
    text: str,
    filename: str | None = None,
    *,
    constants: ConstantsSource | None = None,
    check_well_formed: bool = True,
    expect: type[P],
) -> P: ...


def parse(
    text: str,
    filename: str | None = None,
    *,
    constants: ConstantsSource | None = None,
    check_well_formed: bool = True,
    expect: type[Any] | None = None,
) -> Parsed:
    """Parse `.tvms` text: an `@I.ir_module` class gives an IRModule, a lone
    `@T.prim_func` / `@R.function` gives that function. Raises ParseError only.
    `expect=tvmlite.IRModule` (or `tir.PrimFunc`, `relax.Function`) refuses text
    that holds anything else, and gives typed code that type as the result.
    The text's comments are kept on the nodes they belong to (dsl/comments.py).
    `constants` gives the values of `metadata["KEY"][i]` references (dsl/metadata.py):
    a constants file's path or a mapping `{"ir.GenericConst": [array, ...]}`.

    The module is checked as TVM's parser checks it by default (its whole
    well-formedness check: docs/frontend-contracts.md); `check_well_formed=False`,
    TVM's keyword (also a decorator's: `@I.ir_module(check_well_formed=False)`,
    `@R.function(...)`, `@T.prim_func(...)`), keeps a module such as TVM's own tests
    print, which `lower` and `build` then refuse."""
    if expect is not None and expect not in _KINDS:
        raise TVMLiteError(
            f"parse: expect must be IRModule, tir.PrimFunc or relax.Function, got {expect!r}"
        )
    parsed: Parsed = _guarded(text, filename, False, constants, check_well_formed)  # type: ignore[assignment]
    if expect is not None and not isinstance(parsed, expect):
        held = _KINDS[type(parsed)]
        raise ParseError(f"expected {_KINDS[expect]}, the text holds {held}", parsed.span, filename)
    return parsed


def parse_commented(
    text: str,
    filename: str | None = None,
    *,
    constants: ConstantsSource | None = None,
    check_well_formed: bool = True,
) -> tuple[Parsed, syntax.Module]:
    """`parse`, and the text's syntax tree, which lists every comment of the text
    (`notes`) and those no node could keep where they stand (`lost`)."""
    return _guarded(text, filename, True, constants, check_well_formed)  # type: ignore[return-value]


def _guarded(
    text: str,
    filename: str | None,
    keep_tree: bool,
    constants: ConstantsSource | None,
    check_well_formed: bool,
) -> Parsed | tuple[Parsed, syntax.Module]:
    name = filename or "<string>"
    if not isinstance(text, str):
        raise ParseError(f"parse expects text (str), not {type(text).__name__}", None, name)
    if not isinstance(check_well_formed, bool):
        raise ParseError(
            f"check_well_formed must be True or False, not {check_well_formed!r}", None, name
        )
    try:
        table = None if constants is None else ConstantTable(constants)
    except TVMLiteError as err:
        raise ParseError(str(err), None, name) from None
    try:
        with _collector_paused():
            parsed = _parse(text, name, table, check_well_formed)
            if keep_tree:
                return parsed
            # the syntax tree goes while the collector is still paused: the first
            # collection after the parse then has only the IR to scan
            result = parsed[0]
            del parsed
        return result
    except RecursionError:  # the nesting limit is meant to make this unreachable
        raise ParseError(
            f"internal error while parsing: Python's stack ran out below the nesting limit "
            f"({MAX_NESTING} levels)",
            None,
            name,
        ) from None
    except MemoryError:
        raise ParseError("internal error while parsing: out of memory", None, name) from None


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a text is parsed.

    A parse allocates hundreds of thousands of syntax and IR nodes that all stay
    alive; each full collection the allocations trigger rescans every one of them
    and frees nothing (reference counting frees the temporaries), which cost about
    a tenth of a large parse. The collector runs as usual once the parse is over."""
    if not gc.isenabled():
        yield  # paused by a caller (or an enclosing parse): leave it so
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@overload
def parse_file(
    path: str | os.PathLike[str],
    *,
    constants: ConstantsSource | None = None,
    check_well_formed: bool = True,
    expect: None = None,
) -> Parsed: ...


@overload
def parse_file(
    path: str | os.PathLike[str],
    *,
    constants: ConstantsSource | None = None,
    check_well_formed: bool = True,
    expect: type[P],
) -> P: ...


def parse_file(
    path: str | os.PathLike[str],
    *,
    constants: ConstantsSource | None = None,
    check_well_formed: bool = True,
    expect: type[Any] | None = None,
) -> Parsed:
    """Parse a UTF-8 `.tvms` file, as `parse`. A file that cannot be opened raises
    what `open` raises (FileNotFoundError, PermissionError, ...), text that is not
    UTF-8 a ParseError. The values of its metadata references come from `constants`,
    else from the constants file beside it (`m.constants.npz` for `m.tvms`, as `save`
    writes). `expect` as for `parse`."""
    name = os.fspath(path)
    with open(name, encoding="utf-8") as f:
        try:
            text = f.read()
        except UnicodeDecodeError as exc:
            raise ParseError(f"{name} is not UTF-8 text ({exc.reason})", None, name) from None
    if constants is None and sidecar_path(name).is_file():
        constants = sidecar_path(name)
    return parse(
        text, name, constants=constants, check_well_formed=check_well_formed, expect=expect
    )


def _parse(
    text: str, filename: str, constants: ConstantTable | None, check_well_formed: bool
) -> tuple[Parsed, syntax.Module]:
    tokens = tokenize(text)
    tree = parse_syntax(text, filename, tokens)
    ctx = RelaxContext(detect_dialect(text, tokens), Source(text, filename), constants=constants)
    ctx.check_well_formed = check_well_formed
    if constants is None and "metadata" in text:
        _reject_metadata(tree, ctx)
    return _ModuleParser(ctx).top(tree), tree


def _reject_metadata(tree: syntax.Module, ctx: RelaxContext) -> None:
    """Without a table, the first `metadata["..."][i]` of the text is the error
    (before anything else the parse would say about the statements around it)."""
    refs = []
    stack: list[object] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, syntax.Subscript):
            base = node.value
            while isinstance(base, syntax.Subscript):
                base = base.value
            if isinstance(base, syntax.Name) and base.id == "metadata":
                refs.append(node)
                continue
        if isinstance(node, syntax.Node):
            stack.extend(getattr(node, f) for f in node.__dataclass_fields__)
        elif isinstance(node, tuple):
            stack.extend(node)
    if refs:
        first = min(refs, key=lambda n: (n.span.line, n.span.column) if n.span else (0, 0))
        key, index = metadata_reference(ctx, first)
        raise ctx.error(missing_table_message(f'metadata["{key}"][{index}]'), first)


def _file_comments(tree: syntax.Module) -> Comments:
    """The file-level comments: those above the first statement that precede the
    header the printer writes (TVM's `# from tvm.script import ...` lines, which are
    taken off: the printer writes them again), or all of them when the text starts
    with an import. The rest stays above the first statement."""
    first = tree.body[0] if tree.body else None
    comments: Comments | None = getattr(first, "comments", None)
    head = None if comments is None else comments.get("")
    if head is None:
        return Comments()
    lines = head.above
    if isinstance(first, syntax.Import):  # the header is printed where the imports were
        cut = len(lines)
    else:
        cut = 1 + max((k for k, line in enumerate(lines) if line in HEADER_LINES), default=-1)
    top = tuple(line for line in lines[:cut] if line not in HEADER_LINES)
    rest = Remark(lines[cut:], head.trailing)
    first.comments = comments.replaced("", rest)  # type: ignore[union-attr]
    return Comments((("top", Remark(top)),)) if top else Comments()


def _decorator_name(node: syntax.Node) -> str:
    func = node.func if isinstance(node, syntax.Call) else node
    return syntax.dotted(func) or ""


@dataclass
class _ModuleTables:
    """What the first pass over a module class collects besides its functions
    (the IRModule, immutable, is made once everything is parsed)."""

    externs: dict[str, relax.ExternFunc] = field(default_factory=dict)
    attrs: dict[str, Any] = field(default_factory=dict)
    global_infos: dict[str, Any] = field(default_factory=dict)
    comments: Comments | None = None  # the class's, and those of its module calls


class _ModuleParser:
    def __init__(self, ctx: RelaxContext) -> None:
        self.ctx = ctx

    # ------------------------------------------------------------ top level

    def top(self, tree: syntax.Module) -> IRModule | tir.PrimFunc | relax.Function:
        items: list[syntax.ClassDef | syntax.FunctionDef] = []
        self.file = _file_comments(tree)
        pending: tuple[str, ...] = ()  # comments of statements that become no node
        for stmt in tree.body:
            handler = self._TOP.get(type(stmt))
            if handler is None:
                raise self.ctx.error(
                    "expected an @I.ir_module class or a @T.prim_func / @R.function def here",
                    stmt,
                )
            if handler(self, stmt):
                assert isinstance(stmt, syntax.ClassDef | syntax.FunctionDef)  # what handlers take
                items.append(stmt)
                stmt.comments, pending = carried(pending, stmt.comments), ()
            elif items:
                items[0].comments = add(items[0].comments, "after", Remark(loose(stmt.comments)))
            else:
                pending += loose(stmt.comments)
        if not items:
            raise self.ctx.error("the text holds no @I.ir_module class and no function", tree.span)
        if len(items) > 1:
            raise self.ctx.error(
                "a text holds one @I.ir_module class or one function; this is a second one",
                items[1],
            )
        item = items[0]
        if isinstance(item, syntax.ClassDef):
            mod = self.module(item)
            return mod.replace(comments=footer_off(merged(mod.comments, self.file)))
        func = self.lone_function(item)
        comments = footer_off(merged(func.comments, self.file))
        return dataclasses.replace(func, comments=comments, dialect=self.ctx.dialect)

    def _import(self, stmt: syntax.Import) -> bool:
        if stmt.names and all((stmt.module, name) in _NAMESPACE_IMPORTS for name in stmt.names):
            aliases = [alias or name for name, alias in stmt.names]
            imported = self.file.imports or ()
            self.file = Comments(self.file.roles, (*imported, *aliases))
            self.file = self.file.with_role(f"import {aliases[0]}", take_head(stmt))
            return False
        raise self.ctx.error(
            "only the TVMScript namespace imports are allowed (`from tvm.script import ir as I`, "
            "`tir as T` or `tirx as T`, `relax as R`); nothing else is imported",
            stmt,
        )

    def _assign(self, stmt: syntax.Assign) -> bool:
        target = stmt.targets[0] if len(stmt.targets) == 1 else None
        if isinstance(target, syntax.Name) and target.id == "metadata":
            raise self.ctx.error("metadata tables (metadata = ...) are not supported yet", stmt)
        value = stmt.value
        if (
            isinstance(target, syntax.Name)
            and isinstance(value, syntax.Call)
            and syntax.dotted(value.func) == "TypeVar"
        ):
            if (
                len(value.args) < 1
                or not isinstance(value.args[0], syntax.Constant)
                or not isinstance(value.args[0].value, str)
            ):
                raise self.ctx.error('TypeVar takes the variable name: n = TypeVar("n")', value)
            if value.args[0].value != target.id:
                raise self.ctx.error(
                    f'TypeVar name "{value.args[0].value}" differs from {target.id}', value.args[0]
                )
            self.ctx.type_vars.add(target.id)
            return False
        raise self.ctx.error('only n = TypeVar("n") assignments are allowed at module level', stmt)

    def _expr(self, stmt: syntax.ExprStmt) -> bool:
        if isinstance(stmt.value, syntax.Constant) and isinstance(stmt.value.value, str):
            return False  # a docstring
        raise self.ctx.error(
            "expected an @I.ir_module class or a @T.prim_func / @R.function def here", stmt
        )

    def _pass(self, stmt: syntax.Pass) -> bool:
        return False

    def _definition(self, stmt: syntax.Node) -> bool:
        return True

    _TOP: ClassVar[dict[type, Callable[..., bool]]] = {
        syntax.Import: _import,
        syntax.Assign: _assign,
        syntax.ExprStmt: _expr,
        syntax.Pass: _pass,
        syntax.ClassDef: _definition,
        syntax.FunctionDef: _definition,
    }

    # ------------------------------------------------------------ functions

    def kind(self, fdef: syntax.FunctionDef) -> str:
        if not fdef.decorators:
            raise self.ctx.error(
                f"function {fdef.name} needs a @T.prim_func or @R.function decorator", fdef
            )
        name = _decorator_name(fdef.decorators[0])
        if name == "T.prim_func":
            return "prim"
        if name == "R.function":
            return "relax"
        if name in _UNSUPPORTED_DECORATORS:
            raise self.ctx.error(f"{name} is not supported", fdef.decorators[0])
        hint = did_you_mean(f"@{name}", ("@T.prim_func", "@R.function"))
        raise self.ctx.error(
            f"unknown decorator @{name or '...'}"
            + (hint or "; expected @T.prim_func or @R.function"),
            fdef.decorators[0],
        )

    def lone_function(self, fdef: syntax.FunctionDef) -> tir.PrimFunc | relax.Function:
        if self.kind(fdef) == "prim":
            return parse_prim_func(fdef, self.ctx)
        parser = RelaxFunctionParser(self.ctx, fdef)
        parser.parse_signature()
        func = parser.parse_body()
        checked = self.ctx.check_well_formed and parser.check_well_formed
        level = WELL_FORMED if checked else STRUCTURAL
        verify_module(IRModule({fdef.name: func}), symbols=False, level=level)
        return func

    # ------------------------------------------------------------ modules

    def module(self, cdef: syntax.ClassDef) -> IRModule:
        self.module_decorator(cdef)
        if cdef.bases:
            raise self.ctx.error(
                "module classes take no base class (BasePyModule modules are not supported)",
                cdef.bases[0],
            )
        self.ctx.module_name = cdef.name
        tables = _ModuleTables(comments=cdef.comments)
        members: dict[str, syntax.Stmt] = {}
        pending: tuple[str, ...] = ()  # comments of statements that become no node
        for stmt in cdef.body:
            stmt.comments, pending = carried(pending, stmt.comments), ()
            name = self.member(stmt, tables)
            if name is None:
                pending = loose(stmt.comments)
                continue
            if name in members:
                first = members[name].span
                line = first.line if first is not None else "?"
                raise self.ctx.error(f"duplicate definition of {name} (first at line {line})", stmt)
            members[name] = stmt
        if pending:
            self.after_members(tables, members, pending)
        relax_parsers: dict[str, RelaxFunctionParser] = {}
        for name, stmt in members.items():
            if not isinstance(stmt, syntax.FunctionDef):
                continue
            if self.ctx.global_names[name] == "relax":
                relax_parsers[name] = RelaxFunctionParser(self.ctx, stmt)
                self.ctx.signatures[name] = relax_parsers[name].parse_signature()
            else:
                returns = self.ctx.prim_returns.get(name)
                self.ctx.signatures[name] = prim_signature(len(stmt.params), returns)
        functions: dict[str, Any] = {}
        for name, stmt in members.items():
            if name in relax_parsers:
                functions[name] = relax_parsers[name].parse_body()
            elif isinstance(stmt, syntax.FunctionDef):
                functions[name] = parse_prim_func(stmt, self.ctx)
            else:
                functions[name] = tables.externs[name]
        mod = IRModule(
            functions,
            tables.attrs,
            tables.global_infos,
            dialect=self.ctx.dialect,
            span=cdef.span,
            comments=tables.comments,
        )
        lenient = [name for name, p in relax_parsers.items() if not p.check_well_formed]
        level = WELL_FORMED if self.ctx.check_well_formed else STRUCTURAL
        verify_module(mod, level=level, lenient=lenient)
        return mod

    def after_members(
        self, tables: _ModuleTables, members: dict[str, syntax.Stmt], lines: tuple[str, ...]
    ) -> None:
        """Comments left at the end of the class body go after its last member (or
        end the class, when it has none)."""
        if not members:
            tables.comments = add(tables.comments, "end", Remark(lines))
            return
        name, last = list(members.items())[-1]
        if isinstance(last, syntax.FunctionDef):
            last.comments = add(last.comments, "after", Remark(lines))
        else:
            extern = tables.externs[name]
            comments = add(extern.comments, "after", Remark(lines))
            tables.externs[name] = dataclasses.replace(extern, comments=comments)

    def module_decorator(self, cdef: syntax.ClassDef) -> None:
        if len(cdef.decorators) != 1:
            where = cdef.decorators[1] if cdef.decorators else cdef
            raise self.ctx.error(
                f"class {cdef.name} needs exactly one @I.ir_module decorator", where
            )
        deco = cdef.decorators[0]
        name = _decorator_name(deco)
        if name not in ("I.ir_module", "tvm.script.ir_module"):
            raise self.ctx.error(f"unknown class decorator @{name or '...'}", deco)
        if isinstance(deco, syntax.Call):
            args = bind_call(self.ctx, deco, name, ("check_well_formed", "s_tir"))
            flags = {key: bool_literal(self.ctx, value, key) for key, value in args.items()}
            if not flags.get("check_well_formed", True):
                self.ctx.check_well_formed = False  # the whole module, as TVM's keyword

    def member(self, stmt: syntax.Node, tables: _ModuleTables) -> str | None:
        """First pass over one class member; returns the global name it defines."""
        if isinstance(stmt, syntax.FunctionDef):
            kind = self.kind(stmt)
            self.ctx.global_names.setdefault(stmt.name, kind)
            if kind == "prim":
                returns = syntax.dotted(stmt.returns) if stmt.returns is not None else "T.void"
                self.ctx.prim_returns.setdefault(stmt.name, (returns or "T.handle")[2:])
            return stmt.name
        if isinstance(stmt, (syntax.Assign, syntax.AnnAssign)):
            return self.extern(stmt, tables)
        if isinstance(stmt, syntax.ExprStmt):
            self.module_call(stmt, tables)
            return None
        if isinstance(stmt, syntax.Pass):
            return None
        raise self.ctx.error(
            "a module class holds functions, R.ExternFunc assignments, I.module_attrs and "
            "I.module_global_infos",
            stmt,
        )

    def _extern_name(self, stmt: syntax.Node) -> str | None:
        target = (
            stmt.targets[0] if isinstance(stmt, syntax.Assign) else getattr(stmt, "target", None)
        )
        return target.id if isinstance(target, syntax.Name) else None

    def extern(self, stmt: syntax.Assign | syntax.AnnAssign, tables: _ModuleTables) -> str:
        value = stmt.value
        name = self._extern_name(stmt)
        if isinstance(stmt, syntax.Assign) and len(stmt.targets) != 1:
            name = None
        if (
            name is None
            or not isinstance(value, syntax.Call)
            or syntax.dotted(value.func) != "R.ExternFunc"
        ):
            raise self.ctx.error(
                'the only assignment in a module class is name = R.ExternFunc("symbol")', stmt
            )
        args = bind_call(
            self.ctx, value, "R.ExternFunc", ("global_symbol", "struct_info"), required=1
        )
        sym = args["global_symbol"]
        if not isinstance(sym, syntax.Constant) or not isinstance(sym.value, str):
            raise self.ctx.error("R.ExternFunc takes a string literal", sym)
        typed = args.get("struct_info")
        sinfo = SinfoParser(self.ctx).sinfo(typed) if typed is not None else None
        if sinfo is not None and not isinstance(sinfo, relax.FuncStructInfo):
            raise self.ctx.error("the type of an R.ExternFunc is an R.Callable", typed)
        if name in tables.externs or name in self.ctx.global_names:
            return name  # reported as a duplicate by the caller
        tables.externs[name] = relax.ExternFunc(sym.value, value.span, stmt.comments, sinfo)
        self.ctx.global_names[name] = "extern"
        self.ctx.signatures[name] = sinfo or _OPAQUE
        return name

    def module_call(self, stmt: syntax.ExprStmt, tables: _ModuleTables) -> None:
        call = stmt.value
        name = syntax.dotted(call.func) if isinstance(call, syntax.Call) else None
        if isinstance(call, syntax.Constant) and isinstance(call.value, str):
            return  # a docstring
        if name not in ("I.module_attrs", "I.module_global_infos") or not isinstance(
            call, syntax.Call
        ):
            raise self.ctx.error(
                "expected I.module_attrs({...}) or I.module_global_infos({...}) here", stmt
            )
        args = bind_call(self.ctx, call, name, ("attrs",), required=1)
        if not isinstance(args["attrs"], syntax.Dict):
            raise self.ctx.error(f"{name} takes a dict", args["attrs"])
        if name == "I.module_attrs":
            tables.attrs.update(literal_value(args["attrs"], self.ctx))
            tables.comments = add(tables.comments, "module_attrs", take_head(stmt))
        else:
            tables.global_infos.update(self.raw(args["attrs"]))
            tables.comments = add(tables.comments, "global_infos", take_head(stmt))

    def raw(self, node: syntax.Node) -> Any:
        """Global-info data as written; calls such as `I.vdevice(...)` stay `RawCall`s."""
        self.ctx.nest(node)
        value = self._raw(node)
        self.ctx.depth -= 1
        return value

    def _raw(self, node: syntax.Node) -> Any:
        if isinstance(node, syntax.Call):
            func = syntax.dotted(node.func)
            if func is None:
                raise self.ctx.error("expected a call such as I.vdevice(...)", node.func)
            kwargs = tuple((kw.name, self.raw(kw.value)) for kw in node.keywords)
            return RawCall(func, tuple(self.raw(a) for a in node.args), kwargs)
        if isinstance(node, syntax.Tuple):
            return tuple(self.raw(e) for e in node.elts)
        if isinstance(node, syntax.List):  # kept apart from tuples: TVM prints both as written
            return [self.raw(e) for e in node.elts]
        if isinstance(node, syntax.Dict):
            return {
                literal_value(k, self.ctx): self.raw(v)
                for k, v in zip(node.keys, node.values, strict=False)
            }
        return literal_value(node, self.ctx)

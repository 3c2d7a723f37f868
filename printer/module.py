"""The module printer: header comments, 0.27 `TypeVar` lines, the `@I.ir_module`
class with its attributes and functions in TVM's order, and the metadata footer.

The header depends on what the function printers used (a `T.float64(0.5)` in a
Relax call imports `T`), so the class body is printed first and the header last.
"""

from __future__ import annotations

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import relax, tir
from tvmlite.dsl.comments import METADATA_FOOTER
from tvmlite.dsl.module import IRModule
from tvmlite.printer.comments import after_lines, file_header, noted, role, with_comments
from tvmlite.printer.context import INDENT, PrintContext, Printed
from tvmlite.printer.names import NameTable, identifier, is_identifier
from tvmlite.printer.options import DEFAULT, PrintOptions
from tvmlite.printer.relax import RelaxPrinter, indent

Function = tir.PrimFunc | relax.Function | relax.ExternFunc

# Function kinds in the order TVM prints them; `main` always last.
_KIND_ORDER = {tir.PrimFunc: 1, relax.ExternFunc: 2, relax.Function: 3}


def _sort_key(item: tuple[str, Function]) -> tuple[int, str]:
    name, func = item
    return (1000 if name == "main" else _KIND_ORDER[type(func)], name)


def _context(
    dialect: str, module_functions: frozenset[str] | None, options: PrintOptions
) -> PrintContext:
    from tvmlite.printer.tir import TIRPrinter  # written in parallel; import when used

    names = NameTable()
    tir_printer = TIRPrinter(dialect, names)
    tir_printer.stmts.sugar = options.syntax_sugar
    tir_printer.exprs.module_name = options.name or "Module"
    return PrintContext(dialect, names, tir_printer, module_functions, options=options)


def print_module(mod: IRModule, dialect: str, options: PrintOptions = DEFAULT) -> Printed:
    ctx = _context(dialect, frozenset(mod.functions), options)
    ctx.tir.keys_as_written = mod.dialect == dialect
    ctx.tir.written = mod.dialect
    relax_printer = RelaxPrinter(ctx)
    notes = mod.comments
    body = []  # the class body, indented; blank lines stay empty
    if mod.attrs:
        line = f"I.module_attrs({relax_printer.exprs.value(dict(mod.attrs))})"
        body.extend(indent(noted(line, role(notes, "module_attrs"))))
    if mod.global_infos:
        line = f"I.module_global_infos({relax_printer.exprs.value(dict(mod.global_infos))})"
        body.extend(indent(noted(line, role(notes, "global_infos"))))
    uses_relax = False
    for name, func in sorted(mod.functions.items(), key=_sort_key):
        identifier(name, "the function name")
        if isinstance(func, relax.ExternFunc):
            uses_relax = True
            line = f"{name} = {relax_printer.exprs.expr(func)}"
            body.extend(indent(with_comments([line], func.comments)))
            continue
        body.extend(indent(_function_lines(ctx, relax_printer, name, func, module_level=True)))
        body.append("")
        uses_relax = uses_relax or isinstance(func, relax.Function)
    header = ctx.header(uses_ir=True, uses_relax=uses_relax)
    lines = file_header(header, notes, ctx.dialect)
    lines.extend(ctx.typevar_lines())
    lines.extend(noted("@I.ir_module", role(notes)))
    lines.extend(noted(f"class {ctx.module_name}:", role(notes, "class")))
    lines.extend(body or [INDENT + "pass"])
    end = role(notes, "end")  # comments in a class with no member
    lines.extend(indent(list(end.lines())) if end is not None else ())
    lines.extend(after_lines(notes))
    return _finish(ctx, lines)


def print_function(func: Function, dialect: str, options: PrintOptions = DEFAULT) -> Printed:
    """A function printed on its own, as TVM prints it: named by its global symbol
    (`main` when private, or when the symbol is no identifier: the attribute then
    says it), callees as bare names (not re-parseable without their module, as in
    TVM)."""
    if isinstance(func, relax.ExternFunc):
        raise TVMLiteError("an ExternFunc has no text of its own; print its module")
    ctx = _context(dialect, None, options)
    ctx.tir.written = func.dialect
    name = options.name or func.attr("global_symbol") or "main"
    if not is_identifier(name):
        name = "main"
    lines = _function_lines(ctx, RelaxPrinter(ctx), name, func, module_level=False)
    header = ctx.header(uses_ir=False, uses_relax=isinstance(func, relax.Function))
    out = file_header(header, func.comments, ctx.dialect)
    out.extend(ctx.typevar_lines())
    out.extend(lines)
    return _finish(ctx, out)


def _function_lines(
    ctx: PrintContext,
    relax_printer: RelaxPrinter,
    name: str,
    func: tir.PrimFunc | relax.Function,
    module_level: bool,
) -> list[str]:
    if isinstance(func, tir.PrimFunc):
        lines, typevars = ctx.tir.prim_func(name, func, module_level)
        ctx.uses_tir = True
        ctx.function_typevars.update(typevars)
    else:
        lines = relax_printer.function(name, func)
    ctx.end_function()
    return lines


def _finish(ctx: PrintContext, lines: list[str]) -> Printed:
    """Trailing blank lines dropped (TVM trims the text), then the metadata footer
    when a constant was sent to the table; one final newline."""
    while lines and not lines[-1].strip():
        lines.pop()
    if ctx.constants:
        lines.extend(["", METADATA_FOOTER])
    return Printed("\n".join(lines) + "\n", ctx.constant_key, tuple(ctx.constants))

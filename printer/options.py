"""The keyword options of `script()` and `show()`, under TVM's names.

TVM's `Scriptable.script()` takes a dozen printer options. tvmlite implements
those that change text it can print (`name`, `indent_spaces`,
`print_line_numbers`, `syntax_sugar`, `show_all_ty`). The others describe TVM's
own objects (the metadata table of TVM objects, addresses, access paths to
underline, the defaults of its parser): they are accepted at TVM's default
value, and any other value is an error rather than silently ignored. A keyword TVM does not
know either is a TypeError, as for any Python function.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tvmlite.diagnostics import TVMLiteError
from tvmlite.printer.names import is_identifier


@dataclass(frozen=True)
class PrintOptions:
    """What the printer honours; the defaults are TVM's."""

    name: str | None = None
    indent_spaces: int = 4
    print_line_numbers: bool = False
    syntax_sugar: bool = True
    show_all_ty: bool = True


DEFAULT = PrintOptions()
# TVM's options that tvmlite accepts only at TVM's default value (the first listed).
TVM_ONLY: dict[str, tuple[Any, ...]] = {
    "show_meta": (False,),  # TVM's metadata table holds TVM objects: always summarised
    "ir_prefix": ("I",),
    "module_alias": ("cls",),
    "buffer_dtype": ("float32",),
    "int_dtype": ("int32",),
    "float_dtype": ("void",),
    "verbose_expr": (False,),
    "num_context_lines": (-1, None),
    "show_object_address": (False,),
    "extra_config": (None,),
    "path_to_underline": (None,),
    "path_to_annotate": (None,),
    "obj_to_underline": (None,),
    "obj_to_annotate": (None,),
}
_BOOLS = ("print_line_numbers", "syntax_sugar", "show_all_ty")


def print_options(caller: str, options: dict[str, Any]) -> PrintOptions:
    """`options` (keywords of `caller`) checked and turned into PrintOptions."""
    own = {k: v for k, v in options.items() if k in PrintOptions.__dataclass_fields__}
    for key, value in options.items():
        if key in own:
            continue
        if key not in TVM_ONLY:
            raise TypeError(f"{caller}() got an unexpected keyword argument {key!r}")
        if not any(value is ok or value == ok for ok in TVM_ONLY[key]):
            raise TVMLiteError(
                f"{caller}(): {key}={value!r} is not supported by tvmlite "
                f"(only TVM's default, {TVM_ONLY[key][0]!r})"
            )
    for key in _BOOLS:
        if key in own and not isinstance(own[key], bool):
            raise TVMLiteError(f"{caller}(): {key} must be True or False, got {own[key]!r}")
    spaces = own.get("indent_spaces", 4)
    if isinstance(spaces, bool) or not isinstance(spaces, int) or not 0 <= spaces <= 16:
        raise TVMLiteError(f"{caller}(): indent_spaces must be an integer 0 to 16, got {spaces!r}")
    name = own.get("name")
    if name is not None and not is_identifier(name):  # no keyword either: `class def:`
        raise TVMLiteError(f"{caller}(): name must be a Python identifier, got {name!r}")
    return PrintOptions(**own)


def reindent(text: str, spaces: int) -> str:
    """`text` printed with 4 spaces a level, re-indented to `spaces` a level."""
    if spaces == 4:
        return text
    out = []
    for line in text.splitlines(keepends=True):
        stripped = line.lstrip(" ")
        levels, rest = divmod(len(line) - len(stripped), 4)
        out.append(" " * (levels * spaces + rest) + stripped)
    return "".join(out)

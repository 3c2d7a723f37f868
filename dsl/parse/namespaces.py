"""Every name the parser gives meaning to, by TVMScript namespace (`T`, `T.cuda`,
`T.tile`, `R`, `R.nn`, `I`, ...): a read-only view of the tables the parsers dispatch
through. Nothing here decides how a name parses; the tables it reads do.

docs/tvm-coverage.md compares this view with TVM 0.27's own registries (the names its
script parser accepts, and the op registry's printed names); tools/tvm_coverage.py
writes that page and tests/docs/test_tvm_coverage.py keeps it in step with the tables.
"""

from __future__ import annotations

from tvmlite.dsl import dtype as dt
from tvmlite.dsl import ops, tir
from tvmlite.dsl.parse.relax.calls import SPECIAL_CALLS
from tvmlite.dsl.parse.relax.expr import UNSUPPORTED_CALLS
from tvmlite.dsl.parse.relax.sinfo import UNSUPPORTED_SINFO, sinfo_forms
from tvmlite.dsl.parse.tir.assign import ASSIGN_CALLS
from tvmlite.dsl.parse.tir.block import AXIS_KINDS
from tvmlite.dsl.parse.tir.control import LOOP_KINDS, WITH_CALLS
from tvmlite.dsl.parse.tir.device import TILE_SCOPES
from tvmlite.dsl.parse.tir.expr import META_BUILTINS
from tvmlite.dsl.parse.tir.intrin import BUILTINS, STATEMENT_BUILTINS
from tvmlite.dsl.parse.tir.stmt import STMT_CALLS

# Names read in one fixed place of the syntax rather than through a call table: the
# decorators, buffer and handle annotations, layouts, attribute values.
_SYNTAX = {
    "T": (
        "prim_func", "Buffer", "handle", "let", "void", "TensorMap", "TileLayout",
        "ComposeLayout", "S", "R", "target", "comm_reducer", "LetStmt",
        "index_map",  # the index map of a Relax call (`R.layout_transform`)
    ),
    "R": ("function", "device"),  # `R.device(...)` of `R.hint_on_device`
    # `I.vdevice(...)`, `I.dummy_global_info()`: data of `I.module_global_infos`
    "I": ("ir_module", "module_attrs", "module_global_infos", "vdevice", "dummy_global_info"),
}  # fmt: skip
# Names the parser knows and refuses with a reason (they need Python evaluation).
_REFUSED = {
    "T": (*META_BUILTINS, "macro", "inline"),
    "R": ("macro", "inline"),
    "I": ("pyfunc",),
}
# The device namespaces of `T.*` calls (dsl/parse/tir/device.py) and the tile scopes.
DEVICE_NAMESPACES = ("cuda", "ptx", "ptx_legacy", "nki", "metal", "webgpu", "nvshmem", "s_tir")


def _split(qualified: str) -> tuple[str, str]:
    """`R.nn.conv2d` -> (`R.nn`, `conv2d`); `T.cuda.iket.mark` -> (`T.cuda`, `iket.mark`)."""
    root, _, rest = qualified.partition(".")
    head, dot, tail = rest.partition(".")
    if dot and (root == "R" and head in _RELAX_NAMESPACES or root == "T" and head in _T_NAMESPACES):
        return f"{root}.{head}", tail
    return root, rest


_T_NAMESPACES = frozenset({*DEVICE_NAMESPACES, *TILE_SCOPES, "axis"})
_RELAX_NAMESPACES = frozenset(
    name.split(".")[1] for name in ops.op_names() if name.count(".") == 2
) | {"dist"}


def _qualified() -> set[str]:
    """Every accepted name, qualified (`T.exp`, `T.cuda.ldg`, `R.nn.conv2d`)."""
    names = {f"T.{n}" for n in (*BUILTINS, *STATEMENT_BUILTINS, *STMT_CALLS, *ASSIGN_CALLS)}
    names |= {f"T.{n}" for n in (*WITH_CALLS, *AXIS_KINDS, "axis.remap", *tir.SCOPE_IDS)}
    names |= set(LOOP_KINDS)
    names |= {"R." + name.removeprefix("relax.") for name in ops.op_names()}
    names |= set(SPECIAL_CALLS) | set(sinfo_forms())
    for root, syntax_names in _SYNTAX.items():
        names |= {f"{root}.{n}" for n in syntax_names}
    return names


def _refused() -> set[str]:
    names = {f"{root}.{n}" for root, refused in _REFUSED.items() for n in refused}
    names |= set(UNSUPPORTED_CALLS) | set(UNSUPPORTED_SINFO)
    return names - {f"{root}.{n}" for root, syntax in _SYNTAX.items() for n in syntax}


def names() -> dict[str, frozenset[str]]:
    """namespace -> the names the parser accepts in it (dtype constructors such as
    `T.float16x4` are a family: see `accepts`)."""
    table: dict[str, set[str]] = {}
    for qualified in _qualified() - _refused():
        namespace, name = _split(qualified)
        table.setdefault(namespace, set()).add(name)
    return {namespace: frozenset(found) for namespace, found in sorted(table.items())}


def refused() -> dict[str, frozenset[str]]:
    """namespace -> the names the parser knows and refuses with a located reason."""
    table: dict[str, set[str]] = {}
    for qualified in _refused():
        namespace, name = _split(qualified)
        table.setdefault(namespace, set()).add(name)
    return {namespace: frozenset(found) for namespace, found in sorted(table.items())}


def accepts(namespace: str, name: str) -> bool:
    """Whether the parser accepts `namespace.name` (a table's name, or a dtype)."""
    if namespace == "T" and (dt.is_valid(name) or name in dt.SHORT_NAMES):
        return True
    return name in names().get(namespace, frozenset())

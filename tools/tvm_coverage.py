"""How much of what TVM 0.27's script parser accepts tvmlite's tables cover, by namespace:
writes docs/tvm-coverage.md.

    python tools/tvm_coverage.py             # with TVM installed: collect its names, write
    python tools/tvm_coverage.py --refresh   # without TVM: re-render from the page's names
    python tools/tvm_coverage.py --check     # without TVM: exit 1 when the page is stale
    python tools/tvm_coverage.py --dump F    # TVM's names only, as JSON (no tvmlite needed)
    python tools/tvm_coverage.py --load F    # the page from such a dump

TVM's names come from its own registries, not from examples: the public names of the
`tvm.script` namespaces (`tirx as T`, `relax as R`, `ir as I`) and of the namespace
objects they hold (`T.cuda`, `T.ptx`, `T.tile`, `R.nn`, ...), plus the name TVM prints
for every operator of its op registry (`TScriptPrinterName` of `tirx.*`, the `relax.*`
op names). tvmlite's names come from `tvmlite.dsl.parse.namespaces`, the view of the
tables its parser dispatches through. The page keeps TVM's names as data, so that it
can be re-rendered (and tested) where TVM is not installed. Only this script imports
TVM, and only when asked to collect.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

PAGE = Path(__file__).resolve().parents[1] / "docs" / "tvm-coverage.md"

# Why a name TVM accepts is not in tvmlite's tables: (namespace pattern, name pattern,
# reason), both regular expressions matching whole names, first match wins. Reasons in
# BY_DESIGN are choices; the rest are gaps.
EVAL = "needs Python evaluation (tvmlite never evaluates the text it parses)"
BUILDER = "a Python API of TVM's IR builder or parser, not syntax TVM prints"
NODE_CLASS = "an IR node class: TVM prints the node in its own syntax, which tvmlite reads"
PRINTED_ONLY = "printed by TVM but not accepted by TVM's own parser"
SYNTHETIC = "a Python helper of the PTX dispatch (operand tags), never printed"
KEYWORD = "a Python keyword: no text can write it (TVM prints the family as `and_`)"
GAP = "not yet in tvmlite's tables"
BY_DESIGN = (EVAL, BUILDER, NODE_CLASS, SYNTHETIC, KEYWORD)
REASONS: tuple[tuple[str, str, str], ...] = (
    ("T", r"macro|inline|meta_var|meta_class|jit|constexpr|static_assert|device_entry", EVAL),
    ("R", r"macro|inline|emit_te|rewriter", EVAL),
    ("I", r"pyfunc", EVAL),
    (
        "T",
        r"builder|parser|add_to_parent|register_script_namespace|block_name_suffix_context"
        r"|scalar_wrapper|Optional|DtypeConstructor|LetAnnotation|LocalVectorAnnotation"
        r"|buffer_decl|buffer_store|func_name|func_ret|arg|boolean|let|var|iter_var"
        r"|buffer_var|Then|Else|If|While|Assert|Bind|Break|Continue|Return|Evaluate",
        BUILDER,
    ),
    (
        r"R(\.\w+)?",
        r"builder|parser|emit|emit_match_cast|emit_var_binding|emit_with_ty|emit_with_type"
        r"|func_name|func_ret_ty|func_ret_type|func_ret_value|arg|output|Then|Else|If"
        r"|SeqExpr|TupleGetItem|ShapeExpr|Expr|IRBuilder|IRModuleFrame|TensorProxy"
        r"|DTensorProxy|TypeProxy|TensorType|DTensorType|Optional|Union|Range|Placement"
        r"|DeviceMesh",
        BUILDER,
    ),
    (
        "I",
        r"entry|frame|ir|parser|IRModuleFrame|decl_function|def_function|lookup_name"
        r"|module_get_attr|module_set_attr|Range|StringImm|meta_var",
        BUILDER,
    ),  # fmt: skip
    (
        "T",
        r"Add|And|Sub|Mul|Div|Mod|FloorDiv|FloorMod|Min|Max|EQ|NE|LT|LE|GT|GE|Or|Not"
        r"|BitwiseAnd|BitwiseOr|BitwiseXor|BitwiseNot|LShift|RShift|Cast|Select|Ramp"
        r"|Broadcast|Shuffle|Call|BufferLoad|IntImm|FloatImm|Var|IterVar|CommReducer"
        r"|Reduce|Range|Tuple|Iter|Layout|ExecScope|ScopeIdDef|CallEffectKind",
        NODE_CLASS,
    ),
    ("T.ptx", r"SINK|pred", SYNTHETIC),
    ("T.ptx", r"and|or|not", KEYWORD),
)


def reason(namespace: str, name: str, printed_only: bool) -> str:
    for space, pattern, why in REASONS:
        if re.fullmatch(space, namespace) and re.fullmatch(pattern, name):
            return why
    return PRINTED_ONLY if printed_only else GAP


# ---------------------------------------------------------------- TVM's names

_DEVICE = ("cuda", "ptx", "ptx_legacy", "nki", "metal", "webgpu", "nvshmem", "s_tir")
_SCOPES = ("tile", "cta", "wg", "warp", "warpgroup", "thread", "cluster")


def collect() -> dict[str, dict[str, list[str]]]:
    """namespace -> {"parsed": names TVM's parser accepts, "printed": names only its
    printer writes}, from an installed TVM 0.27."""
    import types
    import typing

    import tvm
    from tvm.script import ir as I  # noqa: N812
    from tvm.script import relax as R  # noqa: N812
    from tvm.script import tirx as T  # noqa: N812

    def public(obj: object, own: str = "") -> dict[str, object]:
        found = {}
        for name in dir(obj):
            dunder = name.startswith("__") and name.endswith("__")
            if dunder or name.startswith("_") and not name.startswith("__") or name == own:
                continue  # CUDA's `T.cuda.__shfl_sync` starts with two underscores
            try:
                value = getattr(obj, name)
            except Exception:  # noqa: BLE001  (a lazy attribute that fails to load)
                continue
            if isinstance(value, types.ModuleType) or getattr(value, "__module__", "") in (
                "typing",
                "functools",
            ):
                continue
            if isinstance(value, typing.TypeVar):
                continue
            found[name] = value
        return found

    def nested(obj: object, prefix: str = "") -> set[str]:
        """Names of a device namespace, sub-namespaces (`T.cuda.iket`) dotted."""
        names = set()
        for name, value in public(obj).items():
            if type(value).__name__.endswith("Namespace"):
                names |= nested(value, f"{prefix}{name}.")
            if callable(value):
                names.add(prefix + name)
        return names

    def reachable(space: str, name: str) -> bool:
        """Whether TVM's parser resolves `space.name` (`T.ptx.and_`, `R.nn.conv2d`)."""
        obj: object = {"T": T, "R": R, "I": I}[space.split(".")[0]]
        try:
            for part in [*space.split(".")[1:], *name.split(".")]:
                obj = getattr(obj, part)
        except AttributeError:
            return False
        return True

    parsed: dict[str, set[str]] = {}
    printed: dict[str, set[str]] = {}
    top = public(T)
    parsed["T"] = {n for n in top if n not in (*_DEVICE, *_SCOPES, "axis")}
    for space in _DEVICE:
        parsed[f"T.{space}"] = nested(top[space])
    parsed["T.axis"] = set(public(top["axis"]))
    tile_ops = {n for n in public(T.tile) if hasattr(top["cta"], n)}
    for scope in _SCOPES:
        parsed[f"T.{scope}"] = {n for n in tile_ops if hasattr(getattr(T, scope), n)}
    relax_top = public(R)
    subs = [n for n in dir(R) if isinstance(getattr(R, n, None), types.ModuleType)]
    subs = [n for n in subs if n not in ("builder", "parser")]
    parsed["R"] = set(relax_top)
    for sub in subs:
        parsed[f"R.{sub}"] = set(public(getattr(R, sub), own=sub))
    parsed["I"] = set(public(I))
    for op_name in tvm.ir.Op.list_op_names():
        op = tvm.ir.Op.get(op_name)
        if op_name.startswith("tirx."):
            shown = op.get_attr("TScriptPrinterName")
            if not shown:
                continue
            if op_name.startswith("tirx.tile."):
                shown = f"tile.{shown}"
            head, dot, tail = shown.partition(".")
            device = dot and head in (*_DEVICE, "tile")
            space, name = (f"T.{head}", tail) if device else ("T", shown)
        elif op_name.startswith("relax."):
            head, dot, tail = op_name.removeprefix("relax.").partition(".")
            space, name = (f"R.{head}", tail) if dot else ("R", head)
        else:
            continue
        printed.setdefault(space, set()).add(name)
    table = {}
    for space in sorted(set(parsed) | set(printed)):
        shown = printed.get(space, set())
        accepted = parsed.get(space, set()) | {n for n in shown if reachable(space, n)}
        table[space] = {"parsed": sorted(accepted), "printed": sorted(shown - accepted)}
    return table


# ---------------------------------------------------------------- the page

_DATA = re.compile(r"^<!-- tvm (\S+) (parsed|printed): (.*) -->$")


def read_page(text: str) -> dict[str, dict[str, list[str]]]:
    """TVM's names as the page keeps them (one comment line per namespace and kind)."""
    table: dict[str, dict[str, list[str]]] = {}
    for line in text.splitlines():
        found = _DATA.match(line)
        if found:
            space, kind, names = found.groups()
            table.setdefault(space, {"parsed": [], "printed": []})[kind] = names.split()
    return table


def render(tvm: dict[str, dict[str, list[str]]]) -> str:
    from tvmlite.dsl.parse import namespaces

    lite, refused = namespaces.names(), namespaces.refused()
    rows, sections = [], []
    totals = [0, 0, 0, 0, 0]
    for space, kinds in tvm.items():
        printed_only = set(kinds["printed"])
        theirs = sorted({*kinds["parsed"], *printed_only})
        ours = lite.get(space, frozenset())
        covered = [n for n in theirs if namespaces.accepts(space, n)]
        missing = [n for n in theirs if not namespaces.accepts(space, n)]
        why = {n: reason(space, n, n in printed_only) for n in missing}
        known_refused = [n for n in missing if n in refused.get(space, frozenset())]
        gaps = [n for n in missing if why[n] not in BY_DESIGN]
        extra = sorted(n for n in ours if n not in theirs)
        counts = [len(theirs), len(covered), len(missing) - len(gaps), len(gaps), len(extra)]
        totals = [a + b for a, b in zip(totals, counts, strict=True)]
        rows.append(f"| `{space}` | " + " | ".join(str(c) for c in counts) + " |")
        sections.append(_section(space, kinds, why, known_refused, extra))
    head = (
        "| namespace | TVM | tvmlite accepts | missing by design | missing (gaps) | tvmlite only |"
    )
    rule = "|---|---:|---:|---:|---:|---:|"
    total = "| **all** | " + " | ".join(f"**{c}**" for c in totals) + " |"
    table = "\n".join([head, rule, *rows, total])
    return _INTRO + table + "\n" + "".join(sections) + _kept_tail()


# The page's last section (written by hand from tools/tvm_shape_rules.py's figures)
# is kept as it is when the page is rendered.
SHAPE_RULES = "\n## Shape rules as TVM states them\n"


def _kept_tail() -> str:
    text = PAGE.read_text() if PAGE.exists() else ""
    at = text.find(SHAPE_RULES)
    return text[at:] if at >= 0 else ""


def _section(
    space: str,
    kinds: dict[str, list[str]],
    why: dict[str, str],
    known_refused: list[str],
    extra: list[str],
) -> str:
    lines = [f"\n## `{space}`\n"]
    by_reason: dict[str, list[str]] = {}
    for name, text in why.items():
        by_reason.setdefault(text, []).append(name)
    for text in sorted(by_reason, key=lambda t: (t in BY_DESIGN, t)):
        names = ", ".join(f"`{n}`" for n in by_reason[text])
        lines.append(f"- {text} ({len(by_reason[text])}): {names}")
    if known_refused:
        names = ", ".join(f"`{n}`" for n in known_refused)
        lines.append(f"- of these, refused with a located reason when parsed: {names}")
    if extra:
        lines.append(f"- tvmlite only ({len(extra)}): " + ", ".join(f"`{n}`" for n in extra))
    if not why:
        lines.append("- every name TVM accepts here is in tvmlite's tables")
    lines.append("")
    for kind in ("parsed", "printed"):
        lines.append(f"<!-- tvm {space} {kind}: {' '.join(kinds[kind])} -->")
    return "\n".join(lines) + "\n"


_INTRO = """\
# Coverage of TVM 0.27's script names

Which names TVM 0.27's TVMScript parser accepts (and its printer writes) tvmlite's
tables cover, namespace by namespace. TVM's names are read from TVM's own registries:
the public names of `tvm.script.tirx` (`T`), `tvm.script.relax` (`R`) and
`tvm.script.ir` (`I`) and of the namespaces they hold (`T.cuda`, `T.ptx`, `T.tile`,
`R.nn`, ...), and the name TVM prints for each operator of its op registry. tvmlite's
names are those of the tables its parser dispatches through
(`tvmlite.dsl.parse.namespaces`); a dtype constructor (`T.float16x4`) counts when the
dtype is valid.

Generated by `python tools/tvm_coverage.py` (with TVM installed); `--refresh`
re-renders it from the names kept at the end of each section, and a test fails when
the page and tvmlite's tables disagree. Columns: TVM's names; how many of them tvmlite
accepts; missing names that are a choice (they need Python evaluation, or are the
Python API of TVM's builder rather than syntax); missing names that are gaps;
names tvmlite accepts that TVM 0.27 does not (classic spellings, aliases).

A name in a table is not yet a text that parses: docs/tvm-heldout.md measures tvmlite
on modules of TVM's own tests that the public corpus does not hold, and on what TVM
builds and runs of them.

"""


def main() -> int:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = args.add_mutually_exclusive_group()
    mode.add_argument("--refresh", action="store_true", help="re-render from the page's names")
    mode.add_argument("--check", action="store_true", help="exit 1 when the page is stale")
    mode.add_argument("--dump", type=Path, help="write TVM's names as JSON, nothing else")
    mode.add_argument("--load", type=Path, help="render the page from such a JSON file")
    opts = args.parse_args()
    if opts.dump:
        opts.dump.write_text(json.dumps(collect(), indent=1) + "\n")
        return 0
    if opts.load:
        text = render(json.loads(opts.load.read_text()))
    elif opts.refresh or opts.check:
        text = render(read_page(PAGE.read_text()))
        if opts.check:
            stale = text != PAGE.read_text()
            print(f"{PAGE}: {'stale' if stale else 'up to date'}")
            return int(stale)
    else:
        text = render(collect())
    PAGE.write_text(text)
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

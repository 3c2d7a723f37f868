"""Legalization: the kernel builder (`te`) and one rule file per operator family.

Importing this package registers every built-in rule. `register_legalize`
adds or replaces a rule; `op_info` reads back which operator a legalized
kernel came from (kept as function attributes `op_name`, `op_kind`, `op_attrs`),
which operators a fused kernel holds (FuseTIR's `op_names`, `op_attrs_list`,
`op_pattern`), or the kind of a hand-written one.
"""

from typing import Any

from tvmlite.dsl import tir
from tvmlite.dsl.ops import OpPatternKind
from tvmlite.lowering.analysis.op_pattern import analyze_op_pattern
from tvmlite.lowering.legalize import (  # noqa: F401  (imported to register their rules)
    attention,
    binary,
    conv,
    create,
    dynamic,
    elementwise,
    grid,
    image,
    index,
    layout,
    linalg,
    manipulate,
    nms,
    nn,
    norm,
    pool,
    qdq,
    reduce,
    sampling,
    scan,
    scatter,
    search,
    sort,
    unique,
    vision,
)
from tvmlite.lowering.legalize.registry import (
    OP_ATTRS,
    OP_KIND,
    OP_NAME,
    KernelSink,
    LegalizeCtx,
    LegalizeUnsupported,
    legalized_ops,
    register_legalize,
)
from tvmlite.lowering.legalize.registry import op_info as _legalized_info


def op_info(func: tir.PrimFunc) -> dict[str, Any]:
    """What operator(s) a prim function computes, read from its attributes only
    (so it survives printing and parsing):

    - legalized: `{"name", "kind", "attrs"}` of the operator it came from;
    - fused: name None, `kind` the fused pattern, `attrs` {}, and `ops`, the
      ordered `{"name", "attrs"}` of its members (a hand-written member is named
      by its kernel);
    - hand-written: name None, `attrs` {}, `kind` as AnnotateTIROpPattern deduces
      it (its `op_pattern` attribute when present)."""
    info = _legalized_info(func)
    if info is not None:
        return info
    pattern = func.attr("op_pattern")
    kind = (OpPatternKind(pattern) if pattern is not None else analyze_op_pattern(func)).spelling
    names = func.attr("op_names")
    if names is None:
        return {"name": None, "kind": kind, "attrs": {}}
    attrs_list = func.attr("op_attrs_list") or ((),) * len(names)
    ops = [
        {"name": str(n), "attrs": dict(a or ())} for n, a in zip(names, attrs_list, strict=False)
    ]
    return {"name": None, "kind": kind, "attrs": {}, "ops": ops}


__all__ = [
    "OP_ATTRS",
    "OP_KIND",
    "OP_NAME",
    "KernelSink",
    "LegalizeCtx",
    "LegalizeUnsupported",
    "legalized_ops",
    "op_info",
    "register_legalize",
]

"""Legalization: the kernel builder (`te`) and one rule file per operator family.

Importing this package registers every built-in rule. `register_legalize`
adds or replaces a rule; `op_info` reads back which operator a legalized
kernel came from (kept as function attributes `op_name`, `op_kind`, `op_attrs`).
"""

from tvmlite.lowering.legalize import (  # noqa: F401  (imported to register their rules)
    attention,
    binary,
    conv,
    create,
    elementwise,
    image,
    index,
    linalg,
    manipulate,
    nn,
    norm,
    pool,
    reduce,
    scan,
    scatter,
    search,
    sort,
)
from tvmlite.lowering.legalize.registry import (
    OP_ATTRS,
    OP_KIND,
    OP_NAME,
    LegalizeCtx,
    LegalizeUnsupported,
    legalized_ops,
    op_info,
    register_legalize,
)

__all__ = [
    "OP_ATTRS",
    "OP_KIND",
    "OP_NAME",
    "LegalizeCtx",
    "LegalizeUnsupported",
    "legalized_ops",
    "op_info",
    "register_legalize",
]

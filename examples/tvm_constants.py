"""Write the constants file of a module printed by Apache TVM (docs/constants.md).

TVM prints a tensor constant as `metadata["ir.GenericConst"][i]` and leaves the
values out of the text (its `show_meta=True` and `tvm.ir.save_json` crash in
0.27); `save_constants(mod, "model.constants.npz")` writes them where
`tvmlite.parse_file("model.tvms")` finds them. It runs where TVM is installed
and needs nothing of tvmlite.
"""

import re

import numpy as np
import tvm
from tvm import relax

# Scalars of these dtypes print inline, as R.const(value, dtype), not in the table.
INLINE_SCALARS = {"bool", "int8", "int16", "int32", "int64", "float16", "float32", "float64"}


def save_constants(mod: tvm.IRModule, path: str) -> int:
    """Save the constants `mod.script()` refers to, numbered as TVM's printer
    numbers them: the functions in printed order, each read as it is printed
    (bindings in turn, arguments left to right), every constant object once.
    Returns how many; checks the count against the printed text."""
    text = mod.script()
    found = []

    @relax.expr_functor.visitor
    class Collect(relax.PyExprVisitor):
        def visit_generic_const_(self, const):  # TVM 0.27's name (earlier: visit_constant_)
            array = _numpy(const)
            if array.ndim == 0 and str(array.dtype) in INLINE_SCALARS:
                return
            if not any(const.same_as(seen) for seen in found):
                found.append(const)

        visit_constant_ = visit_generic_const_

    functions = sorted(mod.functions_items(), key=lambda f: text.find(f"def {f[0].name_hint}("))
    for _, func in functions:
        if isinstance(func, relax.Function):
            Collect().visit_expr(func)
    printed = set(re.findall(r'metadata\["ir\.GenericConst"\]\[(\d+)\]', text))
    if printed != {str(i) for i in range(len(found))}:
        raise ValueError(f"found {len(found)} constants, the text numbers {len(printed)}")
    np.savez(path, **{f"ir.GenericConst/{i}": _numpy(c) for i, c in enumerate(found)})
    return len(found)


def _numpy(const) -> np.ndarray:
    """A constant's value: `.value` in TVM 0.27 (GenericConst), `.data` before."""
    return (const.value if hasattr(const, "value") else const.data).numpy()

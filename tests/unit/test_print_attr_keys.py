"""Function attribute keys: a module printed in the spelling it was written in keeps
its `tir.`/`tirx.` prefixes as written (TVM 0.27 prints a `tir.noalias` it was given
as such); a conversion between spellings maps the prefixes."""

from __future__ import annotations

import tvmlite
from tvmlite.dsl.module import CLASSIC

# What TVM 0.27 prints for this module (checked when the test was written).
TEXT = """\
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func
    def legacy(A: T.Buffer((4,), "float32")):
        T.func_attr({"tir.noalias": True})
        A[0] = T.float32(1.0)

    @T.prim_func
    def modern(A: T.Buffer((4,), "float32")):
        T.func_attr({"tirx.noalias": True})
        A[0] = T.float32(1.0)
"""


def test_keys_print_as_written_in_their_own_spelling() -> None:
    mod = tvmlite.parse(TEXT)
    assert mod.script() == TEXT
    assert tvmlite.structural_equal(tvmlite.parse(mod.script()), mod)


def test_keys_follow_a_converted_spelling() -> None:
    classic = tvmlite.parse(TEXT).script(dialect=CLASSIC)
    assert classic.count('T.func_attr({"tir.noalias": T.bool(True)})') == 2
    back = tvmlite.parse(classic).script(dialect="tvm-0.27")
    assert back.count('T.func_attr({"tirx.noalias": True})') == 2

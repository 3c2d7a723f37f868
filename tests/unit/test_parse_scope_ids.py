"""tirx scope ids (`tx = T.thread_id([32])`, `bx, by = T.cta_id([8, 4])`): the node
they parse into, and located errors for the forms TVM refuses."""

from __future__ import annotations

import re
import textwrap

import pytest

import tvmlite
from tvmlite.dsl import tir

HEADER = "# from tvm.script import tirx as T\n\n"


def _parse(body: str) -> tir.PrimFunc:
    text = HEADER + '@T.prim_func\ndef main(A: T.Buffer((64,), "int32")):\n'
    return tvmlite.parse(text + textwrap.indent(textwrap.dedent(body), "    "), filename="s.tvms")


def test_tuple_form_defines_one_var_per_extent() -> None:
    body = _parse('bx, by = T.cta_id([8, 4], dtype="uint32")\nA[0] = T.Cast("int32", bx + by)\n')
    define = _parse_seq(body)[0]
    assert isinstance(define, tir.ScopeIdDef)
    assert define.kind == "cta_id" and [v.name for v in define.vars] == ["bx", "by"]
    assert [v.dtype for v in define.vars] == ["uint32", "uint32"]
    assert define.extents == (tir.IntImm("int32", 8), tir.IntImm("int32", 4))
    assert define.preferred is None


def test_deferred_extent_and_preferred() -> None:
    body = _parse(
        "cbx, cby = T.cta_id_in_cluster([2, 1], preferred=[2, 2])\n"
        "tx = T.thread_id()\nA[tx] = cbx + cby\n"
    )
    cluster, thread = _parse_seq(body)[:2]
    assert cluster.preferred == (tir.IntImm("int32", 2), tir.IntImm("int32", 2))
    assert thread.extents is None and thread.vars[0].dtype == "int32"


def _parse_seq(func: tir.PrimFunc) -> tuple[tir.Stmt, ...]:
    body = func.body
    assert isinstance(body, tir.SeqStmt)
    return body.seq


@pytest.mark.parametrize(
    ("body", "message", "location"),
    [
        ("bx = T.cta_id([8, 4])", "T.cta_id defines 2 ids; 1 name(s) are assigned", (5, 5)),
        ("bx, by = T.cta_id()", "a deferred extent defines one id", (5, 5)),
        ("tx = T.thread_id(32)", "T.thread_id takes a list of extents, such as [32]", (5, 22)),
        ("tx = T.thread_id([1.5])", "an extent of T.thread_id must be an integer", (5, 23)),
        (
            'tx = T.thread_id([32], dtype="int64")',
            'the ids of T.thread_id are "int32" or "uint32", got "int64"',
            (5, 34),
        ),
        ("p = T.cta_id_in_pair([2])", "expected a dtype string", (5, 26)),
        ("A[0] = T.lane_id([32])", "unknown TIR builtin T.lane_id", (5, 12)),
    ],
)
def test_errors_are_located(body: str, message: str, location: tuple[int, int]) -> None:
    with pytest.raises(tvmlite.ParseError) as info:
        _parse(body + "\n")
    assert message in info.value.message
    assert (info.value.span.line, info.value.span.column) == location


def test_ids_end_with_their_sequence() -> None:
    with pytest.raises(tvmlite.ParseError) as info:
        _parse("if A[0] == 0:\n    tx = T.thread_id([32])\n    A[tx] = 1\nA[tx] = 2\n")
    assert "used outside its scope" in info.value.message


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "v = T.cta_id([32])\nw = T.warp_id([2])\nl = T.lane_id([32])\nt = T.thread_id([128])\n",
            "8:9: error: inconsistent scope ids: T.thread_id([128]) gives 128 threads per cta, "
            "T.warp_id([2]) and T.lane_id([32]) give 64",
        ),
        (
            "c = T.cluster_id([3])\nb = T.cta_id([8])\nk = T.cta_id_in_cluster([2])\n",
            "inconsistent scope ids: T.cluster_id([3]) and T.cta_id_in_cluster([2]) give 6 "
            "ctas per kernel, T.cta_id([8]) gives 8",
        ),
        (
            "cbx, cby = T.cta_id_in_cluster([2, 1], preferred=[2])\n",
            "T.cta_id_in_cluster([2, 1]): preferred= has 1 extents, the ids 2",
        ),
    ],
    ids=["threads", "ctas", "preferred"],
)
def test_scope_ids_that_disagree_are_refused_as_tvm_refuses_them(body: str, message: str):
    """TVM's well-formedness check of tirx functions; with the check off they parse."""
    with pytest.raises(tvmlite.VerifyError, match=re.escape(message)):
        _parse(body + "A[0] = 0\n")
    text = (
        HEADER + '@T.prim_func(check_well_formed=False)\ndef main(A: T.Buffer((64,), "int32")):\n'
    )
    tvmlite.parse(text + textwrap.indent(body + "A[0] = 0\n", "    "))
    agree = "v = T.cta_id([32])\nw = T.warp_id([4])\nl = T.lane_id([32])\nt = T.thread_id([128])\n"
    _parse(agree + "A[0] = 0\n")

"""Constructs of TVM's printed surface that parse everywhere but cannot run on a CPU
build as written: building them fails with a TVMLiteError that names the construct."""

from __future__ import annotations

import textwrap

import pytest

import tvmlite

HEADER = "# from tvm.script import tirx as T\n\n"


def _build_error(body: str, params: str = 'A: T.Buffer((4,), "float32")') -> str:
    text = HEADER + f"@T.prim_func\ndef main({params}):\n" + textwrap.indent(body, "    ")
    mod = tvmlite.parse(text)
    with pytest.raises(tvmlite.TVMLiteError) as info:
        tvmlite.build(mod)
    return str(info.value)


def test_free_variable_has_no_value() -> None:
    message = _build_error('n = T.int32()\nA[0] = T.Cast("float32", n)\n')
    assert "variable 'n' has no value here" in message


def test_launch_thread_names_the_thread() -> None:
    body = 'tx = T.launch_thread("threadIdx.x", 4)\nA[tx] = T.float32(1.0)\n'
    message = _build_error(body)
    assert "T.launch_thread('threadIdx.x') launches a GPU thread" in message

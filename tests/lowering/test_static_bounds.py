"""CheckStaticBounds: every build refuses an access that is out of bounds on
every call (an unchecked build would write past the buffer and crash: issue 9's
`T.grid(T.int64(99999999999), ...)` mutant), and stays silent wherever the
access may be in bounds or may not run."""

from __future__ import annotations

import numpy as np
import pytest

import tvmlite

HEADER = "# from tvm.script import tirx as T\n\n"


def func(body: str, params: str = 'A: T.Buffer((2, 4), "float32")') -> str:
    lines = "\n".join("    " + line for line in body.strip("\n").splitlines())
    return f"{HEADER}@T.prim_func\ndef f({params}):\n{lines}\n"


def build(text: str) -> tvmlite.Executable:
    return tvmlite.build(tvmlite.parse(text, filename="f.tvms"), cache=False)


REFUSED = {
    "huge loop over a small axis": (
        "for i, j in T.grid(T.int64(99999999999), 4):\n    A[i, j] = T.float32(1)",
        "store to buffer A is out of bounds on every call: index i on axis 0 runs from 0 to "
        "99999999998, outside [0, 2)",
    ),
    "one past the end": (
        "for i, j in T.grid(2, 4):\n    A[i, j + 1] = T.float32(1)",
        "index j + 1 on axis 1 runs from 1 to 4, outside [0, 4)",
    ),
    "negative": (
        "for i in range(2):\n    A[i - 1, 0] = T.float32(1)",
        "index i - 1 on axis 0 runs from -1 to 0, outside [0, 2)",
    ),
    "load through a let binding": (
        "for i in range(2):\n    k: T.int32 = i * 4 + 3\n    A[i, 0] = A[0, k]",
        "load from buffer A is out of bounds on every call: index k on axis 1 runs from 3 to 7",
    ),
    "constant index": (
        "A[5, 0] = T.float32(1)",
        "index 5 on axis 0 is 5, outside [0, 2)",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_with_the_access_located(case: str) -> None:
    body, message = REFUSED[case]
    with pytest.raises(tvmlite.TVMLiteError) as err:
        build(func(body))
    text = str(err.value)
    assert text.startswith("cannot compile prim function 'f': f.tvms:"), text
    assert message in text


SYMBOLIC = "a: T.handle, n: T.int64"
MATCHED = 'A = T.match_buffer(a, (n, 64), "float32")\n'
REFUSED_UNDER_SYMBOLIC_LOOPS = {
    "65 over a 64-wide axis under a loop of n": (
        MATCHED + "for i in range(n):\n    for j in range(65):\n        A[i, j] = T.float32(1)",
        "store to buffer A is out of bounds whenever the loop over i runs: index j on axis 1 "
        "runs from 0 to 64, outside [0, 64)",
    ),
    "one past a symbolic end": (
        MATCHED + "for i in range(n + 1):\n    A[i, 0] = T.float32(1)",
        "whenever the loop over i runs: index i on axis 0 runs from 0 to n, outside [0, n)",
    ),
    "nested symbolic loops": (
        MATCHED
        + "for i in range(n):\n    for k in range(n):\n        for j in range(3):\n"
        + "            A[i, j * 40] = T.float32(1)",
        "whenever the loops over i, k run: index j * 40 on axis 1 runs from 0 to 80",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED_UNDER_SYMBOLIC_LOOPS))
def test_refused_under_symbolic_loops(case: str) -> None:
    """An access out of bounds whenever its loops run is refused, saying so (a call
    with n = 0 runs nothing): an unchecked build would write past the buffer."""
    body, message = REFUSED_UNDER_SYMBOLIC_LOOPS[case]
    with pytest.raises(tvmlite.TVMLiteError) as err:
        build(func(body, SYMBOLIC))
    assert message in str(err.value), str(err.value)


ACCEPTED = {
    "in bounds": "for i, j in T.grid(2, 4):\n    A[i, j] = T.float32(1)",
    "under an if": "for i, j in T.grid(2, 5):\n    if j < 4:\n        A[i, j] = T.float32(1)",
    "padding through if_then_else": (
        "for i, j in T.grid(2, 4):\n    A[i, j] = T.if_then_else(1 <= j, A[i, j - 1], T.float32(0))"
    ),
    "a loop that never runs": "for i in range(0):\n    A[i + 7, 0] = T.float32(1)",
    "a symbolic extent": "for i in range(n):\n    A[0, i] = T.float32(1)",
    "after a possible return": (
        "for i in range(2):\n    if i == 1:\n        T.ret(0)\n    A[i * 2, 0] = T.float32(1)"
    ),
    "non-linear index": "for i in range(4):\n    A[0, i % 2 * 2] = T.float32(1)",
    "a symbolic end that may fit": "for i in range(n - 2):\n    A[0, i + 2] = T.float32(1)",
    "an index read from memory": "for i in range(n):\n    A[0, T.Cast('int32', A[0, 0])] = T.float32(1)",
}


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_silent_where_the_access_may_be_in_bounds(case: str) -> None:
    params = 'A: T.Buffer((2, 4), "float32"), n: T.int32'
    build(func(ACCEPTED[case], params))


def test_a_checked_build_still_reports_at_run_time() -> None:
    """What is only sometimes out of bounds is the checked build's to report."""
    text = func(
        "for i in range(n):\n    A[0, i] = T.float32(1)",
        'A: T.Buffer((2, 4), "float32"), n: T.int32',
    )
    mod = tvmlite.parse(text, filename="f.tvms")
    ex = tvmlite.build(mod, cache=False, checked=True)
    a = np.zeros((2, 4), "float32")
    ex["f"](a, 4)
    assert (a[0] == 1).all() and (a[1] == 0).all()
    with pytest.raises(tvmlite.TVMLiteError, match="out of bounds"):
        ex["f"](a, 5)


MATMUL = """{header}@T.prim_func
def f(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
    for i, j, k in T.grid({rows}, 64, 64):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""


def test_refused_as_written_before_the_default_schedule_tiles_it() -> None:
    """DefaultCPUSchedule tiles a matmul: splits with `T.where` guards and fused
    `//`/`%` indices, behind which nothing is certain. The check runs on the loops
    as written first, so the 10**11-row mutant is refused, not compiled to a crash."""
    ok = tvmlite.parse(MATMUL.format(header=HEADER, rows=64), filename="f.tvms")
    scheduled = tvmlite.lower(ok)["f"].script()
    assert "T.parallel" in scheduled  # the rule did tile this kernel
    with pytest.raises(tvmlite.TVMLiteError) as err:
        build(MATMUL.format(header=HEADER, rows="T.int64(99999999999)"))
    text = str(err.value)
    assert text.startswith("cannot compile prim function 'f': f.tvms:"), text
    assert "index vi on axis 0 runs from 0 to 99999999998, outside [0, 64)" in text

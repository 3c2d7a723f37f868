"""The built-in `blas` target kind: matmuls run in NumPy's own OpenBLAS through a
native packed function, and reproduce NumPy's results."""

from __future__ import annotations

import numpy as np
import pytest
from relax_text import dataflow_main

import tvmlite
from tvmlite.lowering.blas import blas_available, library
from tvmlite.lowering.build import lower
from tvmlite.lowering.target import Target

pytestmark = pytest.mark.skipif(not blas_available(), reason="no OpenBLAS next to NumPy")
HEADER = "from tvm.script import ir as I\nfrom tvm.script import relax as R\n\n"


def module(params: str, ret: str, body: str) -> str:
    return dataflow_main(params, ret, body.strip() + "\nR.output(gv)", HEADER)


def t(shape: str, dtype: str = "float32") -> str:
    return f'R.Tensor(({shape}), dtype="{dtype}")'


CASES = [
    # (params, ret, body, input shapes, reference)
    ("2-D", "4, 8", "8, 5", None, "4, 5", (4, 8), (8, 5), None),
    ("batched", "3, 4, 8", "3, 8, 5", None, "3, 4, 5", (3, 4, 8), (3, 8, 5), None),
    ("shared weight", "3, 4, 8", "8, 5", None, "3, 4, 5", (3, 4, 8), (8, 5), None),
    ("shared input", "4, 8", "2, 8, 5", None, "2, 4, 5", (4, 8), (2, 8, 5), None),
    ("bias", "4, 8", "8, 5", "5,", "4, 5", (4, 8), (8, 5), (5,)),
    ("bias 2-D", "3, 4, 8", "8, 5", "4, 5", "3, 4, 5", (3, 4, 8), (8, 5), (4, 5)),
    ("bias ones", "3, 4, 8", "3, 8, 5", "1, 1, 5", "3, 4, 5", (3, 4, 8), (3, 8, 5), (1, 1, 5)),
    ("bias full", "2, 4, 8", "8, 5", "2, 4, 5", "2, 4, 5", (2, 4, 8), (8, 5), (2, 4, 5)),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_matmul_matches_numpy(case: tuple, dtype: str) -> None:
    _, sa, sb, sbias, sout, shape_a, shape_b, shape_bias = case
    params = f"a: {t(sa, dtype)}, b: {t(sb, dtype)}"
    body = "gv = R.matmul(a, b)"
    if sbias is not None:
        params += f", d: {t(sbias, dtype)}"
        body = "lv = R.matmul(a, b)\ngv = R.add(d, lv)"  # the bias on either side
    mod = tvmlite.parse(module(params, t(sout, dtype), body))
    lowered = lower(mod, Target("llvm -libs=blas"))
    text = lowered.script()
    assert "tvmlite.blas.gemm" in text and "R.matmul" not in text and "call_tir" not in text
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(s).astype(dtype) for s in (shape_a, shape_b, shape_bias) if s]
    want = inputs[0] @ inputs[1] + (inputs[2] if len(inputs) == 3 else 0)
    for pipeline in ("minimal", "default"):
        got = tvmlite.build(mod, target="llvm -libs=blas", pipeline=pipeline)["main"](*inputs)
        rtol = 1e-5 if dtype == "float32" else 1e-12
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)


TRANSPOSED = [
    # (id, a, stored b, permute axes, bias or None, out)
    ("linear", "4, 8", "5, 8", "None", None, "4, 5"),
    ("linear bias", "2, 4, 8", "5, 8", "None", "5,", "2, 4, 5"),
    ("scores", "3, 4, 8", "3, 6, 8", "[0, 2, 1]", None, "3, 4, 6"),
    ("scores negative axes", "3, 4, 8", "3, 6, 8", "[0, -1, -2]", "4, 6", "3, 4, 6"),
]


def _shape(text: str) -> tuple[int, ...]:
    return tuple(int(d) for d in text.replace(",", " ").split())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", TRANSPOSED, ids=[c[0] for c in TRANSPOSED])
def test_transposed_operand_is_a_flag_not_a_copy(case: tuple, dtype: str) -> None:
    """`matmul(a, permute_dims(w))` swapping the last two axes (nn.Linear's export,
    attention's scores) reads w as stored: no transpose kernel is left."""
    _, sa, sw, axes, sbias, sout = case
    params = f"a: {t(sa, dtype)}, w: {t(sw, dtype)}"
    body = f"lv = R.permute_dims(w, axes={axes})\ngv = R.matmul(a, lv)"
    if sbias is not None:
        params += f", d: {t(sbias, dtype)}"
        body = f"lv = R.permute_dims(w, axes={axes})\nlv1 = R.matmul(a, lv)\ngv = R.add(lv1, d)"
    mod = tvmlite.parse(module(params, t(sout, dtype), body))
    text = lower(mod, Target("llvm -libs=blas")).script()
    name = f"tvmlite.blas.gemm_{'bias_' if sbias else ''}nt_{dtype}"
    assert name in text and "call_tir" not in text and "permute_dims" not in text
    rng = np.random.default_rng(2)
    inputs = [rng.standard_normal(_shape(s)).astype(dtype) for s in (sa, sw, sbias) if s]
    want = inputs[0] @ np.swapaxes(inputs[1], -1, -2) + (inputs[2] if sbias else 0)
    got = tvmlite.build(mod, target="llvm -libs=blas")["main"](*inputs)
    rtol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)


def test_other_permutations_are_copied_first() -> None:
    """A permutation that moves a batch axis is not a transpose flag: it stays a
    kernel, and the matmul of its result goes to BLAS as a plain gemm."""
    params = f"a: {t('3, 4, 8')}, w: {t('8, 3, 5')}"
    body = "lv = R.permute_dims(w, axes=[1, 0, 2])\ngv = R.matmul(a, lv)"
    mod = tvmlite.parse(module(params, t("3, 4, 5"), body))
    text = lower(mod, Target("llvm -libs=blas")).script()
    assert "tvmlite.blas.gemm_float32" in text and "_nt_" not in text
    rng = np.random.default_rng(3)
    a, w = rng.standard_normal((3, 4, 8)), rng.standard_normal((8, 3, 5))
    a, w = a.astype("float32"), w.astype("float32")
    got = tvmlite.build(mod, target="llvm -libs=blas")["main"](a, w)
    np.testing.assert_allclose(got, a @ w.transpose(1, 0, 2), rtol=1e-5, atol=1e-5)


SHARES = [
    # (a, b as stored, transposed, bias): columns cut at multiples of 16 (70 = 48 + 22
    # on two threads), batch items shared out, one column, a batch of one row
    ((1, 37, 24), (24, 70), False, (70,)),
    ((2, 37, 24), (70, 24), True, None),
    ((5, 9, 16), (5, 16, 33), False, (9, 33)),
    ((3, 4, 8), (3, 1, 8), True, None),
    ((1, 1, 300), (300, 129), False, (1, 1, 129)),
]


@pytest.mark.parametrize("case", SHARES, ids=[str(c[0]) for c in SHARES])
def test_gemm_shared_out_on_the_thread_pool(case: tuple) -> None:
    """Each task of tvmlite's pool computes its share of C (whole batch items, or
    a slice of columns), OpenBLAS kept on that task's thread; the caller's own
    OpenBLAS thread count is what it was."""
    shape_a, shape_b, transposed, shape_bias = case
    m, n = shape_a[-2], shape_b[-2] if transposed else shape_b[-1]
    sb = f"{', '.join(map(str, shape_b))}"
    params = f"a: {t(', '.join(map(str, shape_a)))}, w: {t(sb)}"
    axes = [*range(len(shape_b) - 2), len(shape_b) - 1, len(shape_b) - 2]
    body = f"lv = R.permute_dims(w, axes={axes})\n" if transposed else "lv = w\n"
    out = ", ".join(map(str, (*shape_a[:-2], m, n)))
    if shape_bias is None:
        body += "gv = R.matmul(a, lv)"
    else:
        params += f", d: {t(''.join(f'{d}, ' for d in shape_bias))}"
        body += "lv1 = R.matmul(a, lv)\ngv = R.add(lv1, d)"
    mod = tvmlite.parse(module(params, t(out), body))
    rng = np.random.default_rng(4)
    inputs = [rng.standard_normal(s).astype("float32") for s in (shape_a, shape_b, shape_bias) if s]
    b = np.swapaxes(inputs[1], -1, -2) if transposed else inputs[1]
    want = inputs[0] @ b + (inputs[2] if shape_bias else 0)
    local = library.find_gemm("float32").threads_local
    before = _threads_local(local, 3) if local else None
    got = tvmlite.build(mod, target="llvm -libs=blas", cache=False)["main"](*inputs)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    if local:
        assert _threads_local(local, before) == 3  # the caller's count, set back


FALLBACK = """
import dataclasses, numpy as np, tvmlite
from tvmlite.lowering.blas import gemm, library

found = library.find_gemm("float32")
gemm.find_gemm = lambda dtype: dataclasses.replace(found, threads_local=0)
mod = tvmlite.parse(TEXT)
a, w = np.ones((2, 5, 8), "float32"), np.arange(24 * 8, dtype="float32").reshape(24, 8)
got = tvmlite.build(mod, target="llvm -libs=blas", cache=False)["main"](a, w)
np.testing.assert_allclose(got, a @ w.T, rtol=1e-6)
print("ok")
"""


def test_gemm_without_thread_local_control_runs_on_the_caller() -> None:
    """A BLAS that cannot be told to stay on one thread (no
    openblas_set_num_threads_local) runs the whole gemm from the calling thread,
    threading it its own way."""
    import subprocess
    import sys

    text = module(
        f"a: {t('2, 5, 8')}, w: {t('24, 8')}",
        t("2, 5, 24"),
        "lv = R.permute_dims(w)\ngv = R.matmul(a, lv)",
    )
    code = FALLBACK.replace("TEXT", repr(text))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def _threads_local(address: int, value: int) -> int:
    """Set this thread's OpenBLAS thread count; the one it had."""
    import ctypes

    return ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int)(address)(value)


def test_symbolic_shapes_and_epilogue_after_blas() -> None:
    x_type, out_type = t('"n", 16'), t('"n", 8')
    params = f"x: {x_type}, w: {t('16, 8')}, b: {t('8,')}"
    body = "lv = R.matmul(x, w)\nlv1 = R.add(lv, b)\ngv = R.nn.relu(lv1)"
    text = module(params, out_type, body).replace(
        "        with", "        n = T.int64()\n        with"
    )
    mod = tvmlite.parse(text.replace("as R\n", "as R\nfrom tvm.script import tir as T\n"))
    ex = tvmlite.build(mod, target="blas", pipeline="default")
    for n in (1, 7, 64):
        x = np.random.rand(n, 16).astype("float32") - 0.5
        w = np.random.rand(16, 8).astype("float32") - 0.5
        b = np.random.rand(8).astype("float32") - 0.5
        np.testing.assert_allclose(
            ex["main"](x, w, b), np.maximum(x @ w + b, 0), rtol=1e-5, atol=1e-6
        )


@pytest.mark.parametrize(
    ("params", "ret", "body"),
    [
        (
            f"a: {t('4, 8', 'int32')}, b: {t('8, 5', 'int32')}",
            t("4, 5", "int32"),
            "gv = R.matmul(a, b)",
        ),
        (f"a: {t('8,')}, b: {t('8, 5')}", t("5,"), "gv = R.matmul(a, b)"),
        (
            f"a: {t('4, 8')}, b: {t('8, 5')}, d: {t('4, 1')}",
            t("4, 5"),
            "lv = R.matmul(a, b)\ngv = R.add(lv, d)",
        ),
    ],
    ids=["int32", "vector", "column bias"],
)
def test_unsupported_cases_stay_with_llvm(params: str, ret: str, body: str) -> None:
    mod = tvmlite.parse(module(params, ret, body))
    text = lower(mod, Target("llvm -libs=blas")).script()
    if "column" in params or "d:" in params:
        # The matmul alone still goes to BLAS; the column bias add does not.
        assert "gemm_float32" in text and "gemm_bias" not in text
    else:
        assert "tvmlite.blas" not in text
    rng = np.random.default_rng(1)
    dtypes = ["int32" if "int32" in params else "float32"]
    shapes = [(4, 8), (8, 5), (4, 1)] if "d:" in params else [(4, 8), (8, 5)]
    if "8,)" in params:
        shapes = [(8,), (8, 5)]
    inputs = [(rng.standard_normal(s) * 4).astype(dtypes[0]) for s in shapes]
    want = inputs[0] @ inputs[1] + (inputs[2] if len(inputs) == 3 else 0)
    got = tvmlite.build(mod, target="llvm -libs=blas")["main"](*inputs)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_missing_library_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    library.find_gemm.cache_clear()
    monkeypatch.setattr(library, "candidate_libraries", lambda: [])
    try:
        with pytest.raises(tvmlite.TVMLiteError, match="BLAS offload needs one of"):
            library.find_gemm("float32")
        with pytest.raises(tvmlite.TVMLiteError, match="float32 and float64"):
            library.find_gemm("float16")
    finally:
        library.find_gemm.cache_clear()

"""Incremental lowering (`lowering/incremental.py`, `lowering/cache/functions.py`):
a cached build keeps each prim function's scheduled and lowered form, so a
rebuild after an edit schedules and lowers only the functions that changed. The
forms taken from the cache are the ones lowering makes (same text), entries
that do not verify are made again, and weight copies stay foldable."""

from __future__ import annotations

import numpy as np
from relax_text import float32_main, unary_chain

import tvmlite
from tvmlite.lowering.build import _lower
from tvmlite.lowering.cache import functions as function_entries
from tvmlite.lowering.cache.functions import function_cache
from tvmlite.lowering.incremental import CachedLowering
from tvmlite.lowering.pipeline import NOT_GIVEN, relax_pipeline_of
from tvmlite.lowering.target import Target
from tvmlite.transform import BindParams

OPS = ("exp", "tanh", "sigmoid", "sqrt")
X = np.linspace(0.1, 0.9, 16, dtype="float32")


def _expected(scale: float) -> np.ndarray:
    v = np.tanh(np.exp(X))
    return np.sqrt(1 / (1 + np.exp(-v))) * np.float32(scale)


def test_a_rebuild_after_an_edit_lowers_only_the_changed_function(cache_dir):
    first = tvmlite.build(tvmlite.parse(unary_chain(OPS)), pipeline="minimal")
    assert first.function_counts == {"functions": 5, "cached": 0, "lowered": 5}
    edited = tvmlite.build(tvmlite.parse(unary_chain(OPS, scale="3.0")), pipeline="minimal")
    assert edited.function_counts == {"functions": 5, "cached": 4, "lowered": 1}
    assert edited.kernel_counts == {"units": 5, "cached": 4, "compiled": 1}
    np.testing.assert_allclose(first["main"](X), _expected(2.0), rtol=1e-5)
    np.testing.assert_allclose(edited["main"](X), _expected(3.0), rtol=1e-5)


def _lowered(text: str, cached: CachedLowering | None) -> tvmlite.IRModule:
    target = Target("llvm")
    pipeline = relax_pipeline_of("default", NOT_GIVEN, target)
    return _lower(tvmlite.parse(text), target, pipeline, "default", cached)


def test_cached_forms_are_the_forms_lowering_makes(cache_dir):
    """A module lowered with every prim function from the cache prints as the
    same module lowered afresh (names included)."""
    text = unary_chain(OPS)
    cache = function_cache(Target("llvm"))
    assert cache is not None
    storing = CachedLowering(cache)
    fresh = _lowered(text, storing)
    storing.commit()
    loading = CachedLowering(cache)
    again = _lowered(text, loading)
    assert loading.counts["cached"] == loading.counts["functions"] > 0
    assert loading.counts["lowered"] == 0
    assert again.script() == fresh.script() == _lowered(text, None).script()


def test_an_entry_that_does_not_verify_is_lowered_again(cache_dir):
    tvmlite.build(tvmlite.parse(unary_chain(OPS)), pipeline="minimal")
    entries = sorted(cache_dir.glob("*.tir"))
    assert len(entries) == 5
    entries[0].write_bytes(entries[0].read_bytes()[:-4] + b"bad!")
    entries[1].write_bytes(b"")
    for library in cache_dir.glob("*.so"):  # the build's own entry: built again
        library.unlink()
    again = tvmlite.build(tvmlite.parse(unary_chain(OPS)), pipeline="minimal")
    assert again.function_counts == {"functions": 5, "cached": 3, "lowered": 2}
    np.testing.assert_allclose(again["main"](X), _expected(2.0), rtol=1e-5)


def test_another_compiler_does_not_read_the_entries(cache_dir, monkeypatch):
    tvmlite.build(tvmlite.parse(unary_chain(OPS)), pipeline="minimal")
    monkeypatch.setattr(function_entries, "compiler_digest", lambda: "another tvmlite")
    again = tvmlite.build(tvmlite.parse(unary_chain(OPS, scale="3.0")), pipeline="minimal")
    assert again.function_counts is not None and again.function_counts["cached"] == 0


def test_a_bound_weight_is_still_packed_at_build_time_when_cached(cache_dir):
    """The schedule copies a weight into panels; with the weight bound,
    FoldConstantPacks takes the copy out of the kernel, from the cached
    scheduled form as from a fresh one."""
    header = "# from tvm.script import ir as I\n# from tvm.script import relax as R\n\n"
    body = "wt = R.permute_dims(w, axes=[1, 0])\ngv = R.matmul(x, wt)"
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 48)).astype("float32")
    results = []
    for seed in (1, 2):  # another weight, the same kernels
        w = np.random.default_rng(seed).standard_normal((96, 48)).astype("float32")
        mod = tvmlite.parse(float32_main({"x": (64, 48), "w": (96, 48)}, body, header))
        ex = tvmlite.build(BindParams("main", {"w": w})(mod))
        np.testing.assert_allclose(ex["main"](x), x @ w.T, rtol=1e-4, atol=1e-4)
        results.append(ex.function_counts)
    assert results[0] is not None and results[1] is not None
    assert results[0]["cached"] == 0 and results[0]["lowered"] > 0
    assert results[1]["cached"] == results[1]["functions"] and results[1]["lowered"] == 0

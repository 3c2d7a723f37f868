"""NumPy and DLPack interop of compiled graph functions: zero-copy inputs,
owned writable outputs freed by NumPy, the pipeline argument of build."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tvmlite
from tvmlite.dsl.module import IRModule
from tvmlite.lowering.pipeline import get_pipeline
from tvmlite.transform import LegalizeOps, PassContext

DATA = Path(__file__).parent / "data" / "build"


class Producer:
    """A foreign DLPack producer (wraps an array, exposes only the protocol)."""

    def __init__(self, array: np.ndarray) -> None:
        self._array = array

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._array.__dlpack_device__()


@pytest.fixture(scope="module")
def ex() -> tvmlite.Executable:
    return tvmlite.build(tvmlite.parse((DATA / "graph.tvms").read_text()))


def test_dlpack_input(ex: tvmlite.Executable) -> None:
    x = np.arange(4, dtype="float32")
    np.testing.assert_array_equal(ex["pick"](np.array(True), Producer(x)), x * 2)


def test_outputs_are_owned_numpy_arrays(ex: tvmlite.Executable) -> None:
    out = ex["pick"](np.array(True), np.ones(4, "float32"))
    assert isinstance(out, np.ndarray) and out.flags.writeable and out.flags.c_contiguous
    assert out.ctypes.data % 64 == 0  # allocated aligned by native code
    for _ in range(2000):  # freed by NumPy: no growth over many calls
        ex["pick"](np.array(False), np.ones(4, "float32"))
    gc.collect()


def test_input_memory_is_not_copied() -> None:
    seen: list[np.ndarray] = []

    @tvmlite.register_func("test.capture", override=True)
    def capture(x: np.ndarray) -> None:
        seen.append(x)

    text = (DATA / "packed.tvms").read_text().split("    @R.function")[0] + (
        "    @R.function(pure=False)\n"
        '    def main(x: R.Tensor((3,), "float32")) -> R.Tensor((3,), "float32"):\n'
        '        _ = R.call_packed("test.capture", x, sinfo_args=R.Tuple())\n'
        "        return x\n"
    )
    ex = tvmlite.build(tvmlite.parse(text))
    x = np.ones(3, "float32")
    y = ex["main"](x)
    assert np.shares_memory(seen[0], x)
    assert not np.shares_memory(y, x)  # a returned input is a copy the caller owns


def test_pipeline_forms() -> None:
    mod = tvmlite.parse((DATA / "unlegalized.tvms").read_text())
    x = np.zeros(4, "float32")
    for pipeline in (None, "default", "minimal", LegalizeOps(), [LegalizeOps()]):
        np.testing.assert_array_equal(tvmlite.build(mod, pipeline=pipeline)["main"](x), 1.0)
    with PassContext(config={"relax.transform.apply_legalize_ops": False}):
        with pytest.raises(tvmlite.TVMLiteError, match="R.exp"):
            tvmlite.build(mod)
    with pytest.raises(tvmlite.TVMLiteError, match="unknown pipeline 'fast'"):
        tvmlite.build(mod, pipeline="fast")
    assert get_pipeline("default").name == "default"


def test_pipeline_function_and_target_checks() -> None:
    mod = tvmlite.parse((DATA / "prim_only.tvms").read_text())
    calls: list[str] = []

    def mark(m: IRModule) -> IRModule:
        calls.append("ran")
        return m

    tvmlite.build(mod, pipeline=mark)
    assert calls == ["ran"]
    with pytest.raises(tvmlite.TVMLiteError, match="unsupported target 'cuda'"):
        tvmlite.build(mod, target="cuda")
    with pytest.raises(tvmlite.TVMLiteError, match="takes an IRModule"):
        tvmlite.build("not a module")

"""Producers read by the native fast call itself through their type's DLPack C
exchange API (torch), and the lifetime of what producers export: every block a
pure-Python producer hands over is released exactly once, whatever order inputs
and outputs die in. Torch tests are skipped, saying so, without torch."""

from __future__ import annotations

import ctypes
import gc
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tvmlite
from tvmlite.runtime import dlpack, fastcall

ADD = Path(__file__).resolve().parents[2] / "examples" / "add.tvms"  # x (n, 3) + y (3,)
_CAPSULE_NEW = ctypes.PYFUNCTYPE(
    ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p
)(("PyCapsule_New", ctypes.pythonapi))
_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


@pytest.fixture
def main() -> Any:
    """A fresh module each test: which producer type its wrappers serve is per module."""
    return tvmlite.build(tvmlite.parse(ADD.read_text()), cache=False)["main"]


def torch_or_skip() -> Any:
    return pytest.importorskip("torch", reason="torch is not installed (an optional test extra)")


class CountingProducer:
    """A pure-Python DLPack producer: each export is a fresh versioned block over
    the array, whose deleter records its address."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = array
        self.exported: list[int] = []
        self.released: list[int] = []
        self._keep: list[Any] = []
        self._deleter = _DELETER(self.released.append)

    def __dlpack__(self, **_: Any) -> Any:
        block = dlpack.DLManagedTensorVersioned()
        dlpack.fill_tensor(block.dl_tensor, self.array, self._keep)
        block.version = dlpack.DLPackVersion(1, 0)
        block.deleter = ctypes.cast(self._deleter, ctypes.c_void_p).value
        self._keep.append(block)
        self.exported.append(ctypes.addressof(block))
        return _CAPSULE_NEW(ctypes.addressof(block), b"dltensor_versioned", None)

    def __dlpack_device__(self) -> tuple[int, int]:
        return (dlpack.KDL_CPU, 0)


def test_torch_tensors_are_read_by_the_wrapper(main, monkeypatch) -> None:
    torch = torch_or_skip()
    x, y = torch.rand(2, 3), torch.rand(3)
    np.testing.assert_array_equal(main(x, y), (x + y).numpy())  # the first call serves the type
    assert fastcall._EXCHANGE.get(torch.Tensor)
    # From now on neither the Python path nor NumPy's import is needed.
    monkeypatch.setattr(np, "from_dlpack", None)
    np.testing.assert_array_equal(main(x, y), (x + y).numpy())
    big = torch.rand(4, 3)
    np.testing.assert_array_equal(main(big[2:], y), (big[2:] + y).numpy())  # an offset view
    odd = torch.rand(8).as_strided((1, 3), (7, 1))  # a size-1 axis of any stride is compact
    np.testing.assert_array_equal(main(odd, y.numpy()), (odd + y).numpy())


def test_torch_inputs_the_wrapper_refuses_keep_their_messages(main) -> None:
    torch = torch_or_skip()
    x, y = torch.rand(2, 3), torch.rand(3)
    main(x, y)
    with pytest.raises(tvmlite.TVMLiteError, match="main: parameter 'y': expected dtype float32"):
        main(x, y.double())
    with pytest.raises(tvmlite.TVMLiteError, match="parameter 'x': expected a compact"):
        main(torch.rand(3, 2).t(), y)
    with pytest.raises(tvmlite.TVMLiteError, match="parameter 'y'"):
        main(x, torch.rand(2))
    with pytest.raises(tvmlite.TVMLiteError, match="parameter 'x'"):
        main(torch.rand(3), y)


def test_a_type_without_the_exchange_api_is_imported(main) -> None:
    x, y = np.arange(6, dtype="float32").reshape(2, 3), np.ones(3, "float32")
    p = CountingProducer(x)
    np.testing.assert_array_equal(main(p, y), x + y)
    assert CountingProducer not in fastcall._EXCHANGE or not fastcall._EXCHANGE[CountingProducer]


def test_every_exported_block_is_released_once(main) -> None:
    x, y = np.arange(6, dtype="float32").reshape(2, 3), np.arange(3, dtype="float32")
    px, py = CountingProducer(x), CountingProducer(y)
    outs = [main(px, py) for _ in range(3)]
    gc.collect()
    for p in (px, py):  # the imported arrays lived only for their call
        assert sorted(p.released) == sorted(p.exported) and len(p.exported) == 3
    del outs[1]
    np.testing.assert_array_equal(outs[0], x + y)
    np.testing.assert_array_equal(outs[1], x + y)


@pytest.mark.parametrize("order", ["outputs first", "inputs first"])
def test_torch_outputs_outlive_or_predecease_inputs(order) -> None:
    torch = torch_or_skip()
    ex = tvmlite.build(tvmlite.parse(ADD.read_text()), cache=False)
    to_torch = ex.with_output("torch")["main"]
    x = torch.ones(2, 3)
    out = to_torch(x, x[0])
    view = out[1:]
    assert isinstance(out, torch.Tensor)
    if order == "outputs first":
        del out
        gc.collect()
        assert view.tolist() == [[2.0] * 3]
        del view, x
    else:
        del x, ex
        gc.collect()
        assert out.tolist() == [[2.0] * 3] * 2
        del out
        assert view.tolist() == [[2.0] * 3]
    gc.collect()


CHILD = """
import gc, sys
import numpy as np, torch, tvmlite
ex = tvmlite.build(tvmlite.parse(open(sys.argv[1]).read()), cache=False)
main, to_torch = ex["main"], ex.with_output("torch")["main"]
x, y = torch.rand(2, 3), torch.rand(3)
a, b, c = main(x, y), to_torch(x, y), to_torch(x.numpy(), y)
del x, ex; gc.collect()
assert np.allclose(a, b.numpy()) and torch.equal(b, c)
del b, main; gc.collect()
view = c[1:]; del c, to_torch, a; gc.collect()
assert view.shape == (1, 3) and bool(torch.isfinite(view).all())
print("clean")
"""


def test_lifetimes_under_debug_allocator(tmp_path) -> None:
    """The orders above in a child whose allocator catches double frees and
    writes after free (PYTHONMALLOC=debug, -X dev): it must exit cleanly."""
    torch_or_skip()
    env = {**os.environ, "PYTHONMALLOC": "debug"}
    done = subprocess.run(
        [sys.executable, "-X", "dev", "-c", CHILD, str(ADD)],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "clean"

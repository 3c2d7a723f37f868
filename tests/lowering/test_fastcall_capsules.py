"""Pure-Python DLPack producers read by the native fast call itself: it asks
`__dlpack__` for a capsule (versioned, or legacy after a TypeError), renames it
`used_...`, reads the DLTensor and calls the manager's deleter once the entry
has returned. Every producer kind gives the same results without the Python
path; every refusal is a located error; every exported tensor is deleted once,
whether the call succeeded, was refused or failed."""

from __future__ import annotations

import ctypes
import gc
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_build_interop import SCALE
from test_build_interop import Producer as Wrapper  # passes NumPy's own capsules on

import tvmlite
from tvmlite.lowering import compile_prim_funcs
from tvmlite.runtime import dlpack

ADD = Path(__file__).resolve().parents[2] / "examples" / "add.tvms"  # x (n, 3) + y (3,)
_CAPSULE_NEW = ctypes.PYFUNCTYPE(
    ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p
)(("PyCapsule_New", ctypes.pythonapi))
_CAPSULE_NAME = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.py_object)(
    ("PyCapsule_GetName", ctypes.pythonapi)
)
_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
READ_ONLY = 1  # DLPACK_FLAG_BITMASK_READ_ONLY


class DLManagedTensor(ctypes.Structure):
    """DLPack's legacy (pre-1.0) managed tensor."""

    _fields_ = [
        ("dl_tensor", dlpack.DLTensor),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),
    ]


class Exporter:
    """A producer known only through DLPack: each `__dlpack__` exports a fresh
    managed tensor over `array` (strides, device, flags, version as given) whose
    deleter records its address. The capsules have no destructor, so a tensor is
    deleted only by a consumer that took it (or leaks, which the tests see)."""

    def __init__(
        self,
        array: np.ndarray,
        *,
        strides: tuple[int, ...] | None = None,
        device: int = dlpack.KDL_CPU,
        flags: int = 0,
        major: int = 1,
    ) -> None:
        self.array, self.strides, self.device = array, strides, device
        self.flags, self.major = flags, major
        self.exported: list[int] = []
        self.deleted: list[int] = []
        self.capsules: list[Any] = []  # the last call's capsules, to read their names
        self._keep: list[Any] = []
        self._deleter = _DELETER(self.deleted.append)

    def describe(self, tensor: dlpack.DLTensor) -> None:
        dlpack.fill_tensor(tensor, self.array, self._keep)
        tensor.device = dlpack.DLDevice(self.device, 0)
        if self.strides is not None:
            steps = (ctypes.c_int64 * len(self.strides))(*self.strides)
            self._keep.append(steps)
            tensor.strides = ctypes.cast(steps, ctypes.POINTER(ctypes.c_int64))

    def export(self, block: Any, name: bytes) -> Any:
        block.deleter = ctypes.cast(self._deleter, ctypes.c_void_p).value
        self._keep.append(block)
        self.exported.append(ctypes.addressof(block))
        capsule = _CAPSULE_NEW(ctypes.addressof(block), name, None)
        self.capsules = [capsule]
        return capsule

    def __dlpack__(self, *, stream: Any = None, max_version: Any = None, **_: Any) -> Any:
        assert max_version == (1, 0), max_version  # what the consumer asks for
        block = dlpack.DLManagedTensorVersioned()
        self.describe(block.dl_tensor)
        block.version = dlpack.DLPackVersion(self.major, 0)
        block.flags = self.flags
        return self.export(block, b"dltensor_versioned")

    def __dlpack_device__(self) -> tuple[int, int]:
        return (self.device, 0)


class LegacyExporter(Exporter):
    """A producer from before DLPack 1.0: no `max_version`, legacy capsules."""

    def __dlpack__(self, stream: Any = None) -> Any:  # type: ignore[override]
        block = DLManagedTensor()
        self.describe(block.dl_tensor)
        return self.export(block, b"dltensor")


class Failing(Exporter):
    def __dlpack__(self, **_: Any) -> Any:
        raise KeyError("no tensor today")


class NotACapsule(Exporter):
    def __dlpack__(self, **_: Any) -> Any:
        return 42


class OtherCapsule(Exporter):
    """A capsule of another name (over a real tensor the wrapper must not read)."""

    def __dlpack__(self, **kwargs: Any) -> Any:
        super().__dlpack__(**kwargs)
        return _CAPSULE_NEW(self.exported[-1], b"not_a_tensor", None)


@pytest.fixture
def ex() -> Any:
    return tvmlite.build(tvmlite.parse(ADD.read_text()), cache=False)


def no_python_path(monkeypatch) -> None:
    """Fail any call that takes the Python path (which imports through NumPy)."""

    def refuse(*_: Any) -> Any:
        raise AssertionError("the Python path was taken")

    monkeypatch.setattr(np, "from_dlpack", refuse)
    monkeypatch.setattr(dlpack, "as_array", refuse)


def operands() -> tuple[np.ndarray, np.ndarray]:
    return np.arange(6, dtype="float32").reshape(2, 3), np.arange(3, dtype="float32") * 10


def test_every_producer_kind_is_read_natively(ex, monkeypatch) -> None:
    no_python_path(monkeypatch)
    x, y = operands()
    main = ex["main"]
    for make in (Exporter, LegacyExporter, Wrapper):
        px, py = make(x), make(y)
        np.testing.assert_array_equal(main(px, py), x + y)
        np.testing.assert_array_equal(main(x, py), x + y)  # mixed with a NumPy array
        np.testing.assert_array_equal(main(px, y), x + y)
    big = np.arange(12, dtype="float32").reshape(4, 3)  # an offset view, legacy capsule
    np.testing.assert_array_equal(main(LegacyExporter(big[2:]), y), big[2:] + y)
    odd = Exporter(x[:1], strides=(7, 1))  # a size-1 axis may have any stride
    np.testing.assert_array_equal(main(odd, y), x[:1] + y)


def test_torch_and_producers_in_one_call(ex, monkeypatch) -> None:
    torch = pytest.importorskip("torch", reason="torch is not installed (an optional test extra)")
    x, y = operands()
    main = ex["main"]
    tx, ty = torch.from_numpy(x), torch.from_numpy(y)
    px = Exporter(x)
    # Torch unserved: the tensor px exported is released, the Python path serves torch.
    np.testing.assert_array_equal(main(px, ty), x + y)
    assert len(px.exported) == 2 and sorted(px.deleted) == sorted(px.exported)
    no_python_path(monkeypatch)
    np.testing.assert_array_equal(main(px, ty), x + y)
    np.testing.assert_array_equal(main(tx, LegacyExporter(y)), x + y)
    assert len(px.exported) == 3 and sorted(px.deleted) == sorted(px.exported)


@pytest.mark.parametrize("make", [Exporter, LegacyExporter])
def test_capsules_are_consumed_as_the_protocol_says(ex, make) -> None:
    x, y = operands()
    px, py = make(x), make(y)
    ex["main"](px, py)
    for p in (px, py):
        name = _CAPSULE_NAME(p.capsules[0])
        assert name == b"used_" + (b"dltensor_versioned" if make is Exporter else b"dltensor")
        assert p.deleted == p.exported and len(p.exported) == 1


def test_no_leak_over_many_calls(ex) -> None:
    x, y = operands()
    px, py = Exporter(x), LegacyExporter(y)
    outs = [ex["main"](px, py) for _ in range(300)]
    assert all(np.array_equal(out, x + y) for out in outs)
    for p in (px, py):
        assert len(p.exported) == 300 and sorted(p.deleted) == sorted(p.exported)


BAD = {  # y (3,) as a producer the wrapper refuses, and the message the Python path gives
    "device": (lambda y: Exporter(y, device=2), "cannot import via DLPack"),
    "dtype": (lambda y: Exporter(y.astype("float64")), "expected dtype float32"),
    "ndim": (lambda y: Exporter(y.reshape(1, 3)), "expected 1 dimensions, got 2"),
    "strides": (lambda y: Exporter(np.arange(6, dtype="float32")[::2]), "expected a compact"),
    "version": (lambda y: Exporter(y, major=2), "cannot import via DLPack"),
    "raises": (lambda y: Failing(y), "cannot import via DLPack: 'no tensor today'"),
    "not a capsule": (lambda y: NotACapsule(y), "cannot import via DLPack"),
    "another capsule": (lambda y: OtherCapsule(y), "cannot import via DLPack"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_refused_producers_are_located_and_released(ex, case) -> None:
    make, message = BAD[case]
    x, y = operands()
    px, py = Exporter(x), make(y)  # x is taken before y is refused
    with pytest.raises(tvmlite.TVMLiteError, match=f"main: parameter 'y': .*{message}"):
        ex["main"](px, py)
    gc.collect()
    assert px.exported and sorted(px.deleted) == sorted(px.exported)
    assert len(set(py.deleted)) == len(py.deleted) <= len(py.exported)  # never twice
    np.testing.assert_array_equal(ex["main"](px, y), x + y)  # the wrapper serves again


def test_a_failed_call_releases_what_it_took(ex) -> None:
    x, y = operands()
    px, py = Exporter(x), LegacyExporter(y[:2].copy())  # y's shape is wrong: the entry says
    with pytest.raises(tvmlite.TVMLiteError, match="parameter 'y'"):
        ex["main"](px, py)
    gc.collect()
    for p in (px, py):
        assert sorted(p.deleted) == sorted(p.exported)


def test_prim_functions_take_producers_and_refuse_read_only_outputs() -> None:
    scale = compile_prim_funcs({"scale": tvmlite.parse(SCALE)})["scale"]
    a, b = operands()[0], np.zeros((2, 3), "float32")
    scale(LegacyExporter(a), Exporter(b))
    np.testing.assert_array_equal(b, a * 2)
    scale(Exporter(a, flags=READ_ONLY), Exporter(b))  # a read-only input is fine
    with pytest.raises(tvmlite.TVMLiteError, match="parameter 'B': the array is read-only"):
        scale(Exporter(a), Exporter(b, flags=READ_ONLY))


def test_torch_outputs_for_producer_inputs(ex) -> None:
    torch = pytest.importorskip("torch", reason="torch is not installed (an optional test extra)")
    x, y = operands()
    converted = ex.with_output("torch")
    to_torch = converted["main"]
    assert to_torch is converted["main"]  # made once
    for args in ((x, y), (Exporter(x), LegacyExporter(y)), (torch.from_numpy(x), y)):
        out = to_torch(*args)
        assert isinstance(out, torch.Tensor) and out.tolist() == (x + y).tolist()
    with pytest.raises(tvmlite.TVMLiteError, match="parameter 'y'"):
        to_torch(x, x)

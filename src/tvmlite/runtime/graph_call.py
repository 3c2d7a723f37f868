"""Calling a compiled graph function from Python.

Arguments are flattened the way the entry ABI wants them (tuples into their
fields; prim values as 0-d arrays; shapes as int64 arrays) and described as
DLTensors over the caller's own memory. What can only be known in Python (is
it an array at all, does its dtype exist in DLPack) is checked here; shapes,
dtypes, ranks and strides are checked by the native entry, which reports in
the error buffer.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import relax
from tvmlite.runtime import dlpack, outputs
from tvmlite.runtime.abi import ERROR_BYTES, Leaf, leaves
from tvmlite.runtime.fastcall import fast_builtin
from tvmlite.runtime.scalars import describe, scalar_value, shape_values

if TYPE_CHECKING:
    from tvmlite.runtime.module import CompiledModule

ENTRY_SIGNATURE = ctypes.CFUNCTYPE(
    ctypes.c_int32,
    ctypes.c_void_p,
    ctypes.c_int32,
    ctypes.c_void_p,
    ctypes.c_int32,
    ctypes.c_char_p,
    ctypes.c_int64,
)


class GraphFunction:
    """A compiled graph function: `f(*args)` returns arrays, tuples, Python
    scalars (prim results) or tuples of ints (shape results)."""

    def __init__(
        self,
        executable: CompiledModule,
        name: str,
        params: Sequence[relax.Var],
        ret: relax.StructInfo,
        address: int,
        fast_address: int = 0,
        fast_record: int = 0,
        convert: Callable[[np.ndarray], Any] | None = None,
        written: frozenset[int] = frozenset(),
    ) -> None:
        self.executable = executable  # keeps the machine code alive
        self.convert = convert  # what result arrays are handed to (`with_output`), or None
        self.name = name
        self.params = tuple(params)
        self.written = written  # positions of the parameters written in place
        self.leaves = [leaf for p in self.params for leaf in leaves(p.struct_info, p.name)]
        self.ret = ret
        self.ret_leaves = leaves(ret, "result")
        self.address = address
        self._cfunc = ENTRY_SIGNATURE(address)
        self._fast_address = fast_address  # the module's wrapper, 0 when none serves
        self._fast_record = fast_record  # its record, when the wrapper is the shared one
        self._fast: Any = None  # the wrapper as a builtin, made on the first call
        self._fast_tried = not fast_address
        # Threads making the first call together must build one wrapper: a second
        # one would replace (and free) the first while another thread runs it.
        self._fast_lock = threading.Lock()

    def __repr__(self) -> str:
        kind = "" if self.convert is None else f" -> {outputs.kind_of(self.convert)}"
        return f"<GraphFunction {self.name}({', '.join(p.name for p in self.params)}){kind}>"

    def with_output(self, kind: str | Callable[[np.ndarray], Any]) -> GraphFunction:
        """This function with its results as `kind` arrays ("numpy" or "torch", as
        `module.with_output`), or with every result array handed to the callable
        `kind` (by the native wrapper itself when it serves the call)."""
        if isinstance(kind, str):
            convert = outputs.converter(kind)
        elif callable(kind):
            convert = kind
        else:
            raise TVMLiteError(
                f"with_output: expected one of {', '.join(outputs.OUTPUTS)} or a callable, "
                f"got {type(kind).__name__}"
            )
        return GraphFunction(
            self.executable, self.name, self.params, self.ret, self.address,
            self._fast_address, self._fast_record, convert, self.written,
        )  # fmt: skip

    def __call__(self, *args: Any) -> Any:
        fast = self._fast
        if fast is not None:
            return fast(*args)
        if not self._fast_tried and not self.executable.has_missing_packed:
            fast = self._make_fast()
            if fast is not None:
                return fast(*args)
        return self.call_python(*args)

    def _make_fast(self) -> Any:
        """Turn the module's native wrapper (docs/abi.md, fast calls) into a builtin
        once and return it; it falls back to `call_python` for arguments it does
        not take. Packed functions must be bound first: the wrapper does not look
        for late registrations."""
        with self._fast_lock:
            if not self._fast_tried:
                self._fast = fast_builtin(
                    self._fast_address,
                    self.call_python,
                    self.name,
                    self._fast_record,
                    self.convert,
                )
                self._fast_tried = True
            return self._fast

    def call_python(self, *args: Any) -> Any:
        """What the native wrapper does not take: the first producer type with a
        C exchange API (handed to the wrapper, which reads such tensors itself
        from then on), and the ctypes path for strided views, tuples, scalars,
        producers the wrapper refused and every error."""
        if self._fast is not None and self.executable.serve_producer(args):
            return self._fast(*args)
        if len(args) != len(self.params):
            names = ", ".join(p.name for p in self.params)
            raise TVMLiteError(
                f"{self.name}() takes {len(self.params)} arguments ({names}), got {len(args)}"
            )
        if self.executable.has_missing_packed:
            self.executable.resolve_packed()
        arrays: list[np.ndarray] = []
        for k, (p, arg) in enumerate(zip(self.params, args, strict=True)):
            start = len(arrays)
            _flatten(p.struct_info, arg, p.name, arrays, self.name)
            if k in self.written and not all(a.flags.writeable for a in arrays[start:]):
                raise TVMLiteError(
                    f"{self.name}: parameter '{p.name}': the array is read-only, "
                    "but the function writes it in place"
                )
        tensors = (dlpack.DLTensor * max(1, len(arrays)))()
        keep: list[Any] = []
        for t, arr in zip(tensors, arrays, strict=False):
            dlpack.fill_tensor(t, arr, keep)
        size = ctypes.sizeof(dlpack.DLTensor)
        base = ctypes.addressof(tensors)
        pointers = (ctypes.c_void_p * max(1, len(arrays)))(
            *(base + k * size for k in range(len(arrays)))
        )
        outs = (ctypes.c_void_p * max(1, len(self.ret_leaves)))()
        err = ctypes.create_string_buffer(ERROR_BYTES)
        status = self._cfunc(pointers, len(arrays), outs, len(self.ret_leaves), err, ERROR_BYTES)
        if status:
            raise TVMLiteError(err.value.decode(errors="replace") or f"{self.name}: failed")
        results = [_to_python(leaf, outs[k]) for k, leaf in enumerate(self.ret_leaves)]
        result = _rebuild(self.ret, results)
        return result if self.convert is None else outputs.converted(result, self.convert)


def _flatten(sinfo: relax.StructInfo, arg: Any, label: str, out: list[np.ndarray], fn: str) -> None:
    """Append the arrays `arg` contributes to the entry's argument list."""
    if isinstance(sinfo, relax.TupleStructInfo):
        if not isinstance(arg, tuple | list) or len(arg) != len(sinfo.fields):
            raise TVMLiteError(
                f"{fn}: parameter '{label}': expected a tuple of {len(sinfo.fields)}, "
                f"got {describe(arg)}"
            )
        for k, (f, a) in enumerate(zip(sinfo.fields, arg, strict=True)):
            _flatten(f, a, f"{label}[{k}]", out, fn)
    elif isinstance(sinfo, relax.TensorStructInfo):
        out.append(_tensor(arg, sinfo, label, fn))
    elif isinstance(sinfo, relax.PrimStructInfo):
        out.append(_prim(arg, sinfo.dtype, label, fn))
    elif isinstance(sinfo, relax.ShapeStructInfo):
        out.append(_shape(arg, label, fn))
    else:
        raise TVMLiteError(f"{fn}: parameter '{label}' cannot be passed to compiled code")


def _tensor(arg: Any, sinfo: relax.TensorStructInfo, label: str, fn: str) -> np.ndarray:
    arg = dlpack.as_array(arg, f"{fn}: parameter '{label}'")
    if dlpack.dl_dtype(arg.dtype) is None:
        want = sinfo.dtype if sinfo.dtype != "void" else "a DLPack dtype"
        raise TVMLiteError(f"{fn}: parameter '{label}': expected dtype {want}, got {arg.dtype}")
    if arg.ndim and any(s % arg.itemsize for s in arg.strides):
        raise TVMLiteError(f"{fn}: parameter '{label}': strides are not whole elements")
    return arg


def _shape(arg: Any, label: str, fn: str) -> np.ndarray:
    try:
        return np.array(shape_values(arg), dtype="int64")
    except ValueError as err:
        raise TVMLiteError(f"{fn}: parameter '{label}': {err}") from None


def _prim(arg: Any, dtype: str, label: str, fn: str) -> np.ndarray:
    try:
        value = scalar_value(arg, dtype)
    except ValueError as err:
        raise TVMLiteError(f"{fn}: parameter '{label}': {err}") from None
    with np.errstate(over="ignore"):  # a float64 beyond float32 is inf, as NumPy casts
        return np.array(value, dtype=dtype)


def _to_python(leaf: Leaf, address: int) -> Any:
    array = dlpack.take_managed(address)
    if isinstance(leaf.sinfo, relax.PrimStructInfo):
        return array.item()
    if isinstance(leaf.sinfo, relax.ShapeStructInfo):
        return tuple(int(v) for v in array)
    return array


def _rebuild(sinfo: relax.StructInfo, flat: Sequence[Any]) -> Any:
    items = list(flat)
    return _take(sinfo, items)


def _take(sinfo: relax.StructInfo, items: list[Any]) -> Any:
    if isinstance(sinfo, relax.TupleStructInfo):
        return tuple(_take(f, items) for f in sinfo.fields)
    return items.pop(0)

"""Calling a compiled prim function (a kernel) on NumPy arrays.

    ex = tvmlite.lowering.compile_prim_funcs({"add": mod["add"]})
    ex["add"](a, b, out)            # destination-passing: `out` is written in place

Every `PrimFuncKernel` holds the module its code lives in, so machine code stays
mapped as long as anything can still call it.
"""

from __future__ import annotations

import ctypes
from typing import Any

from tvmlite.diagnostics import TVMLiteError
from tvmlite.runtime.abi import MESSAGE_SIZE, STATUS_OUT_OF_MEMORY, KernelSignature
from tvmlite.runtime.args import ArgumentBinder, ctypes_signature


class PrimFuncKernel:
    """A callable compiled prim function: checks its arguments, runs the kernel,
    turns a failed assert into `TVMLiteError`. Returns None (outputs are written
    into the arrays passed in)."""

    def __init__(self, library: Any, sig: KernelSignature, address: int) -> None:
        self.library = library  # whatever owns the machine code: keeps it alive
        self.signature = sig
        self.name = sig.name
        self._binder = ArgumentBinder(sig)
        prototype = ctypes.CFUNCTYPE(ctypes.c_int32, *ctypes_signature(sig))
        self._cfunc = prototype(address)

    def __call__(self, *args: Any) -> None:
        values = self._binder.bind(args)
        message = None
        if self.signature.reports:  # a buffer for the message of an assert with values
            message = ctypes.create_string_buffer(MESSAGE_SIZE)
            values += [message, MESSAGE_SIZE]
        status = self._cfunc(*values)
        if status:
            raise self._failure(status, message)

    def _failure(self, status: int, message: Any = None) -> TVMLiteError:
        errors = self.signature.errors
        if 0 < status <= len(errors):
            text = message.value.decode(errors="replace") if message and message.value else ""
            return TVMLiteError(f"{self.name}: assertion failed: {text or errors[status - 1]}")
        if status == STATUS_OUT_OF_MEMORY:
            return TVMLiteError(f"{self.name}: out of memory allocating a scratch buffer")
        return TVMLiteError(f"{self.name}: kernel failed with status {status}")

    def __repr__(self) -> str:
        params = ", ".join(p.name for p in self.signature.params)
        return f"<PrimFuncKernel {self.name}({params})>"

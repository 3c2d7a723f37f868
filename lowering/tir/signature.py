"""The calling convention of a lowered PrimFunc (`runtime/abi.KernelSignature`,
which the runtime reads to call it), worked out from the function.

A kernel takes, in order: one pointer per handle parameter (the buffer's data),
the scalar parameters in their own dtype, then one int64 per symbolic var that
the parameter buffers declare (shape dims, strides, element offsets) and that is
not itself a parameter. A kernel with an assert that reports values (a message
part that is an expression, as in checked builds) takes two more: a char buffer
and its size, into which the failing assert writes its message with the values
filled in. It returns int32: 0, or the 1-based number of the assert that failed
(see `KernelSignature.errors`).
"""

from __future__ import annotations

from collections.abc import Sequence

from tvmlite.dsl import tir
from tvmlite.dsl.tir_functor import StmtExprVisitor
from tvmlite.runtime.abi import KernelSignature, Param, buffer_vars


class _Collect(StmtExprVisitor):
    """Records stored-to data vars and asserts."""

    def __init__(self) -> None:
        self.stored: set[tir.Var] = set()
        self.asserts: list[str] = []
        self.reports = False

    def visit_buffer(self, buffer: tir.Buffer) -> None:
        pass  # its shape and strides hold no stores or asserts

    def visit_BufferStore(self, s: tir.BufferStore) -> None:
        self.stored.add(s.buffer.data)
        super().visit_BufferStore(s)

    def visit_AssertStmt(self, s: tir.AssertStmt) -> None:
        self.asserts.append(assert_message(s))
        self.reports = self.reports or any(not isinstance(p, str) for p in s.message)
        super().visit_AssertStmt(s)

    def visit_Call(self, e: tir.Call) -> None:
        if e.op == "address_of" and isinstance(e.args[0], tir.BufferLoad):
            self.stored.add(e.args[0].buffer.data)
        super().visit_Call(e)


def assert_message(s: tir.AssertStmt, values: Sequence[str] | None = None) -> str:
    """The text of a failed `s`: its parts with `values` in place of the expression
    parts, or `?` where the values are not known."""
    filled = iter(values or ())
    text = "".join(p if isinstance(p, str) else next(filled, "?") for p in s.message)
    kind = s.error_kind or "RuntimeError"
    return f"{kind}: {text}" if kind != "RuntimeError" else text


def _param_name(var: tir.Var, buffer: tir.Buffer | None) -> str:
    """The name the user wrote: `A` for `A: T.Buffer(...)` (whose handle var the
    parser calls `A_handle`), the handle's own name for `a: T.handle`."""
    if buffer is not None and var.name == f"{buffer.name}_handle":
        return buffer.name
    return var.name


def _unique(names: list[str]) -> list[str]:
    """Distinct names, as the printer makes them: a repeated `B` becomes `B_1`, `B_2`.
    Params may share a name hint; the runtime names (and `written` holds) these."""
    taken: set[str] = set()
    out = []
    for base in names:
        name, k = base, 0
        while name in taken:
            k += 1
            name = f"{base}_{k}"
        taken.add(name)
        out.append(name)
    return out


def kernel_signature(func: tir.PrimFunc, name: str, lowered: tir.Stmt) -> KernelSignature:
    """The signature of `func`, whose body lowered to `lowered` (asserts are
    numbered in `lowered`'s order, which codegen follows)."""
    buffers = dict(func.buffer_map)
    names = _unique([_param_name(v, buffers.get(v)) for v in func.params])
    params = tuple(
        Param(name, v, buffers.get(v)) for name, v in zip(names, func.params, strict=True)
    )
    param_vars = set(func.params)
    sym: dict[tir.Var, None] = {}
    for p in params:
        if p.buffer is not None:
            for var in buffer_vars(p.buffer):
                if var not in param_vars:
                    sym.setdefault(var)
    body = _Collect()
    body.visit_stmt(lowered)
    written = frozenset(
        p.name for p in params if p.buffer is not None and p.buffer.data in body.stored
    )
    noalias = any(_flag(func.attr(key, False)) for key in ("tir.noalias", "tirx.noalias"))
    errors = tuple(body.asserts)
    return KernelSignature(name, params, tuple(sym), written, noalias, errors, body.reports)


def _flag(value: object) -> bool:
    """An attribute flag: a Python bool, or a typed one (`T.bool(True)`, which 0.27
    keeps an immediate)."""
    return value.value != 0 if isinstance(value, tir.IntImm) else bool(value)

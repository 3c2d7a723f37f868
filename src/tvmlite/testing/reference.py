"""A reference evaluator of TIR: runs a `PrimFunc` on NumPy arrays, slowly and
literally, to check what the compiled kernels compute.

    run_prim_func(func, a, b, out)      # like compile_prim_funcs(...)["main"](a, b, out)

It walks the IR as written (blocks, iter vars, `T.init`, `T.where`, match_buffer
views, allocations, every loop kind run serially) without lowering it, so it
shares no code, and no bugs, with `tvmlite.lowering`. Memory is a flat NumPy
array per data var, addressed through each buffer's strides and element offset,
so strided parameters and views alias exactly as they do in compiled code.
Scalar semantics live in `reference_ops`. What TIR leaves undefined (an access
out of a buffer's shape, a read of storage nobody wrote, a float cast to an int
it does not fit) raises `UndefinedBehavior` instead of guessing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import dtype as dt
from tvmlite.dsl import tir
from tvmlite.lowering.tir.signature import assert_message
from tvmlite.testing import reference_ops as ops
from tvmlite.testing.reference_ops import UndefinedBehavior, Value

__all__ = ["Interpreter", "UndefinedBehavior", "run_prim_func"]


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


class _Return(Exception):
    def __init__(self, value: Value) -> None:
        super().__init__()
        self.value = value


@dataclass
class Storage:
    """The memory behind one data var: a flat array, and which elements were
    written (None: all of them, as for arguments)."""

    flat: np.ndarray
    written: np.ndarray | None = None


@dataclass(frozen=True)
class Layout:
    """Where a buffer's elements are: `storage[offset + sum(i * stride)]`."""

    storage: Storage
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int


def run_prim_func(func: tir.PrimFunc, *args: Any) -> Value:
    """Run `func` on `args` (arrays for buffer params, scalars for the others),
    writing outputs into the arrays; returns what `T.ret` returned, else None."""
    return Interpreter(func).run(*args)


class Interpreter:
    """Evaluates one PrimFunc. `overflows` lists the signed add/sub/mul that
    wrapped (LLVM `nsw` poison, see `reference_ops.OverflowHook`); `max_steps`
    bounds the statements run, so a runaway loop fails instead of hanging."""

    def __init__(self, func: tir.PrimFunc, *, max_steps: int = 10_000_000) -> None:
        self.func = func
        self.max_steps = max_steps
        self.steps = 0
        self.overflows: list[str] = []
        self.env: dict[tir.Var, Value] = {}
        self.storage: dict[tir.Var, Storage] = {}
        self.views: dict[tir.Buffer, Layout] = {}
        # Per run, not per module: shapes of static buffers and values of literals.
        self._static: dict[tir.Buffer, tuple[tuple[int, ...], tuple[int, ...], int]] = {}
        self._literals: dict[tir.PrimExpr, Value] = {}
        self._expr: dict[type, Callable[[Any], Value]] = {}
        self._stmt: dict[type, Callable[[Any], None]] = {}
        for name in dir(self):
            if name.startswith("visit_"):
                cls = getattr(tir, name[len("visit_") :])
                table = self._expr if issubclass(cls, tir.PrimExpr) else self._stmt
                table[cls] = getattr(self, name)

    # ------------------------------------------------------------ entry

    def run(self, *args: Any) -> Value:
        params = self.func.params
        if len(args) != len(params):
            raise TypeError(f"expected {len(params)} arguments, got {len(args)}")
        buffers = dict(self.func.buffer_map)
        for var, arg in zip(params, args, strict=True):
            if var.dtype == "handle":
                self._bind_array(var, buffers.get(var), arg)
            else:
                self.env[var] = self._scalar_arg(var, arg)
        for var, buffer in self.func.buffer_map:
            self._check_shape(buffer, args[params.index(var)])
        try:
            self.stmt(self.func.body)
        except _Return as ret:
            return ret.value
        return None

    def _scalar_arg(self, var: tir.Var, arg: Any) -> Value:
        value = arg.item() if isinstance(arg, np.generic | np.ndarray) else arg
        if dt.is_integer_like(var.dtype):
            low, high = ops.int_range(var.dtype)
            if not low <= int(value) <= high:
                raise ValueError(f"{value} does not fit parameter '{var.name}' ({var.dtype})")
        return ops.make(value, var.dtype)

    def _bind_array(self, var: tir.Var, buffer: tir.Buffer | None, arr: np.ndarray) -> None:
        """Bind the array's memory to the buffer's data var, and the symbolic vars
        its shape and strides declare (bare vars only, as TVM's binder does)."""
        if not isinstance(arr, np.ndarray):
            raise TypeError(f"parameter '{var.name}' expects an array")
        storage = Storage(_flat_memory(arr))
        self.storage[var] = storage
        if buffer is None:
            return
        if arr.dtype != np.dtype(buffer.dtype):
            raise TypeError(f"parameter '{buffer.name}' expects {buffer.dtype}, got {arr.dtype}")
        self.storage[buffer.data] = storage
        for dim, size in zip(buffer.shape, arr.shape, strict=True):
            if isinstance(dim, tir.Var) and dim not in self.env:
                self.env[dim] = ops.make(size, dim.dtype)
        for stride, step in zip(buffer.strides, arr.strides, strict=False):
            if isinstance(stride, tir.Var) and stride not in self.env:
                self.env[stride] = ops.make(step // arr.itemsize, stride.dtype)
        if isinstance(buffer.elem_offset, tir.Var) and buffer.elem_offset not in self.env:
            self.env[buffer.elem_offset] = ops.make(0, buffer.elem_offset.dtype)

    def _check_shape(self, buffer: tir.Buffer, arr: np.ndarray) -> None:
        layout = self.layout(buffer)
        if layout.shape != arr.shape:
            raise ValueError(f"'{buffer.name}' has shape {layout.shape}, got {arr.shape}")
        for k, (stride, step) in enumerate(zip(layout.strides, arr.strides, strict=True)):
            if arr.shape[k] > 1 and stride * arr.itemsize != step:
                got = tuple(s // arr.itemsize for s in arr.strides)
                raise ValueError(f"'{buffer.name}' has strides {layout.strides}, got {got}")

    # ------------------------------------------------------------ memory

    def layout(self, buffer: tir.Buffer) -> Layout:
        """The buffer's shape, strides and offset, evaluated now."""
        view = self.views.get(buffer)
        if view is not None:
            return view
        storage = self.storage.get(buffer.data)
        if storage is None:
            raise TVMLiteError(f"buffer '{buffer.name}' has no storage here")
        static = self._static.get(buffer)
        if static is not None:
            return Layout(storage, *static)
        shape = tuple(self.index_value(d) for d in buffer.shape)
        if buffer.strides:
            strides = tuple(self.index_value(s) for s in buffer.strides)
        else:
            strides = ops.row_major(shape)
        offset = 0 if buffer.elem_offset is None else self.index_value(buffer.elem_offset)
        parts = (*buffer.shape, *buffer.strides, buffer.elem_offset)
        if all(p is None or isinstance(p, tir.IntImm) for p in parts):
            self._static[buffer] = (shape, strides, offset)
        return Layout(storage, shape, strides, offset)

    def index_value(self, e: tir.PrimExpr) -> int:
        value = self.expr(e)
        if isinstance(value, tuple) or not dt.is_integer_like(e.dtype):
            raise TVMLiteError(f"expected a scalar integer, got {e.dtype}")
        return int(value)

    def addresses(self, buffer: tir.Buffer, indices: tuple[tir.PrimExpr, ...]) -> list[int]:
        """Flat element numbers of an access: one, or one per lane of a vector index."""
        layout = self.layout(buffer)
        if len(indices) != len(layout.shape):
            raise TVMLiteError(f"'{buffer.name}' has {len(layout.shape)} dims")
        values = [self.expr(i) for i in indices]
        lanes = max((len(v) for v in values if isinstance(v, tuple)), default=0)
        if not lanes:
            rows = [[int(v) for v in values]]
        else:
            rows = [
                [int(v[lane]) if isinstance(v, tuple) else int(v) for v in values]
                for lane in range(lanes)
            ]
        out = []
        for row in rows:
            for i, extent in zip(row, layout.shape, strict=True):
                if not 0 <= i < extent:
                    raise UndefinedBehavior(f"{buffer.name}{tuple(row)} is outside {layout.shape}")
            flat = layout.offset + sum(i * s for i, s in zip(row, layout.strides, strict=True))
            if not 0 <= flat < layout.storage.flat.size:
                raise UndefinedBehavior(f"{buffer.name}{tuple(row)} is outside its memory")
            out.append(flat)
        return out

    def allocate(self, buffer: tir.Buffer) -> None:
        """Fresh storage for `buffer`; nothing in it counts as written yet."""
        if dt.lanes(buffer.dtype) != 1:
            raise NotImplementedError(f"vector-typed buffer '{buffer.name}'")
        shape = tuple(self.index_value(d) for d in buffer.shape)
        offset = 0 if buffer.elem_offset is None else self.index_value(buffer.elem_offset)
        size = offset + int(np.prod(shape, dtype=np.int64))
        flat = np.zeros(max(size, 0), dtype=np.dtype(buffer.dtype))
        self.storage[buffer.data] = Storage(flat, np.zeros(flat.shape, dtype=bool))

    # ------------------------------------------------------------ expressions

    def expr(self, e: tir.PrimExpr) -> Value:
        return self._expr[type(e)](e)

    def visit_Var(self, e: tir.Var) -> Value:
        if e not in self.env:
            raise TVMLiteError(f"variable '{e.name}' is not defined here")
        return self.env[e]

    def visit_IntImm(self, e: tir.IntImm) -> Value:
        value = self._literals.get(e)
        if value is None:
            value = self._literals[e] = ops.make(e.value, e.dtype)
        return value

    def visit_FloatImm(self, e: tir.FloatImm) -> Value:
        value = self._literals.get(e)
        if value is None:
            value = self._literals[e] = ops.make(e.value, e.dtype)
        return value

    def visit_StringImm(self, e: tir.StringImm) -> Value:
        raise NotImplementedError("strings have no value in the reference evaluator")

    def visit_Cast(self, e: tir.Cast) -> Value:
        target = dt.element_of(e.dtype)
        return ops.lanewise(lambda v: ops.cast(v, target), self.expr(e.value))

    def visit_BinaryOp(self, e: tir.BinaryOp) -> Value:
        operand, result = dt.element_of(e.a.dtype), dt.element_of(e.dtype)

        def apply(a: Any, b: Any) -> Any:
            return ops.binary(e.kind, a, b, operand, result, self.overflows.append)

        return ops.lanewise(apply, self.expr(e.a), self.expr(e.b))

    def visit_Not(self, e: tir.Not) -> Value:
        return ops.lanewise(lambda v: np.bool_(not v), self.expr(e.a))

    def visit_Select(self, e: tir.Select) -> Value:
        cond = self.expr(e.condition)  # TVM evaluates both branches
        yes, no = self.expr(e.true_value), self.expr(e.false_value)
        return ops.lanewise(lambda c, a, b: a if c else b, cond, yes, no)

    def visit_Ramp(self, e: tir.Ramp) -> Value:
        base, stride = int(self.expr(e.base)), int(self.expr(e.stride))
        elem = dt.element_of(e.dtype)
        return tuple(ops.make(base + k * stride, elem) for k in range(e.lanes))

    def visit_Broadcast(self, e: tir.Broadcast) -> Value:
        return (self.expr(e.value),) * e.lanes

    def visit_Let(self, e: tir.Let) -> Value:
        with _Binding(self.env, e.var, self.expr(e.value)):
            return self.expr(e.body)

    def visit_BufferLoad(self, e: tir.BufferLoad) -> Value:
        storage = self.layout(e.buffer).storage
        values = []
        for flat in self.addresses(e.buffer, e.indices):
            if storage.written is not None and not storage.written[flat]:
                raise UndefinedBehavior(f"read of '{e.buffer.name}' before any write")
            values.append(storage.flat[flat][()])
        return values[0] if dt.lanes(e.dtype) == 1 else tuple(values)

    def visit_Call(self, e: tir.Call) -> Value:
        op, elem = e.op, dt.element_of(e.dtype)
        if op == "if_then_else":  # lazy: only the chosen side runs
            cond = self.expr(e.args[0])
            if isinstance(cond, tuple):
                yes, no = self.expr(e.args[1]), self.expr(e.args[2])
                return ops.lanewise(lambda c, a, b: a if c else b, cond, yes, no)
            return self.expr(e.args[1] if cond else e.args[2])
        if op == "likely":
            return self.expr(e.args[0])
        if op == "assume":
            return np.bool_(True)
        args = [self.expr(a) for a in e.args]
        if op in ("isnan", "isinf", "isfinite"):
            return ops.lanewise(lambda x: ops.classify(op, x), *args)
        if op == "reinterpret":
            return ops.lanewise(lambda x: ops.reinterpret(x, elem), args[-1])
        if dt.is_float(elem) and op in ops.FLOAT_INTRINSICS:
            return ops.lanewise(lambda *xs: ops.float_intrinsic(op, list(xs), elem), *args)
        if dt.is_integer_like(elem) and op in ops.INT_INTRINSICS:
            return ops.lanewise(lambda *xs: ops.int_intrinsic(op, list(xs), elem), *args)
        raise NotImplementedError(f"T.{op} on {e.dtype} in the reference evaluator")

    # ------------------------------------------------------------ statements

    def stmt(self, s: tir.Stmt) -> None:
        self.steps += 1
        if self.steps > self.max_steps:
            raise RuntimeError(f"more than {self.max_steps} statements run: a runaway loop?")
        self._stmt[type(s)](s)

    def visit_SeqStmt(self, s: tir.SeqStmt) -> None:
        bound: list[tir.Var] = []
        try:
            for item in s.seq:
                self.stmt(item)
                if isinstance(item, tir.Bind):
                    bound.append(item.var)
        finally:
            for var in bound:
                self.env.pop(var, None)

    def visit_BufferStore(self, s: tir.BufferStore) -> None:
        storage = self.layout(s.buffer).storage
        value = self.expr(s.value)
        for lane, flat in enumerate(self.addresses(s.buffer, s.indices)):
            storage.flat[flat] = value[lane] if isinstance(value, tuple) else value
            if storage.written is not None:
                storage.written[flat] = True

    def visit_LetStmt(self, s: tir.LetStmt) -> None:
        with _Binding(self.env, s.var, self.expr(s.value)):
            self.stmt(s.body)

    def visit_Bind(self, s: tir.Bind) -> None:
        self.env[s.var] = self.expr(s.value)  # until the enclosing sequence ends

    def visit_AttrStmt(self, s: tir.AttrStmt) -> None:
        if s.body is not None:
            self.stmt(s.body)

    def visit_AssertStmt(self, s: tir.AssertStmt) -> None:
        if not self.expr(s.condition):
            values = [str(self.expr(p)) for p in s.message if not isinstance(p, str)]
            raise TVMLiteError(f"assertion failed: {assert_message(s, values)}")

    def visit_For(self, s: tir.For) -> None:
        """Every kind runs serially, in order: `parallel` and `vectorized` promise
        that the order does not matter, so the serial order is a valid one."""
        var = s.loop_var
        start = int(ops.cast(self.expr(s.min), var.dtype))
        end = ops.wrap(start + int(ops.cast(self.expr(s.extent), var.dtype)), var.dtype)
        step = 1 if s.step is None else int(self.expr(s.step))
        if step <= 0:
            raise UndefinedBehavior(f"loop over '{var.name}' with step {step}")
        for i in range(start, end, step):
            try:
                with _Binding(self.env, var, ops.make(i, var.dtype)):
                    self.stmt(s.body)
            except _Continue:
                continue
            except _Break:
                break

    def visit_While(self, s: tir.While) -> None:
        while self.expr(s.condition):
            self.steps += 1
            try:
                self.stmt(s.body)
            except _Continue:
                continue
            except _Break:
                break

    def visit_Break(self, s: tir.Break) -> None:
        raise _Break

    def visit_Continue(self, s: tir.Continue) -> None:
        raise _Continue

    def visit_IfThenElse(self, s: tir.IfThenElse) -> None:
        if self.expr(s.condition):
            self.stmt(s.then_case)
        elif s.else_case is not None:
            self.stmt(s.else_case)

    def visit_Evaluate(self, s: tir.Evaluate) -> None:
        value = s.value
        if isinstance(value, tir.Call) and value.op == "ret":
            raise _Return(self.expr(value.args[0]))
        if not isinstance(value, tir.IntImm | tir.FloatImm):
            self.expr(value)

    def visit_Return(self, s: tir.Return) -> None:
        raise _Return(self.expr(s.value))

    def visit_AllocBuffer(self, s: tir.AllocBuffer) -> None:
        if s.form == "decl_buffer" and s.buffer.data in self.storage:
            return  # a view of storage that exists: accesses go through its layout
        self.allocate(s.buffer)

    def visit_BlockRealize(self, s: tir.BlockRealize) -> None:
        block = s.block
        saved = dict(self.env)
        try:
            for iv, value in zip(block.iter_vars, s.iter_values, strict=True):
                self.env[iv.var] = ops.cast(self.expr(value), iv.var.dtype)
            if not self.expr(s.predicate):
                return
            self._check_domains(block)
            for match in block.match_buffers:
                self._match(match)
            for buffer in block.alloc_buffers:
                self.allocate(buffer)
            if block.init is not None and self._at_reduction_start(block):
                self.stmt(block.init)
            self.stmt(block.body)
        finally:
            self.env = saved

    def visit_Block(self, s: tir.Block) -> None:
        raise TVMLiteError(f"block '{s.name}' is not inside a BlockRealize")

    def _check_domains(self, block: tir.Block) -> None:
        for iv in block.iter_vars:
            low = int(self.expr(iv.dom.min))
            value = int(self.env[iv.var])
            if not low <= value < low + int(self.expr(iv.dom.extent)):
                raise UndefinedBehavior(f"block '{block.name}': {iv.var.name} = {value}")

    def _at_reduction_start(self, block: tir.Block) -> bool:
        """TVM runs `T.init()` when every reduction iter var is at its domain's start."""
        return all(
            int(self.env[iv.var]) == int(self.expr(iv.dom.min))
            for iv in block.iter_vars
            if iv.kind == tir.REDUCE
        )

    def _match(self, match: tir.MatchBufferRegion) -> None:
        """`match.buffer` becomes a view of the source region: the region's trailing
        dims, the source's strides, offset at the region's start. Symbolic vars in
        the view's declaration are bound to what they matched."""
        view, source = match.buffer, match.source
        src = self.layout(source.buffer)
        mins = [self.index_value(r.min) for r in source.region]
        extents = [self.index_value(r.extent) for r in source.region]
        rank = len(view.shape)
        if rank > len(extents):
            raise TVMLiteError(f"match_buffer '{view.name}' has more dims than its region")
        offset = src.offset + sum(m * st for m, st in zip(mins, src.strides, strict=True))
        layout = Layout(
            src.storage,
            tuple(extents[len(extents) - rank :]),
            src.strides[len(extents) - rank :],
            offset,
        )
        declared = [
            *zip(view.shape, layout.shape, strict=True),
            *zip(view.strides, layout.strides, strict=False),
        ]
        if view.elem_offset is not None:
            declared.append((view.elem_offset, layout.offset))
        for expr, actual in declared:
            if isinstance(expr, tir.Var) and expr not in self.env:
                self.env[expr] = ops.make(actual, expr.dtype)
            elif self.index_value(expr) != actual:
                raise TVMLiteError(f"match_buffer '{view.name}': {expr} is not {actual}")
        self.views[view] = layout


class _Binding:
    """Binds a var for a `with` block and restores what it shadowed."""

    def __init__(self, env: dict[tir.Var, Value], var: tir.Var, value: Value) -> None:
        self.env, self.var, self.value = env, var, value

    def __enter__(self) -> None:
        self.old = self.env.get(self.var, _UNBOUND)
        self.env[self.var] = self.value

    def __exit__(self, *exc: object) -> None:
        if self.old is _UNBOUND:
            self.env.pop(self.var, None)
        else:
            self.env[self.var] = self.old


_UNBOUND = object()


def _flat_memory(arr: np.ndarray) -> np.ndarray:
    """A writable 1-D view of every element `arr` can reach through its strides
    (so overlapping strided views alias, as they do in compiled code)."""
    if arr.size == 0:
        return arr.reshape(-1)
    if any(s < 0 or s % arr.itemsize for s in arr.strides):
        raise ValueError("negative or unaligned strides are not supported")
    span = 1 + sum((n - 1) * s for n, s in zip(arr.shape, arr.strides, strict=True)) // arr.itemsize
    return np.lib.stride_tricks.as_strided(arr, shape=(span,), strides=(arr.itemsize,))

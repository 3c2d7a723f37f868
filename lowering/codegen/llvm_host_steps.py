"""Kernel calls whose shapes are all known when the code is generated, and
checks of tensors against a static type, run as data: each is a *step* (a
kernel, where its inputs are, the slots and shapes of its outputs, the slots
it frees after; or a tensor and the type it must have), and a run of
consecutive steps is one call of the support helper `tvmlite.run_steps`
(`llvm_host_runner.py`) over a constant array of them.

Models are mostly such calls (every operator of a static-shape graph becomes
one `R.call_tir`), and as code each costs allocation, a kernel call, a status
check and releases: about a dozen instructions and a few basic blocks, which
every stage of the build (llvmlite, printing, LLVM's parser, instruction
selection, register allocation) pays for again. As data it costs one constant
record, so the host code of a graph function grows with what cannot be known
before run time (symbolic shapes, checks of values returned by callees,
control flow), not with its number of operators or parameters (a model's
weights: each is checked by the same helpers, `tvmlite_check_tensor` and
`tvmlite_check_shape`, as code would call). All checks a kernel step needs are
made here, by the code generator: its inputs have the dtypes and shapes its
kernel's buffers expect, or the binding is compiled as code (`llvm_host_calls`),
which checks at run time or reports the mismatch.

An input is a tensor the helper can find without code: a parameter (`Arg`), a
frame slot (`Slot`), a constant's DLTensor, or a spill word holding the
DLTensor* of any other value (stored there before the run). An output is a
fresh block in a new slot, or a header over the bytes the memory plan gave it
in the arena (slot ARENA_SLOT, allocated by a step without kernel first); its
value is a `Slot` reference that later code loads where it uses it, after the
run (`load_ref` flushes pending steps first). Steps are flushed before every
binding that is not one, so effects and errors keep program order.

A kernel is called through a trampoline `i32 K.argv(ptr* argv, char* message,
i64 size)` that passes the data pointers to it (and the buffer for the message
of an assert that reports values, to a kernel that takes one): one small
function per kernel, not per call.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from llvmlite import ir

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import relax, tir
from tvmlite.dsl.call_tir import CallTIR
from tvmlite.lowering.codegen import llvm_host_abi as abi
from tvmlite.lowering.codegen import llvm_types as ty
from tvmlite.lowering.codegen.llvm_host_values import (
    Arg,
    Home,
    Slot,
    TensorVal,
    Val,
    known_dims,
    rebuild,
)
from tvmlite.lowering.codegen.memory_plan import ARENA_SLOT
from tvmlite.runtime.abi import leaves

if TYPE_CHECKING:
    from tvmlite.lowering.codegen.llvm_host_calls import Kernel
    from tvmlite.lowering.codegen.llvm_host_chunks import Chunks
    from tvmlite.lowering.codegen.llvm_host_frame import Frame
    from tvmlite.lowering.codegen.llvm_host_state import HostFunction

I32, I64, PTR = abi.I32, abi.I64, abi.PTR

RUN_STEPS = "tvmlite.run_steps"  # dotted: no kernel symbol can take it
# Where an input tensor is: `index` of the frame, the arguments or the spill
# array, or the DLTensor at `tensor`.
FROM_SLOT, FROM_ARG, FROM_WORD, FROM_TENSOR = range(4)
SOURCE = ir.LiteralStructType([I64, I64, PTR])  # kind, index, tensor
# slot, dims, what, ndim, dtype, and where the memory plan put it in the arena:
# the byte offsets of its data and its header (-1, -1: a fresh block).
OUTPUT = ir.LiteralStructType([I64, PTR, PTR, I32, I32, I64, I64])
# kernel trampoline, error table, "where" text, #errors, #inputs, #outputs, #releases,
# check: 0 for a kernel call, else the status of a failed check of each input
# against the output record of the same index (its dims NULL: device, rank,
# dtype, layout; else the shape). Consecutive checks of one kind share a step.
STEP = ir.LiteralStructType([PTR, PTR, PTR, I32, I32, I32, I32, I32])
# steps, #steps, sources, outputs, released slots, max #inputs + #outputs, and the
# prefix of its messages ("main: "), put in front of one only when a step fails:
# the texts in the records are then shared by every function of a module.
RUN = ir.LiteralStructType([PTR, I64, PTR, PTR, PTR, I64, PTR])
# i32 run_steps(frame, DLTensor* const* args, spill, const RUN* run, char* err, i64 err_len)
RUN_STEPS_TYPE = ir.FunctionType(I32, [PTR, PTR, PTR, PTR, PTR, I64])
ARGV_TYPE = ir.FunctionType(I32, [PTR, PTR, I64])


Row = tuple  # a record's fields as ints, globals, or None (NULL): see `table`


@dataclass
class Step:
    """A kernel call (or a check, without kernel) waiting for the next run."""

    kernel: Kernel | None
    sources: list[Row]
    outputs: list[Row]
    check: int = 0  # a check's failure status (0: a kernel call)
    shapes: bool = False  # a check of shapes, else of headers
    releases: list[int] = field(default_factory=list)


class Steps:
    """The pending steps of the function being emitted (`f`), written as a run
    into the chunk being written (`chunks`) when code must follow them; the
    arena of the memory plan is allocated by one (or by `frame` when steps are off)."""

    def __init__(self, f: HostFunction, chunks: Chunks, frame: Frame) -> None:
        self.f = f
        self.chunks = chunks
        self.frame = frame
        self.pending: list[Step] = []
        self.runs = 0

    def add_step(self, bd: relax.Binding) -> bool:
        """Make `bd` a step if it is a kernel call of known shapes whose inputs
        fit its kernel (else the caller compiles it as code)."""
        plan = self._plan(bd)
        if plan is None:
            return False
        kernel, ins, out_sinfo = plan
        sources = [self.source(t) for t in ins]
        outputs: list[Row] = []
        vals: list[Val] = []
        offsets = self.f.plan.offsets.get(bd.var, ())
        for k, leaf in enumerate(leaves(out_sinfo, "output")):
            sinfo = leaf.sinfo
            dims = known_dims(sinfo)
            assert isinstance(sinfo, relax.TensorStructInfo) and dims is not None
            what = f"cannot allocate {leaf.label} of {kernel.sig.name}"
            shape = abi.int64_constant(self.f.module, dims)
            dtype = abi.packed_dtype(sinfo.dtype)
            place = (-1, -1)
            if offsets and offsets[k] is not None:
                place = (offsets[k], self.f.plan.headers[bd.var][k])
            text = abi.cstring(self.f.module, what)
            index = self.f.new_slot()
            outputs.append((index, shape, text, len(dims), dtype, *place))
            consts = tuple(ty.constant("int64", d) for d in dims)
            vals.append(TensorVal(Slot(index), sinfo.dtype, len(dims), consts))
        self.pending.append(Step(kernel, sources, outputs))
        self.f.values[bd.var] = rebuild(out_sinfo, vals)
        return True

    def open_arena(self) -> None:
        """Allocate the arena of the memory plan, if it has one, in slot
        ARENA_SLOT: a step without kernel (code when steps are off)."""
        if not self.f.plan.arena_bytes:
            return
        assert self.f.slots == ARENA_SLOT, "the arena is the first slot"
        what = "the intermediates"
        if not self.f.use_steps:
            total = ty.constant("int64", self.f.plan.arena_bytes)
            self.frame.allocate("uint8", [total], what)
            return
        shape = abi.int64_constant(self.f.module, [self.f.plan.arena_bytes])
        text = abi.cstring(self.f.module, f"cannot allocate {what}")
        record = (self.f.new_slot(), shape, text, 1, abi.packed_dtype("uint8"), -1, -1)
        self.pending.append(Step(None, [], [record]))

    def add_check(self, t: TensorVal, dims: list[int] | None, what: str, status: int) -> None:
        """Check `t` against its own dtype and ndim (`dims` None), or against
        `dims`, failing with `status`."""
        shape = None if dims is None else abi.int64_constant(self.f.module, dims)
        dtype = abi.packed_dtype(t.dtype) if t.dtype != "void" else -1
        expected = (0, shape, abi.cstring(self.f.module, what), t.ndim, dtype, -1, -1)
        last = self.pending[-1] if self.pending else None
        shapes = dims is not None
        if last is None or (last.check, last.shapes) != (status, shapes) or last.releases:
            last = Step(None, [], [], check=status, shapes=shapes)
            self.pending.append(last)
        last.sources.append(self.source(t))
        last.outputs.append(expected)

    def defer_release(self, slot: int) -> bool:
        """Free `slot` after the last pending step, if there is one."""
        if not self.pending:
            return False
        self.pending[-1].releases.append(slot)
        return True

    def flush(self) -> None:
        """Write the pending steps as one run and call it here."""
        run = self.write_run()
        if run is not None:
            f = self.f
            args = [f.frame, f.args_ptr, f.spill, run, f.err, f.err_len]
            self.chunks.propagate(f.b.call(f.module.globals[RUN_STEPS], args))

    def write_run(self) -> ir.GlobalVariable | None:
        """The pending steps as a constant RUN (None when there are none)."""
        if not self.pending:
            return None
        pending, self.pending = self.pending, []
        steps: list[Row] = []
        sources: list[Row] = []
        outputs: list[Row] = []
        releases: list[Row] = []
        widest = 1
        for step in pending:
            fields: Row = (None, None, None, 0)
            if step.kernel is not None:
                sig = step.kernel.sig
                where = abi.cstring(self.f.module, f"R.call_tir of '{sig.name}'")
                entry = trampoline(self.f.module, step.kernel)
                fields = (entry, step.kernel.errors, where, len(sig.errors))
            counts = (len(step.sources), len(step.outputs), len(step.releases), step.check)
            steps.append(fields + counts)
            sources += step.sources
            outputs += step.outputs
            releases += [(s,) for s in step.releases]
            widest = max(widest, len(step.sources) + len(step.outputs))
        name = f"{self.f.ctx.entries[self.f.name].name}.run{self.runs}"
        self.runs += 1
        row = (
            table(self.f.module, f"{name}.steps", STEP, steps),
            len(steps),
            table(self.f.module, f"{name}.sources", SOURCE, sources),
            table(self.f.module, f"{name}.outputs", OUTPUT, outputs),
            table(self.f.module, f"{name}.releases", I64, releases),
            widest,
            abi.cstring(self.f.module, self.f.prefix),
        )
        return table(self.f.module, name, RUN, [row])

    def _plan(self, bd: relax.Binding) -> tuple[Kernel, list[TensorVal], relax.StructInfo] | None:
        """(kernel, inputs, output struct info) when `bd` can be a step."""
        view = CallTIR.of(bd.value) if isinstance(bd, relax.VarBinding) else None
        if view is None or view.tir_vars is not None:
            return None
        kernel = self.f.ctx.kernels.get(view.callee.name)
        if kernel is None or kernel.sig.sym_vars:
            return None
        ins: list[TensorVal] = []
        for a in view.args:
            val = self.f.values.get(a) if isinstance(a, relax.Var) else None
            if isinstance(a, relax.Constant):
                val = self.f.constant(a)
            if not isinstance(val, TensorVal) or _static_dims(val) is None:
                return None
            ins.append(val)
        try:
            out_leaves = leaves(view.out_sinfo, "output")
        except TVMLiteError:
            return None  # the code path reports it
        shapes: list[tuple[str, list[int] | None]] = [(t.dtype, _static_dims(t)) for t in ins]
        for leaf in out_leaves:
            dims = known_dims(leaf.sinfo)
            if dims is None:
                return None
            shapes.append((leaf.sinfo.dtype, dims))
        params = kernel.sig.params
        if len(params) != len(shapes):
            return None
        for p, (dtype, dims) in zip(params, shapes, strict=True):
            if not (p.is_pointer and p.buffer is not None and _fits(p.buffer, dtype, dims)):
                return None
        return kernel, ins, view.out_sinfo

    def source(self, t: TensorVal) -> Row:
        """Where the helper finds input `t` (homing an SSA value first)."""
        ptr = t.ptr
        if isinstance(ptr, ir.GlobalVariable):
            return (FROM_TENSOR, 0, ptr)
        if not isinstance(ptr, Slot | Arg | Home):
            ptr = self.chunks.home(ptr)
        kind = {Slot: FROM_SLOT, Arg: FROM_ARG, Home: FROM_WORD}[type(ptr)]
        return (kind, ptr.index, None)


def table(module: ir.Module, name: str, kind: ir.Type, rows: list[Row]) -> ir.Value:
    """A private constant array of `kind` records, one per row (one of zeros when
    there are none): a row's fields are ints, globals, or None for NULL. An
    equal table made before is shared (modules of many alike functions have the
    same records many times over)."""
    cache: dict[tuple, ir.Value] = module.__dict__.setdefault("_tvmlite_tables", {})
    key = (id(kind), tuple(rows))
    found = cache.get(key)
    if found is not None:
        return found
    items = [_record(kind, row) for row in rows] or [ir.Constant(kind, None)]
    array = ir.ArrayType(kind, len(items))
    found = abi.global_var(module, array, name)
    found.initializer = ir.Constant(array, items)
    found.global_constant = True
    found.linkage = "private"
    cache[key] = found
    return found


def _record(kind: ir.Type, row: Row) -> ir.Value:
    """A row as a constant of `kind` (a struct, or a scalar for a row of one)."""
    struct = isinstance(kind, ir.BaseStructType)
    fields = kind.elements if struct else (kind,)
    values = [
        v if isinstance(v, ir.Value) else ir.Constant(t, v)
        for t, v in zip(fields, row, strict=True)
    ]
    return ir.Constant(kind, values) if struct else values[0]


def _static_dims(t: TensorVal) -> list[int] | None:
    if t.ndim < 0 or t.dtype == "void" or t.dims is None:
        return None
    if not all(isinstance(d, ir.Constant) for d in t.dims):
        return None
    return [int(d.constant) for d in t.dims]  # type: ignore[union-attr]


def _fits(buf: tir.Buffer, dtype: str, dims: list[int] | None) -> bool:
    """The kernel's buffer takes a compact tensor of `dtype` and `dims` as it is."""
    if dims is None or buf.dtype != dtype or len(buf.shape) != len(dims) or buf.strides:
        return False
    offset = buf.elem_offset
    if offset is not None and not (isinstance(offset, tir.IntImm) and offset.value == 0):
        return False
    return all(
        isinstance(s, tir.IntImm) and s.value == d and d >= 0
        for s, d in zip(buf.shape, dims, strict=True)
    )


def trampoline(module: ir.Module, kernel: Kernel) -> ir.Function:
    """`i32 K.argv(ptr* argv, char* message, i64 size)`: kernel K on the data
    pointers in `argv` (made once per module and kernel)."""
    name = f"{kernel.fn.name}.argv"
    found = module.globals.get(name)
    if isinstance(found, ir.Function):
        return found
    fn = ir.Function(module, ARGV_TYPE, name)
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    argv, message, size = fn.args
    args = [
        b.load(b.gep(argv, [ty.constant("int64", k)], source_etype=PTR), typ=PTR)
        for k in range(len(kernel.sig.params))
    ]
    b.ret(b.call(kernel.fn, [*args, message, size] if kernel.sig.reports else args))
    return fn

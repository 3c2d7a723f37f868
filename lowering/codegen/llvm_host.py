"""A graph (Relax) function as native host code, built next to its kernels in
the same module: an entry with the ABI of docs/abi.md that runs the function's
code in chunks (`llvm_host_chunks.py`).

The code checks the arguments, binds symbolic dims, walks the bindings
(kernels, calls, tuples, `R.If`, `R.match_cast`, constants) and returns owned
DLManagedTensors. Kernel calls whose shapes are known are not code but steps,
data run by a support helper (`llvm_host_steps.py`). Every tensor it allocates
lives in a slot of the frame (`llvm_host_frame.py`); kernel outputs of static
shape that do not escape live in one arena per call, placed by the memory plan
(`memory_plan.py`: outputs whose lives do not overlap share bytes), their slots
holding headers inside it that own nothing; a slot is released after
the last top-level binding that can reach it, and the entry releases whatever
is left whichever way the function ends, so neither an error nor a return leaks.

Any other binding costs a few calls and branches: allocation, checks and error
messages live in support helpers, and a failure returns its status at once.
Host code is straight-line glue: its size, not its speed, is what matters.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from llvmlite import ir

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import relax, tir
from tvmlite.lowering.codegen import llvm_host_abi as abi
from tvmlite.lowering.codegen import llvm_host_frame as frames
from tvmlite.lowering.codegen import llvm_types as ty
from tvmlite.lowering.codegen.llvm_host_calls import NULL, KernelCalls
from tvmlite.lowering.codegen.llvm_host_check import Checks, literal
from tvmlite.lowering.codegen.llvm_host_chunks import Chunks
from tvmlite.lowering.codegen.llvm_host_flow import Flow
from tvmlite.lowering.codegen.llvm_host_invoke import Calls
from tvmlite.lowering.codegen.llvm_host_program import (
    RUN_PROGRAM,
    glue_entry,
    program_entry,
    write_program,
)
from tvmlite.lowering.codegen.llvm_host_state import HostFunction
from tvmlite.lowering.codegen.llvm_host_steps import Steps
from tvmlite.lowering.codegen.llvm_host_values import (
    Arg,
    PrimVal,
    ShapeVal,
    Slot,
    TensorVal,
    TupleVal,
    Val,
    known_dims,
    rebuild,
    val_leaves,
)
from tvmlite.lowering.codegen.memory_plan import (
    alias_roots,
    last_uses,
)
from tvmlite.runtime.abi import Leaf, leaves

if TYPE_CHECKING:
    from tvmlite.lowering.codegen.llvm_host_module import HostContext

I32, I64, PTR = abi.I32, abi.I64, abi.PTR
# A function of at most this many top-level bindings, in a module of at most
# SMALL_MODULE graph functions, is one optimized function of code: what it costs
# to build is small, and calls are cheapest (see docs/host-code.md, "The three forms").
SMALL_FUNCTION = 32


class HostEmitter:
    """Emits one graph function into its (already declared) entry function.

    The function being emitted is one state object (`f`, `llvm_host_state.py`);
    the work is done by parts that each receive it and only the parts they use:
    `chunks` (where code goes: the driver, chunk functions, exits), `frame`
    (slots and stack storage), `checks` (run-time checks and their messages),
    `steps` (kernel calls and checks as data), `kernels` (`R.call_tir` as
    code), `calls` (operators, graph and packed functions) and `flow` (`R.If`,
    nested sequences, `R.match_cast`). This class owns them and the stages:
    parameters, top-level bindings, the value of each expression, the return."""

    def __init__(
        self, ctx: HostContext, name: str, func: relax.Function, steps: bool = True
    ) -> None:
        self.f = HostFunction(ctx, name, func, steps)
        # Pending steps run before a chunk ends or a slot they fill is read; the
        # steps, made after, write their runs into the chunks.
        self.chunks = Chunks(self.f, flush=lambda: self.steps.flush())
        self.frame = frames.Frame(self.f, chunks=self.chunks)
        self.checks = Checks(self.f, chunks=self.chunks, frame=self.frame)
        self.steps = Steps(self.f, self.chunks, self.frame)
        self.kernels = KernelCalls(self.f, self.chunks, self.frame, self.checks, self.value)
        self.calls = Calls(self.f, self.chunks, self.frame, self.checks, self.kernels, self.value)
        self.flow = Flow(self.f, self.checks, self.value, bind=self.emit_binding)
        self._value: dict[type, Callable[[Any, relax.Var | None], Val]] = {
            relax.Var: self.visit_var,
            relax.DataflowVar: self.visit_var,
            relax.Constant: self.visit_constant,
            relax.Tuple: self.visit_tuple,
            relax.TupleGetItem: self.visit_get_item,
            relax.ShapeExpr: self.visit_shape,
            relax.PrimValue: self.visit_prim_value,
            relax.Call: self.calls.visit_call,
            relax.If: self.flow.visit_if,
            relax.SeqExpr: self.flow.visit_seq,
        }

    # ------------------------------------------------------------ function frame

    def emit(self) -> None:
        """The function as code, in chunks (one optimized function, its chunk
        inlined in the entry, when steps are off and it fits one)."""
        self.chunks.start(self.f.ctx.entries[self.f.name])
        flat = self.flat_params()
        self.check_counts(len(flat))
        self.steps.open_arena()
        self.bind_params(flat)
        result = self.emit_top(self.f.func.body)
        assert result is not None
        self.emit_return(result)
        self.chunks.finish(self.f.slots, optimize=not self.f.use_steps)

    def emit_program(self) -> bool:
        """The function as a program, if it is one (`llvm_host_program.py`);
        False, having emitted nothing, when it is not."""
        try:
            flat = self.flat_params()
            ret = leaves(self.f.func.ret_struct_info, "result")
        except TVMLiteError:
            return False  # the code path says why
        static = all(known_dims(leaf.sinfo) is not None for _, leaf in flat)
        if not static or not isinstance(self.f.func.body, relax.SeqExpr):
            return False
        self.steps.open_arena()
        self.bind_params(flat)  # only steps, the parameters being static
        body = self.emit_top(self.f.func.body, code=False)
        results = [] if body is None else val_leaves(body)
        if body is None or len(results) != len(ret):
            return False
        found = (Slot, Arg, ir.GlobalVariable)
        if not all(isinstance(v, TensorVal) and isinstance(v.ptr, found) for v in results):
            return False
        entry = self.f.ctx.entries[self.f.name]
        program = write_program(
            self.f.module,
            f"{entry.name}.program",
            (len(flat), len(ret)),
            self.count_texts(len(flat)),
            self.steps.write_run(),
            [self.steps.source(val) for val in results],  # type: ignore[arg-type]
            [f"out of memory copying {leaf.label}" for leaf in ret],
            self.f.slots,
            self.f.prefix,
        )
        program_entry(entry, self.f.module.globals[RUN_PROGRAM], program)
        if self.f.ctx.glue is not None:
            glue_entry(self.f.ctx.glue, entry, program)
        return True

    def flat_params(self) -> list[tuple[relax.Var, Leaf]]:
        return [(p, leaf) for p in self.f.func.params for leaf in leaves(p.struct_info, p.name)]

    def count_texts(self, args: int) -> tuple[str, str]:
        """The messages of a wrong number of arguments and of results (one %d)."""
        names = literal(", ".join(p.name for p in self.f.func.params))  # formats: see literal
        count = len(leaves(self.f.func.ret_struct_info, "result"))
        return (
            f"expected {args} arguments ({names}), got %d",
            f"returns {count} values, the caller made room for %d",
        )

    def check_counts(self, args: int) -> None:
        results = len(leaves(self.f.func.ret_struct_info, "result"))
        for got, want, text in zip(
            (self.f.num_args, self.f.num_outs), (args, results), self.count_texts(args), strict=True
        ):
            ok = self.f.b.icmp_signed("==", got, ty.constant("int32", want))
            self.checks.check(ok, abi.STATUS_ARGUMENT, text, got)

    def bind_params(self, flat: list[tuple[relax.Var, Leaf]]) -> None:
        """Every leaf's header and bare dims, then every dim."""
        # A tensor parameter is a reference (`Arg`): it costs no home across chunks,
        # and checks of known types are steps (data, not code).
        vals: list[Val | None] = []
        for k, (_, leaf) in enumerate(flat):
            vals = self.chunks.boundary(vals)
            what = f"parameter '{leaf.label}'"
            sinfo = leaf.sinfo
            if isinstance(sinfo, relax.TensorStructInfo):
                t = self.param(k, sinfo)
                if self.f.use_steps:
                    self.steps.add_check(t, None, what, abi.STATUS_ARGUMENT)
                else:
                    ptr = self.chunks.load_ref(Arg(k))
                    self.checks.check_header(ptr, t.dtype, t.ndim, what, abi.STATUS_ARGUMENT)
                shape = sinfo.shape if isinstance(sinfo.shape, tuple) else ()
                if any(isinstance(d, tir.Var) and d not in self.f.exprs.vars for d in shape):
                    self.steps.flush()  # its dims may be read once its header is checked
                    self.checks.bind_dims(self.chunks.load_ref(Arg(k)), sinfo, what)
                vals.append(None)
            else:
                self.steps.flush()
                ptr = self.chunks.load_ref(Arg(k))
                vals.append(self.checks.check_value(ptr, sinfo, what, abi.STATUS_ARGUMENT))
        for k, (_, leaf) in enumerate(flat):
            vals = self.chunks.boundary(vals)
            sinfo = leaf.sinfo
            if isinstance(sinfo, relax.TensorStructInfo):
                what = f"parameter '{leaf.label}'"
                dims = known_dims(sinfo)
                if dims is not None and self.f.use_steps:
                    if dims:
                        self.steps.add_check(self.param(k, sinfo), dims, what, abi.STATUS_ARGUMENT)
                    found = tuple(ty.constant("int64", d) for d in dims)
                else:
                    self.steps.flush()
                    ptr = self.chunks.load_ref(Arg(k))
                    found = self.checks.check_dims(ptr, sinfo, what, abi.STATUS_ARGUMENT)
                vals[k] = replace(self.param(k, sinfo), dims=found)
        for p in self.f.func.params:
            self.f.values[p] = rebuild(p.struct_info, vals)
            self.f.roots[p] = set()
            self.f.touched.append(p)

    @staticmethod
    def param(k: int, sinfo: relax.TensorStructInfo) -> TensorVal:
        """Tensor argument `k` as its struct info describes it (dims unknown)."""
        ndim = len(sinfo.shape) if isinstance(sinfo.shape, tuple) else sinfo.ndim
        return TensorVal(Arg(k), sinfo.dtype, ndim)

    # ------------------------------------------------------------ bindings

    def emit_top(self, seq: relax.SeqExpr, code: bool = True) -> Val | None:
        """Top-level bindings (each a step or code), releasing each owned tensor
        after its last use. Without `code`: steps only, None as soon as a binding
        is not one, else the body's value unresolved."""
        bindings = [bd for block in seq.blocks for bd in block.bindings]
        last_use = last_uses(bindings, seq.body)
        dies_after: dict[int, list[relax.Var]] = {}
        for v, last in last_use.items():
            dies_after.setdefault(last, []).append(v)
        slot_last: dict[int, int] = {}
        release_after: dict[int, list[int]] = {}  # binding -> slots whose last use it may be
        for i, bd in enumerate(bindings):
            first = self.f.slots
            if not (self.f.use_steps and self.steps.add_step(bd)):
                if not code:
                    return None
                self.steps.flush()
                self.emit_binding(bd)
            new = set(range(first, self.f.slots))
            roots = new | alias_roots(bd.value, self.f.roots)
            self.f.roots[bd.var] = roots
            for s in roots:
                slot_last[s] = max(slot_last.get(s, -1), last_use.get(bd.var, i))
                release_after.setdefault(slot_last[s], []).append(s)
            for s in release_after.pop(i, ()):
                if slot_last[s] == i and s not in self.f.released:
                    self.release_slot(s)
            for v in dies_after.pop(i, ()):
                self.f.values.pop(v, None)
            if bd.var not in last_use:
                self.f.values.pop(bd.var, None)
            self.chunks.boundary([])
        if not code:
            return self.unresolved(seq.body)
        self.steps.flush()
        return self.value(seq.body)

    def unresolved(self, e: relax.Expr) -> Val | None:
        """The value of a var, a constant or a tuple of them, references kept."""
        if isinstance(e, relax.Var):
            return self.f.values.get(e)
        if isinstance(e, relax.Constant):
            return self.f.constant(e)
        if isinstance(e, relax.Tuple):
            fields = [self.unresolved(f) for f in e.fields]
            return None if None in fields else TupleVal(tuple(fields))  # type: ignore[arg-type]
        return None

    def release_slot(self, s: int) -> None:
        if not self.steps.defer_release(s):
            assert self.chunks.functions, "a program frees its slots after its steps"
            self.frame.release(s)
        self.f.released.add(s)

    def emit_binding(self, bd: relax.Binding) -> None:
        self.f.touched.append(bd.var)
        if isinstance(bd, relax.MatchCast):
            val = self.value(bd.value)
            self.f.values[bd.var] = self.flow.match_cast(val, bd.struct_info, bd.var.name)
            return
        val = self.value(bd.value, bd.var)
        si = bd.var.struct_info
        if (
            isinstance(val, PrimVal)
            and isinstance(si, relax.PrimStructInfo)
            and isinstance(si.value, tir.Var)
            and si.value not in self.f.exprs.vars
        ):
            # `alias: T.int64 = n` (0.27): the bound var is itself the TIR scalar that
            # later arithmetic (`alias + 1`) reads
            self.checks.bind_prim(val.value, si, bd.var.name, abi.STATUS_RUNTIME)
        self.f.values[bd.var] = val

    def value(self, e: relax.Expr, var: relax.Var | None = None) -> Val:
        visit = self._value.get(type(e))
        if isinstance(e, relax.Function):
            what = f"'{var.name}'" if var is not None else "a function value"
            raise TVMLiteError(
                f"{self.f.prefix}the local function (closure) {what} cannot be compiled: "
                "lift it to a module-level function (TVM's LambdaLift does the same)"
            )
        if visit is None:
            raise TVMLiteError(
                f"{self.f.prefix}{type(e).__name__} values are not supported in compiled code"
            )
        return visit(e, var)

    def visit_var(self, e: relax.Var, var: relax.Var | None) -> Val:
        found = self.f.values.get(e)
        if found is None:
            raise TVMLiteError(
                f"{self.f.prefix}'{e.name}' is used outside the scope that defines it"
            )
        # Not kept: a slot's load is valid where it is made, not everywhere after.
        return self.chunks.resolve(found)

    def visit_tuple(self, e: relax.Tuple, var: relax.Var | None) -> Val:
        return TupleVal(tuple(self.value(f) for f in e.fields))

    def visit_get_item(self, e: relax.TupleGetItem, var: relax.Var | None) -> Val:
        tup = self.value(e.tuple_value)
        if not isinstance(tup, TupleVal) or not 0 <= e.index < len(tup.fields):
            raise TVMLiteError(f"{self.f.prefix}tuple index {e.index} is out of range")
        return tup.fields[e.index]

    def visit_shape(self, e: relax.ShapeExpr, var: relax.Var | None) -> Val:
        return ShapeVal(tuple(self.f.dim_value(d, "R.shape") for d in e.values))

    def visit_prim_value(self, e: relax.PrimValue, var: relax.Var | None) -> Val:
        return PrimVal(self.f.exprs.expr(e.value), e.value.dtype)

    def visit_constant(self, e: relax.Constant, var: relax.Var | None) -> Val:
        return self.f.constant(e)

    # ------------------------------------------------------------ return

    def emit_return(self, result: Val) -> None:
        """Own every output (take a slot's block, else copy), then hand them over."""
        flat = val_leaves(result)
        ret = leaves(self.f.func.ret_struct_info, "result")
        if len(flat) != len(ret):
            raise TVMLiteError(
                f"{self.f.prefix}the body returns {len(flat)} values, the signature {len(ret)}"
            )
        body_slots = self.f.slots  # an output takes its block from these, never from another output
        owned = [self.own(v, leaf.label, body_slots) for v, leaf in zip(flat, ret, strict=True)]
        for k, s in enumerate(owned):
            out = self.f.b.gep(self.f.outs_ptr, [ty.constant("int64", k)], source_etype=PTR)
            slot = self.f.slot(s)
            self.f.b.store(self.f.b.load(slot, typ=PTR), out)
            self.f.b.store(NULL, slot)
        self.chunks.leave(ty.constant("int32", abi.STATUS_OK))

    def own(self, val: Val, label: str, body_slots: int) -> int:
        """The slot of an owned block with `val`'s contents: a fresh one for prim
        values and shapes; for a tensor, the body slot holding it (emptied), else
        a copy."""
        if isinstance(val, PrimVal):
            block = self.frame.allocate(val.dtype, [], label)
            value = self.f.b.zext(val.value, abi.I8) if val.dtype == "bool" else val.value
            self.f.b.store(value, abi.load_field(self.f.b, block, abi.DATA, PTR))
            return self.f.slots - 1
        if isinstance(val, ShapeVal):
            block = self.frame.allocate("int64", [ty.constant("int64", len(val.dims))], label)
            data = abi.load_field(self.f.b, block, abi.DATA, PTR)
            for k, d in enumerate(val.dims):
                self.f.b.store(d, self.f.b.gep(data, [ty.constant("int64", k)], source_etype=I64))
            return self.f.slots - 1
        assert isinstance(val, TensorVal)
        b = self.f.b
        known = self.f.slot_of.get(id(val.ptr))
        if known is not None and known not in self.f.released:  # its slot, if still full
            at = self.f.slot(known)
            found = b.load(at, typ=PTR)
            b.store(NULL, at)
        else:
            take = self.f.module.globals[frames.TAKE]
            found = b.call(take, [self.f.frame, ty.constant("int64", body_slots), val.ptr])
        before = b.block
        copy = self.f.fn.append_basic_block("copy")
        done = self.f.fn.append_basic_block("owned")
        b.cbranch(b.icmp_unsigned("!=", found, NULL), done, copy)
        b.position_at_end(copy)
        fresh = b.call(self.f.module.globals[abi.COPY], [val.ptr])
        self.checks.check(
            b.icmp_unsigned("!=", fresh, NULL),
            abi.STATUS_OOM,
            f"out of memory copying {literal(label)}",
        )
        after_copy = b.block
        b.branch(done)
        b.position_at_end(done)
        block = b.phi(PTR)
        block.add_incoming(found, before)
        block.add_incoming(fresh, after_copy)
        return self.frame.hold(block)


def emit_function(ctx: HostContext, name: str, func: relax.Function) -> None:
    """The entry of graph function `name`: one optimized function of code when
    it is small in a small module (calls cost least), else a program when it is
    one, else code with steps (builds cost least)."""
    if ctx.small_module and _bindings(func) <= SMALL_FUNCTION:
        HostEmitter(ctx, name, func, steps=False).emit()
    elif not HostEmitter(ctx, name, func).emit_program():
        HostEmitter(ctx, name, func).emit()  # afresh: the attempt left its state


def _bindings(func: relax.Function) -> int:
    body = func.body
    return sum(len(b.bindings) for b in body.blocks) if isinstance(body, relax.SeqExpr) else 0

"""The frame of a host function: one stack array of slots, each holding a tensor
block the function owns (NULL once released or handed over), and the support
helpers that work on it.

Host code does per binding what these helpers do in a loop or behind one call
(allocate into a slot, release a slot, release the whole frame, find the slot
of a returned tensor), so a graph function of n bindings is n short call
sequences: a size LLVM compiles in time linear in n. Stack variables per slot
would not be: LLVM promotes them to registers, and each would then be live, as
a value or a phi, from where it is made to every exit after it: n² in all.

Optimized host code (small functions) inlines the two helpers every binding
calls: it calls private `alwaysinline` copies made in its module (`helper`).

`Frame` is the host emitter's part that uses them: the slots a function's
code allocates, fills (arena headers, blocks a callee returned) and releases,
and the stack memory of the arrays and DLTensors its calls pass.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from llvmlite import ir

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import relax
from tvmlite.lowering.codegen import llvm_host_abi as abi
from tvmlite.lowering.codegen import llvm_types as ty
from tvmlite.lowering.codegen.llvm_host_abi import I32, I64, PTR, c_function, cstring
from tvmlite.lowering.codegen.llvm_host_helpers import FORMAT_DIMS
from tvmlite.lowering.codegen.llvm_host_values import PrimVal, ShapeVal, TensorVal, Val, known_dims
from tvmlite.lowering.codegen.memory_plan import ARENA_SLOT

if TYPE_CHECKING:
    from tvmlite.lowering.codegen.llvm_host_chunks import Chunks
    from tvmlite.lowering.codegen.llvm_host_state import HostFunction

# Dotted names: no kernel symbol (`tvmlite_` + a prim function's name) can take them.
ALLOC_SLOT = "tvmlite.alloc_slot"
PLACE_SLOT = "tvmlite.place_slot"
ALLOC_FAILED = "tvmlite.alloc_failed"
RELEASE_SLOT = "tvmlite.release_slot"
RELEASE_ALL = "tvmlite.release_all"
TAKE = "tvmlite.take"
NULL = ir.Constant(PTR, None)

TYPES: dict[str, ir.FunctionType] = {
    ALLOC_SLOT: ir.FunctionType(PTR, [PTR, I64, I32, PTR, I32, PTR, PTR, I64]),
    ALLOC_FAILED: ir.FunctionType(PTR, [I32, PTR, I32, PTR, PTR, I64]),
    PLACE_SLOT: ir.FunctionType(PTR, [PTR, I64, I32, PTR, I32, PTR, I64, I64]),
    RELEASE_SLOT: ir.FunctionType(ir.VoidType(), [PTR, I64]),
    RELEASE_ALL: ir.FunctionType(ir.VoidType(), [PTR, I64]),
    TAKE: ir.FunctionType(PTR, [PTR, I64, PTR]),
}


def add_frame_helpers(module: ir.Module) -> None:
    """Define the frame helpers (after the ABI and check helpers they call)."""
    if ALLOC_SLOT in module.globals:
        return
    _define_alloc_failed(module)
    _define_alloc_slot(_new(module, ALLOC_SLOT))
    _define_place_slot(_new(module, PLACE_SLOT))
    _define_release_slot(_new(module, RELEASE_SLOT))
    _define_release_all(module)
    _define_take(module)


def helper(module: ir.Module, name: str, inline: bool) -> ir.Function:
    """The frame helper `name` for host code in `module`: the support library's,
    or (`inline`, for optimized code) a private copy the optimizer inlines."""
    if not inline or name not in INLINED:
        return module.globals[name]
    copy = module.globals.get(f"{name}.inline")
    if copy is None:
        copy = ir.Function(module, TYPES[name], f"{name}.inline")
        copy.linkage = "internal"
        copy.attributes.add("alwaysinline")
        INLINED[name](copy)
    return copy


def _new(module: ir.Module, name: str) -> ir.Function:
    fn = ir.Function(module, TYPES[name], name)
    fn.linkage = "internal"
    fn.attributes.add("noinline")
    return fn


def _define_alloc_slot(fn: ir.Function) -> None:
    """`DLTensor* tvmlite.alloc_slot(DLManagedTensorVersioned** frame, int64 k,
    int32 ndim, const int64* shape, int32 dtype, const char* what, char* err,
    int64 err_len)`: a fresh block in slot `k`, returned as its DLTensor; NULL with
    the message of `alloc_failed` in `err` when the allocation fails."""
    module = fn.module
    frame, k, ndim, shape, dtype, what, err, n = fn.args
    entry, bad, good = (fn.append_basic_block(x) for x in ("entry", "bad", "good"))
    b = ir.IRBuilder(entry)
    block = b.call(module.globals[abi.ALLOC], [ndim, shape, dtype])
    b.cbranch(b.icmp_unsigned("==", block, NULL), bad, good)
    b.position_at_end(good)
    b.store(block, b.gep(frame, [k], source_etype=PTR))
    b.ret(abi.tensor_of(b, block))
    b.position_at_end(bad)
    b.ret(b.call(module.globals[ALLOC_FAILED], [ndim, shape, dtype, what, err, n]))


def _define_place_slot(fn: ir.Function) -> None:
    """`DLTensor* tvmlite.place_slot(DLManagedTensorVersioned** frame, int64 k,
    int32 ndim, const int64* shape, int32 dtype, uint8* arena, int64 data,
    int64 header)`: an output the memory plan put in the arena (`memory_plan.py`):
    a header without deleter at byte `header` of the arena, over the bytes at
    `data`, held by slot `k` (releasing it does nothing; the arena, in its own
    slot, is freed last). `shape` is a constant the header points to."""
    frame, k, ndim, shape, dtype, arena, data, header = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    block = b.gep(arena, [header], source_etype=abi.I8)
    version = ir.Constant(
        abi.VERSION,
        [ty.constant("int32", abi.DLPACK_MAJOR), ty.constant("int32", abi.DLPACK_MINOR)],
    )
    device = ir.Constant(abi.DEVICE, [ty.constant("int32", abi.KDL_CPU), ty.constant("int32", 0)])
    empty = ir.Constant(abi.DTYPE, None)
    tensor = ir.Constant(
        abi.DLTENSOR,
        [NULL, device, ty.constant("int32", 0), empty, NULL, NULL, ty.constant("int64", 0)],
    )
    whole = ir.Constant(abi.MANAGED, [version, NULL, NULL, ty.constant("int64", 0), tensor])
    b.store(whole, block)
    t = abi.tensor_of(b, block)
    b.store(b.gep(arena, [data], source_etype=abi.I8), abi.field_ptr(b, t, abi.DATA))
    b.store(ndim, abi.field_ptr(b, t, abi.NDIM))
    b.store(dtype, abi.field_ptr(b, t, abi.DT))
    b.store(shape, abi.field_ptr(b, t, abi.SHAPE))
    b.store(block, b.gep(frame, [k], source_etype=PTR))
    b.ret(t)


def _define_alloc_failed(module: ir.Module) -> None:
    """`DLTensor* tvmlite.alloc_failed(int32 ndim, const int64* shape, int32 dtype,
    const char* what, char* err, int64 err_len)`: NULL, with "WHAT of shape (..)
    and dtype D: out of memory, ..." in `err`."""
    fn = _new(module, ALLOC_FAILED)
    ndim, shape, dtype, what, err, n = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    texts = [b.alloca(ir.ArrayType(abi.I8, size)) for size in (256, 32)]
    for buf in texts:
        buf.type = PTR
    b.call(module.globals[FORMAT_DIMS], [shape, ndim, texts[0], ty.constant("int64", 256)])
    name = b.call(module.globals[abi.DTYPE_NAME], [dtype, texts[1]])
    text = "%s of shape %s and dtype %s: out of memory, or a negative or too large size"
    snprintf = c_function(module, "snprintf", I32, [PTR, I64, PTR], var_arg=True)
    b.call(snprintf, [err, n, cstring(module, text), what, texts[0], name])
    b.ret(NULL)


def _frame_loop(
    fn: ir.Function, count: ir.Value, backward: bool = False
) -> tuple[ir.IRBuilder, ir.Value, ir.Block, ir.Block]:
    """A loop over `k` in [0, count) in `fn`: the builder at the start of the
    body, the address of slot `k` (`backward`: of slot count - 1 - k), the block
    stepping to the next `k`, the exit."""
    frame = fn.args[0]
    entry, loop, body, step, done = (
        fn.append_basic_block(n) for n in ("entry", "loop", "body", "step", "done")
    )
    b = ir.IRBuilder(entry)
    b.branch(loop)
    b.position_at_end(loop)
    k = b.phi(I64, "k")
    k.add_incoming(ty.constant("int64", 0), entry)
    b.cbranch(b.icmp_signed("<", k, count), body, done)
    b.position_at_end(step)
    k.add_incoming(b.add(k, ty.constant("int64", 1)), step)
    b.branch(loop)
    b.position_at_end(body)
    index = b.sub(b.sub(count, ty.constant("int64", 1)), k) if backward else k
    return b, b.gep(frame, [index], source_etype=PTR), step, done


def _define_release_slot(fn: ir.Function) -> None:
    """`void tvmlite.release_slot(DLManagedTensorVersioned** frame, int64 k)`:
    release slot `k` and empty it."""
    module = fn.module
    frame, k = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    slot = b.gep(frame, [k], source_etype=PTR)
    b.call(module.globals[abi.RELEASE], [b.load(slot, typ=PTR)])
    b.store(NULL, slot)
    b.ret_void()


def _define_release_all(module: ir.Module) -> None:
    """`void tvmlite.release_all(DLManagedTensorVersioned** frame, int64 n)`:
    release every slot of the frame (empty ones are NULL, which release skips),
    the last first: the arena of the memory plan, slot 0, after the headers in it."""
    fn = _new(module, RELEASE_ALL)
    b, slot, step, done = _frame_loop(fn, fn.args[1], backward=True)
    release_held(b, module, slot)
    b.branch(step)
    b.position_at_end(done)
    b.ret_void()


INLINED = {ALLOC_SLOT: _define_alloc_slot, RELEASE_SLOT: _define_release_slot}


def release_held(b: ir.IRBuilder, module: ir.Module, slot: ir.Value) -> None:
    """Release the block in `slot`, if there is one (most are released already)."""
    held = b.load(slot, typ=PTR)
    with b.if_then(b.icmp_unsigned("!=", held, NULL)):
        b.call(module.globals[abi.RELEASE], [held])


def _define_take(module: ir.Module) -> None:
    """`DLManagedTensorVersioned* tvmlite.take(DLManagedTensorVersioned** frame,
    int64 n, const DLTensor* t)`: the block of the first of the `n` slots holding
    `t`, the slot emptied; NULL when no slot does (the caller copies `t`)."""
    fn = _new(module, TAKE)
    tensor = fn.args[2]
    b, slot, step, done = _frame_loop(fn, fn.args[1])
    held = b.load(slot, typ=PTR)
    mine = b.and_(
        b.icmp_unsigned("!=", held, NULL), b.icmp_unsigned("==", abi.tensor_of(b, held), tensor)
    )
    found = fn.append_basic_block("found")
    b.cbranch(mine, found, step)
    b.position_at_end(found)
    b.store(NULL, slot)
    b.ret(held)
    b.position_at_end(done)
    b.ret(NULL)


class Frame:
    """The storage of the function being emitted (`f`): owned tensor blocks in
    frame slots (arena headers included), and stack memory for the arrays and
    DLTensors of calls."""

    def __init__(self, f: HostFunction, chunks: Chunks) -> None:
        self.f = f
        self.chunks = chunks

    def stack_slot(self, kind: ir.Type) -> ir.Value:
        """Stack memory made once in the entry block, addressed as a plain `ptr`."""
        slot = self.f.allocas.alloca(kind)
        slot.type = PTR
        return slot

    def hold(self, value: ir.Value) -> int:
        """An owned tensor: released at exit unless returned or freed earlier."""
        index = self.f.new_slot()
        self.f.b.store(value, self.f.slot(index))
        return index

    def int64_array(self, values: list[ir.Value]) -> ir.Value:
        """An array of the values: a shared constant when all are known, else
        stack memory written here."""
        if all(isinstance(v, ir.Constant) for v in values):
            return abi.int64_constant(self.f.module, [int(v.constant) for v in values])
        array = self.stack_slot(ir.ArrayType(I64, max(1, len(values))))
        for k, v in enumerate(values):
            self.f.b.store(v, self.f.b.gep(array, [ty.constant("int64", k)], source_etype=I64))
        return array

    def allocate(self, dtype: str, dims: list[ir.Value], what: str) -> ir.Value:
        """The DLTensor of a fresh block in a new slot (leaves on failure)."""
        index = self.f.new_slot()
        tensor = self.f.b.call(
            helper(self.f.module, ALLOC_SLOT, not self.f.use_steps),
            [
                self.f.frame,
                ty.constant("int64", index),
                ty.constant("int32", len(dims)),
                self.int64_array(dims),
                ty.constant("int32", abi.packed_dtype(dtype)),
                abi.cstring(self.f.module, f"{self.f.prefix}cannot allocate {what}"),
                self.f.err,
                self.f.err_len,
            ],
        )
        oom = ty.constant("int32", abi.STATUS_OOM)
        self.chunks.leave_if(self.f.b.icmp_unsigned("==", tensor, NULL), oom)
        self.f.slot_of[id(tensor)] = index
        return tensor

    def allocate_sinfo(self, sinfo: relax.StructInfo, what: str) -> TensorVal:
        if not isinstance(sinfo, relax.TensorStructInfo) or not isinstance(sinfo.shape, tuple):
            raise TVMLiteError(f"{self.f.prefix}{what} needs a tensor type with a known shape")
        if sinfo.dtype == "void":
            raise TVMLiteError(f"{self.f.prefix}{what} needs a known dtype")
        dims = [self.f.dim_value(d, what) for d in sinfo.shape]
        ptr = self.allocate(sinfo.dtype, dims, what)
        data = abi.load_field(self.f.b, ptr, abi.DATA, PTR)  # a fresh block has no byte offset
        return TensorVal(ptr, sinfo.dtype, len(dims), tuple(dims), data)

    def as_dltensor(self, val: Val) -> ir.Value:
        """A DLTensor* for any leaf value (prims and shapes get one on the stack)."""
        if isinstance(val, TensorVal):
            return val.ptr
        if isinstance(val, PrimVal):
            store = self.stack_slot(ty.memory_type(val.dtype))
            value = val.value
            if val.dtype == "bool":
                value = self.f.b.zext(value, abi.I8)
            self.f.b.store(value, store)
            return self.stack_tensor(val.dtype, [], store)
        assert isinstance(val, ShapeVal)
        data = self.int64_array(list(val.dims))
        return self.stack_tensor("int64", [ty.constant("int64", len(val.dims))], data)

    def stack_tensor(self, dtype: str, dims: list[ir.Value], data: ir.Value) -> ir.Value:
        t = self.stack_slot(abi.DLTENSOR)
        b = self.f.b
        b.store(data, abi.field_ptr(b, t, abi.DATA))
        device = ir.Constant(
            abi.DEVICE, [ty.constant("int32", abi.KDL_CPU), ty.constant("int32", 0)]
        )
        b.store(device, abi.field_ptr(b, t, abi.DEV))
        b.store(ty.constant("int32", len(dims)), abi.field_ptr(b, t, abi.NDIM))
        b.store(ty.constant("int32", abi.packed_dtype(dtype)), abi.field_ptr(b, t, abi.DT))
        b.store(self.int64_array(dims) if dims else NULL, abi.field_ptr(b, t, abi.SHAPE))
        b.store(NULL, abi.field_ptr(b, t, abi.STRIDES))
        b.store(ty.constant("int64", 0), abi.field_ptr(b, t, abi.OFFSET))
        return t

    def pointer_array(self, ptrs: list[ir.Value]) -> ir.Value:
        array = self.stack_slot(ir.ArrayType(PTR, max(1, len(ptrs))))
        for k, p in enumerate(ptrs):
            self.f.b.store(p, self.f.b.gep(array, [ty.constant("int64", k)], source_etype=PTR))
        return array

    def place(self, sinfo: relax.StructInfo, var: relax.Var, k: int) -> TensorVal:
        """Output leaf `k` of `var`, which the memory plan put in the arena (slot
        ARENA_SLOT): its header there, in a new slot (see `memory_plan.py`)."""
        dims = known_dims(sinfo)
        assert isinstance(sinfo, relax.TensorStructInfo) and dims is not None
        arena = abi.tensor_of(self.f.b, self.f.b.load(self.f.slot(ARENA_SLOT), typ=PTR))
        index = self.f.new_slot()
        tensor = self.f.b.call(
            helper(self.f.module, PLACE_SLOT, not self.f.use_steps),
            [
                self.f.frame,
                ty.constant("int64", index),
                ty.constant("int32", len(dims)),
                abi.int64_constant(self.f.module, dims),
                ty.constant("int32", abi.packed_dtype(sinfo.dtype)),
                abi.load_field(self.f.b, arena, abi.DATA, PTR),
                ty.constant("int64", self.f.plan.offsets[var][k]),
                ty.constant("int64", self.f.plan.headers[var][k]),
            ],
        )
        self.f.slot_of[id(tensor)] = index
        consts = tuple(ty.constant("int64", d) for d in dims)
        data = abi.load_field(self.f.b, tensor, abi.DATA, PTR)
        return TensorVal(tensor, sinfo.dtype, len(dims), consts, data)

    def release(self, index: int) -> None:
        """Release slot `index` here, in code."""
        release = helper(self.f.module, RELEASE_SLOT, not self.f.use_steps)
        self.f.b.call(release, [self.f.frame, ty.constant("int64", index)])

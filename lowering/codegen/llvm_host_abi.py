"""The C ABI of compiled graph functions: DLPack structs, status codes, and the
helper functions every host module contains (allocate, release, copy, name a
dtype). See docs/abi.md for the contract these implement.

Tensors cross every boundary as DLPack structs, so a compiled module can be
loaded from C and fed by any DLPack producer. Tensors the host allocates are
one `aligned_alloc` block: a `DLManagedTensorVersioned` header (DLPack 1.0, so
NumPy imports them writable), the shape, then the data at a 64-byte boundary;
the deleter is libc `free`, so a block outlives the code that made it (NumPy may
free it long after the JIT engine is gone), or, in the JIT's support code (which
lives as long as the process), the block cache's (llvm_block_cache.py).
"""

from __future__ import annotations

from llvmlite import ir

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import dtype as dt
from tvmlite.lowering.codegen import llvm_types as ty
from tvmlite.runtime.abi import ALLOC, BLOCK_HOOKS
from tvmlite.runtime.dlpack import DLPACK_MAJOR, DLPACK_MINOR

I8, I16, I32, I64, PTR = ty.I8, ir.IntType(16), ty.I32, ty.I64, ty.PTR
DEVICE = ir.LiteralStructType([I32, I32])
DTYPE = ir.LiteralStructType([I8, I8, I16])
DLTENSOR = ir.LiteralStructType([PTR, DEVICE, I32, DTYPE, PTR, PTR, I64])
VERSION = ir.LiteralStructType([I32, I32])
MANAGED = ir.LiteralStructType([VERSION, PTR, PTR, I64, DLTENSOR])  # DLManagedTensorVersioned
TENSOR_OFFSET = 32  # offsetof(DLManagedTensorVersioned, dl_tensor)
HEADER_BYTES = 80  # sizeof(DLManagedTensorVersioned)
ALIGN = 64
HUGE_PAGES = 4 << 20  # bytes from which a block asks for huge pages
PAGE = 4096
MADV_HUGEPAGE = 14  # Linux, every architecture
# DLTensor fields.
DATA, DEV, NDIM, DT, SHAPE, STRIDES, OFFSET = range(7)
KDL_CPU = 1
DLPACK_CODES = {"int": 0, "uint": 1, "float": 2, "bfloat": 4, "bool": 6}
CODE_NAMES = ("int", "uint", "float", "opaque", "bfloat", "complex", "bool")

# Entry and packed-function signature:
#   int32_t f(DLTensor* const* args, int32_t num_args,
#             DLManagedTensorVersioned** outs, int32_t num_outs, char* err, int64_t err_len)
ENTRY_TYPE = ir.FunctionType(I32, [PTR, I32, PTR, I32, PTR, I64])

STATUS_OK = 0
STATUS_ARGUMENT = 1  # an argument does not match the signature
STATUS_RUNTIME = 2  # a check inside the body failed (match_cast, kernel assert)
STATUS_OOM = 3
STATUS_PACKED = 4  # a packed function reported an error (its message is kept)

RELEASE = "tvmlite_release"
COPY = "tvmlite_copy_tensor"
DTYPE_NAME = "tvmlite_dtype_name"
IS_COMPACT = "tvmlite_is_compact"
# The block cache (llvm_block_cache.py); a support module that defines it allocates
# through it. One without it (an exported library's) allocates through the cache
# whose take and give functions its `tvmlite_block_hooks` hold, libc while NULL.
BLOCK_TAKE = "tvmlite_block_take"
BLOCK_GIVE = "tvmlite_block_give"
TAKE_TYPE = ir.FunctionType(PTR, [I64, PTR])  # void* take(int64 bytes, int64* tag)
GIVE_TYPE = ir.FunctionType(ir.VoidType(), [PTR])  # void give(block): the deleter


class FnPtr(ir.PointerType):
    """An opaque pointer known to point at a function of `pointee` type: what
    llvmlite needs to emit an indirect call (deleters, packed functions)."""

    def __init__(self, fnty: ir.FunctionType) -> None:
        super().__init__()
        self.pointee = fnty


class Loop:
    """`for i in range(start, stop, step)` in IR: the builder is left in the body,
    `i` is the induction value; `close()` steps and moves the builder past the loop."""

    def __init__(self, b: ir.IRBuilder, start: ir.Value, stop: ir.Value, step: ir.Value) -> None:
        self.b = b
        self.pre = b.block
        self.head = b.append_basic_block("head")
        self.body = b.append_basic_block("body")
        self.exit = b.append_basic_block("exit")
        b.branch(self.head)
        b.position_at_end(self.head)
        self.i = b.phi(start.type)
        self.i.add_incoming(start, self.pre)
        b.cbranch(b.icmp_signed("<", self.i, stop), self.body, self.exit)
        b.position_at_end(self.body)
        self.step = step

    def close(self, hint: ir.MDValue | None = None) -> None:
        """End the body; `hint` is loop metadata for the back edge (`ty.loop_hint`)."""
        nxt = self.b.add(self.i, self.step)
        self.i.add_incoming(nxt, self.b.block)
        back = self.b.branch(self.head)
        if hint is not None:
            back.set_metadata("llvm.loop", hint)
        self.b.position_at_end(self.exit)


def packed_dtype(dtype: str) -> int:
    """DLDataType as the i32 it is in memory (code | bits << 8 | lanes << 16)."""
    elem = dt.element_of(dtype)
    code = DLPACK_CODES[dt.code(elem)]
    bits = 8 if dt.is_bool(elem) else dt.bits(elem)
    return code | (bits << 8) | (dt.lanes(dtype) << 16)


def item_bytes(dtype: str) -> int:
    return ty.byte_size(dtype)


def field_ptr(b: ir.IRBuilder, tensor: ir.Value, index: int) -> ir.Value:
    return b.gep(
        tensor, [ty.constant("int32", 0), ty.constant("int32", index)], source_etype=DLTENSOR
    )


def load_field(b: ir.IRBuilder, tensor: ir.Value, index: int, kind: ir.Type) -> ir.Value:
    return b.load(field_ptr(b, tensor, index), typ=kind)


def data_pointer(b: ir.IRBuilder, tensor: ir.Value) -> ir.Value:
    """`data + byte_offset` of a DLTensor."""
    data = load_field(b, tensor, DATA, PTR)
    offset = load_field(b, tensor, OFFSET, I64)
    return b.gep(data, [offset], source_etype=I8)


def tensor_of(b: ir.IRBuilder, block: ir.Value) -> ir.Value:
    """The DLTensor inside a DLManagedTensorVersioned."""
    return b.gep(block, [ty.constant("int64", TENSOR_OFFSET)], source_etype=I8)


def load_dim(b: ir.IRBuilder, tensor: ir.Value, axis: int) -> ir.Value:
    shape = load_field(b, tensor, SHAPE, PTR)
    return b.load(b.gep(shape, [ty.constant("int64", axis)], source_etype=I64), typ=I64)


def dtype_bits(b: ir.IRBuilder, tensor: ir.Value) -> ir.Value:
    """The DLDataType of a tensor as one packed i32."""
    return b.load(field_ptr(b, tensor, DT), typ=I32)


def c_function(
    module: ir.Module, name: str, ret: ir.Type, params: list[ir.Type], **kw
) -> ir.Function:
    """The declaration of C function `name` in `module` (made on first use). One name
    has one type in a module: a second use with another type (a `T.call_extern` of
    `free` on a float, say) is an error here, not an LLVM verifier failure later."""
    fnty = ir.FunctionType(ret, params, **kw)
    fn = module.globals.get(name)
    if fn is None:
        return ir.Function(module, fnty, name)
    if not isinstance(fn, ir.Function) or fn.function_type != fnty:
        raise TVMLiteError(
            f"C function '{name}' is called as {fnty} but is already declared as "
            f"{getattr(fn, 'function_type', fn.type)} in this module"
        )
    return fn


def cstring(module: ir.Module, text: str, prefix: str = ".str") -> ir.GlobalVariable:
    """A private NUL-terminated string constant (shared between equal texts). A lone
    surrogate (IR built in code may hold one) is written as its escape."""
    data = bytearray(text.encode(errors="backslashreplace")) + b"\0"
    name = f"{prefix}.{len(module.globals)}"
    cache: dict[bytes, ir.GlobalVariable] = module.__dict__.setdefault("_tvmlite_strings", {})
    found = cache.get(bytes(data))
    if found is not None:
        return found
    g = global_var(module, ir.ArrayType(I8, len(data)), name)
    g.initializer = ir.Constant(ir.ArrayType(I8, len(data)), data)
    g.global_constant = True
    g.linkage = "private"
    cache[bytes(data)] = g
    return g


def int64_constant(module: ir.Module, values: list[int]) -> ir.GlobalVariable:
    """A private constant int64 array (shared between equal ones; one element at least)."""
    values = values or [0]
    cache: dict[tuple[int, ...], ir.GlobalVariable] = module.__dict__.setdefault(
        "_tvmlite_int64_arrays", {}
    )
    found = cache.get(tuple(values))
    if found is not None:
        return found
    kind = ir.ArrayType(I64, len(values))
    g = global_var(module, kind, f".dims.{len(module.globals)}")
    g.initializer = ir.Constant(kind, [ty.constant("int64", v) for v in values])
    g.global_constant = True
    g.linkage = "private"
    cache[tuple(values)] = g
    return g


def global_var(module: ir.Module, kind: ir.Type, name: str) -> ir.GlobalVariable:
    """A global whose address is a plain `ptr` (llvmlite types globals as typed
    pointers, which `select` and `phi` refuse to mix)."""
    g = ir.GlobalVariable(module, kind, name)
    g.type = PTR
    return g


def add_helpers(module: ir.Module) -> None:
    """Define the allocation, release, copy and dtype-naming helpers once."""
    if ALLOC in module.globals:
        return
    _define_alloc(module)
    _define_release(module)
    _define_copy(module)
    _define_dtype_name(module)
    _define_is_compact(module)
    for name in (ALLOC, RELEASE, COPY, DTYPE_NAME, IS_COMPACT):
        module.globals[name].attributes.add("noinline")  # called often: keep one copy


def _define_alloc(module: ir.Module) -> None:
    """`DLManagedTensorVersioned* tvmlite_alloc_tensor(int32 ndim, const int64* shape,
    int32 dtype)`: NULL when a dim is negative, the size overflows or memory runs out."""
    fn = ir.Function(module, ir.FunctionType(PTR, [I32, PTR, I32]), ALLOC)
    ndim, shape, dtype = fn.args
    entry, loop, body, done, fail = (
        fn.append_basic_block(n) for n in ("entry", "loop", "body", "done", "fail")
    )
    b = ir.IRBuilder(entry)
    count, i, size = _size_loop(b, ndim, dtype, entry, (loop, body, done))
    dim = b.load(b.gep(shape, [i], source_etype=I64), typ=I64)
    pair = ir.LiteralStructType([I64, ty.I1])
    smul = module.declare_intrinsic(
        "llvm.smul.with.overflow", [I64], ir.FunctionType(pair, [I64, I64])
    )
    product = b.call(smul, [size, dim])
    bad = b.or_(b.extract_value(product, 1), b.icmp_signed("<", dim, ty.constant("int64", 0)))
    i.add_incoming(b.add(i, ty.constant("int64", 1)), body)
    size.add_incoming(b.extract_value(product, 0), body)
    b.cbranch(bad, fail, loop)
    b.position_at_end(fail)
    b.ret(ir.Constant(PTR, None))
    b.position_at_end(done)
    shape_bytes = b.mul(count, ty.constant("int64", 8))
    head = _round_up(b, b.add(shape_bytes, ty.constant("int64", HEADER_BYTES)))
    data_bytes = _round_up(b, size)
    too_big = b.icmp_signed("<", data_bytes, size)  # the round-up overflowed
    total = b.add(head, data_bytes)
    sized, ok = fn.append_basic_block("sized"), fn.append_basic_block("ok")
    b.cbranch(too_big, fail, sized)
    b.position_at_end(sized)
    block, tag, deleter = _take_block(b, total)
    b.cbranch(b.icmp_unsigned("==", block, ir.Constant(PTR, None)), fail, ok)
    b.position_at_end(ok)
    shape_ptr = b.gep(block, [ty.constant("int64", HEADER_BYTES)], source_etype=I8)
    data = b.gep(block, [head], source_etype=I8)
    memcpy = module.declare_intrinsic("llvm.memcpy", [PTR, PTR, I64])
    b.call(memcpy, [shape_ptr, shape, shape_bytes, ir.Constant(ty.I1, 0)])
    null_ptr = ir.Constant(PTR, None)
    version = ir.Constant(
        VERSION, [ty.constant("int32", DLPACK_MAJOR), ty.constant("int32", DLPACK_MINOR)]
    )
    tensor = ir.Constant(
        DLTENSOR,
        [
            null_ptr,
            ir.Constant(DEVICE, [ty.constant("int32", KDL_CPU), ty.constant("int32", 0)]),
            ty.constant("int32", 0),
            ir.Constant(DTYPE, [ir.Constant(I8, 0), ir.Constant(I8, 0), ir.Constant(I16, 0)]),
            null_ptr,
            null_ptr,
            ty.constant("int64", 0),
        ],
    )
    header = ir.Constant(MANAGED, [version, null_ptr, null_ptr, ty.constant("int64", 0), tensor])
    header = b.insert_value(b.insert_value(header, tag, 1), deleter, 2)
    b.store(header, block)
    t = tensor_of(b, block)
    b.store(data, field_ptr(b, t, DATA))
    b.store(ndim, field_ptr(b, t, NDIM))
    b.store(dtype, field_ptr(b, t, DT))
    b.store(shape_ptr, field_ptr(b, t, SHAPE))
    b.ret(block)


def _take_block(b: ir.IRBuilder, total: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
    """(block, manager_ctx, deleter) of a fresh block of `total` bytes: from the
    block cache when the module has one or its hooks name one (the block's class
    in manager_ctx, its give as the deleter), else from libc with `free`."""
    module = b.module
    slot = b.alloca(I64)
    take = module.globals.get(BLOCK_TAKE)
    if take is not None:
        block = b.call(take, [total, slot])
        return block, b.inttoptr(b.load(slot, typ=I64), PTR), module.globals[BLOCK_GIVE]
    hooks = global_var(module, ir.ArrayType(PTR, 2), BLOCK_HOOKS)
    hooks.initializer = ir.Constant(ir.ArrayType(PTR, 2), None)
    hook = b.load_atomic(hooks, "acquire", 8, typ=FnPtr(TAKE_TYPE))
    fn = b.function
    hooked, libc, done = (fn.append_basic_block(n) for n in ("hooked", "libc", "taken"))
    b.cbranch(b.icmp_unsigned("!=", hook, ir.Constant(PTR, None)), hooked, libc)
    b.position_at_end(hooked)
    from_hook = b.call(hook, [total, slot])
    tag = b.inttoptr(b.load(slot, typ=I64), PTR)
    give = b.load(b.gep(hooks, [ty.constant("int64", 1)], source_etype=PTR), typ=PTR)
    b.branch(done)
    b.position_at_end(libc)
    alloc = c_function(module, "aligned_alloc", PTR, [I64, I64])
    from_libc = b.call(alloc, [ty.constant("int64", ALIGN), total])
    with b.if_then(b.icmp_unsigned("!=", from_libc, ir.Constant(PTR, None))):
        advise_huge_pages(b, from_libc, total)
    free = c_function(module, "free", ir.VoidType(), [PTR])
    libc_end = b.block
    b.branch(done)
    b.position_at_end(done)
    merged = []
    for kind, a, c in ((PTR, from_hook, from_libc), (PTR, tag, ir.Constant(PTR, None)),
                       (PTR, give, free)):  # fmt: skip
        phi = b.phi(kind)
        phi.add_incoming(a, hooked)
        phi.add_incoming(c, libc_end)
        merged.append(phi)
    return merged[0], merged[1], merged[2]


def advise_huge_pages(b: ir.IRBuilder, block: ir.Value, size: ir.Value) -> None:
    """Ask for transparent huge pages on the whole pages of a block of HUGE_PAGES
    bytes or more (as NumPy does): a fresh 64 MB result otherwise costs 16384
    page faults on first touch, most of a memory-bound kernel's time."""
    fn = b.function
    advise, done = fn.append_basic_block("huge"), fn.append_basic_block("advised")
    b.cbranch(b.icmp_unsigned(">=", size, ty.constant("int64", HUGE_PAGES)), advise, done)
    b.position_at_end(advise)
    page = ty.constant("int64", PAGE - 1)
    start = b.ptrtoint(block, I64)
    first = b.and_(b.add(start, page), b.not_(page))
    last = b.and_(b.add(start, size), b.not_(page))
    madvise = c_function(b.module, "madvise", I32, [PTR, I64, I32])
    b.call(
        madvise, [b.inttoptr(first, PTR), b.sub(last, first), ty.constant("int32", MADV_HUGEPAGE)]
    )
    b.branch(done)
    b.position_at_end(done)


def _size_loop(
    b: ir.IRBuilder,
    ndim: ir.Value,
    dtype: ir.Value,
    start: ir.Block,
    blocks: tuple[ir.Block, ir.Block, ir.Block],
) -> tuple[ir.Value, ir.PhiInstr, ir.PhiInstr]:
    """Branch from `start` into the `loop` of `blocks` (loop, body, done) over the
    dims: phis `i` from 0 and `size` from the item bytes of the packed `dtype`
    (the body adds their next values), on to `body` while `i < ndim`, else to
    `done`. Leaves `b` at the start of `body`; returns `ndim` as int64, `i`, `size`."""
    loop, body, done = blocks
    bits = b.and_(b.lshr(dtype, ty.constant("int32", 8)), ty.constant("int32", 0xFF))
    lanes = b.lshr(dtype, ty.constant("int32", 16))
    item = b.udiv(b.add(b.mul(bits, lanes), ty.constant("int32", 7)), ty.constant("int32", 8))
    count = b.sext(ndim, I64)
    item64 = b.zext(item, I64)
    b.branch(loop)
    b.position_at_end(loop)
    i = b.phi(I64, "i")
    size = b.phi(I64, "size")
    i.add_incoming(ty.constant("int64", 0), start)
    size.add_incoming(item64, start)
    b.cbranch(b.icmp_signed("<", i, count), body, done)
    b.position_at_end(body)
    return count, i, size


def _round_up(b: ir.IRBuilder, n: ir.Value) -> ir.Value:
    return b.and_(b.add(n, ty.constant("int64", ALIGN - 1)), ty.constant("int64", -ALIGN))


def _define_release(module: ir.Module) -> None:
    """`void tvmlite_release(DLManagedTensorVersioned*)`: call the deleter, if any."""
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [PTR]), RELEASE)
    fn.linkage = "internal"
    (block,) = fn.args
    entry, call, done = (fn.append_basic_block(n) for n in ("entry", "call", "done"))
    b = ir.IRBuilder(entry)
    null = ir.Constant(PTR, None)
    deleter_ptr = b.gep(
        block, [ty.constant("int32", 0), ty.constant("int32", 2)], source_etype=MANAGED
    )
    b.cbranch(b.icmp_unsigned("==", block, null), done, call)
    b.position_at_end(call)
    deleter = b.load(deleter_ptr, typ=FnPtr(ir.FunctionType(ir.VoidType(), [PTR])))
    has = fn.append_basic_block("has")
    b.cbranch(b.icmp_unsigned("==", deleter, null), done, has)
    b.position_at_end(has)
    b.call(deleter, [block])
    b.branch(done)
    b.position_at_end(done)
    b.ret_void()


def _define_copy(module: ir.Module) -> None:
    """`DLManagedTensorVersioned* tvmlite_copy_tensor(const DLTensor*)`: a compact copy
    (the source is compact: every tensor the host sees was checked or made so)."""
    fn = ir.Function(module, ir.FunctionType(PTR, [PTR]), COPY)
    fn.linkage = "internal"
    (src,) = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    ndim = load_field(b, src, NDIM, I32)
    dtype = dtype_bits(b, src)
    block = b.call(module.globals[ALLOC], [ndim, load_field(b, src, SHAPE, PTR), dtype])
    ok = fn.append_basic_block("ok")
    fail = fn.append_basic_block("fail")
    b.cbranch(b.icmp_unsigned("==", block, ir.Constant(PTR, None)), fail, ok)
    b.position_at_end(fail)
    b.ret(block)
    b.position_at_end(ok)
    # The size is the one the allocation computed: data to the end of the block
    # is at least nbytes; recompute it exactly to copy no more than the source has.
    loop, body, done = (fn.append_basic_block(n) for n in ("loop", "body", "done"))
    _, i, size = _size_loop(b, ndim, dtype, ok, (loop, body, done))
    i.add_incoming(b.add(i, ty.constant("int64", 1)), body)
    size.add_incoming(b.mul(size, load_dim_dynamic(b, src, i)), body)
    b.branch(loop)
    b.position_at_end(done)
    memcpy = module.declare_intrinsic("llvm.memcpy", [PTR, PTR, I64])
    dst = load_field(b, tensor_of(b, block), DATA, PTR)
    b.call(memcpy, [dst, data_pointer(b, src), size, ir.Constant(ty.I1, 0)])
    b.ret(block)


def load_dim_dynamic(b: ir.IRBuilder, tensor: ir.Value, axis: ir.Value) -> ir.Value:
    shape = load_field(b, tensor, SHAPE, PTR)
    return b.load(b.gep(shape, [axis], source_etype=I64), typ=I64)


def _define_dtype_name(module: ir.Module) -> None:
    """`const char* tvmlite_dtype_name(int32 dtype, char* buf)`: "float32", "bool",
    "int8x4", for error messages about what a caller passed."""
    fn = ir.Function(module, ir.FunctionType(PTR, [I32, PTR]), DTYPE_NAME)
    fn.linkage = "internal"
    dtype, buf = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    code = b.and_(dtype, ty.constant("int32", 0xFF))
    bits = b.and_(b.lshr(dtype, ty.constant("int32", 8)), ty.constant("int32", 0xFF))
    lanes = b.lshr(dtype, ty.constant("int32", 16))
    names = [cstring(module, n) for n in (*CODE_NAMES, "code")]
    name = names[-1]
    for k in range(len(CODE_NAMES)):
        name = b.select(b.icmp_unsigned("==", code, ty.constant("int32", k)), names[k], name)
    is_bool = b.and_(
        b.icmp_unsigned("==", code, ty.constant("int32", DLPACK_CODES["bool"])),
        b.icmp_unsigned("==", bits, ty.constant("int32", 8)),
    )
    plain = b.select(is_bool, cstring(module, "%s"), cstring(module, "%s%u"))
    fmt = b.select(
        b.icmp_unsigned("==", lanes, ty.constant("int32", 1)),
        plain,
        cstring(module, "%s%ux%u"),
    )
    snprintf = c_function(module, "snprintf", I32, [PTR, I64, PTR], var_arg=True)
    b.call(snprintf, [buf, ty.constant("int64", 32), fmt, name, bits, lanes])
    b.ret(buf)


def _define_is_compact(module: ir.Module) -> None:
    """`bool tvmlite_is_compact(const DLTensor*)`: strides NULL, or equal to the
    row-major ones on every axis longer than 1 (DLPack allows any stride there)."""
    fn = ir.Function(module, ir.FunctionType(ty.I1, [PTR]), IS_COMPACT)
    fn.linkage = "internal"
    (src,) = fn.args
    entry, loop, body, step, yes, no = (
        fn.append_basic_block(n) for n in ("entry", "loop", "body", "step", "yes", "no")
    )
    b = ir.IRBuilder(entry)
    strides = load_field(b, src, STRIDES, PTR)
    ndim = b.sext(load_field(b, src, NDIM, I32), I64)
    b.cbranch(b.icmp_unsigned("==", strides, ir.Constant(PTR, None)), yes, loop)
    b.position_at_end(loop)
    # Walk axes from the last: `expect` is the product of the dims after axis i.
    i = b.phi(I64)
    expect = b.phi(I64)
    i.add_incoming(ndim, entry)
    expect.add_incoming(ty.constant("int64", 1), entry)
    b.cbranch(b.icmp_signed(">", i, ty.constant("int64", 0)), body, yes)
    b.position_at_end(body)
    axis = b.sub(i, ty.constant("int64", 1))
    dim = load_dim_dynamic(b, src, axis)
    stride = b.load(b.gep(strides, [axis], source_etype=I64), typ=I64)
    fine = b.or_(
        b.icmp_signed("==", stride, expect), b.icmp_signed("==", dim, ty.constant("int64", 1))
    )
    b.cbranch(fine, step, no)
    b.position_at_end(step)
    i.add_incoming(axis, step)
    expect.add_incoming(b.mul(expect, dim), step)
    b.branch(loop)
    b.position_at_end(yes)
    b.ret(ir.Constant(ty.I1, 1))
    b.position_at_end(no)
    b.ret(ir.Constant(ty.I1, 0))

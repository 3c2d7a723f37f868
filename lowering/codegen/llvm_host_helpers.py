"""Checking helpers shared by every host function of a module.

Each check is one call here plus one branch at the call site, instead of a
message block per check: host code stays small, which is most of its compile
time. A helper returns 0, or writes its message and returns the status the
caller asked for.
"""

from __future__ import annotations

from llvmlite import ir

from tvmlite.lowering.codegen import llvm_host_abi as abi
from tvmlite.lowering.codegen import llvm_types as ty
from tvmlite.lowering.codegen.llvm_host_abi import I32, I64, PTR, c_function, cstring
from tvmlite.runtime.abi import STATUS_OUT_OF_MEMORY

CHECK_TENSOR = "tvmlite_check_tensor"
CHECK_SHAPE = "tvmlite_check_shape"
KERNEL_STATUS = "tvmlite.kernel_status"  # dotted: no kernel symbol can take it
FORMAT_DIMS = "tvmlite_format_dims"
NULL = ir.Constant(PTR, None)


def _c(kind: str, value: int) -> ir.Constant:
    return ty.constant(kind, value)


class _Fn:
    """A helper under construction: `fail(text, *args)` ends the current block
    with the message and the caller's status."""

    def __init__(self, module: ir.Module, name: str, params: list[ir.Type]) -> None:
        self.module = module
        self.fn = ir.Function(module, ir.FunctionType(I32, params), name)
        self.fn.linkage = "internal"
        self.fn.attributes.add("noinline")
        self.b = ir.IRBuilder(self.fn.append_basic_block("entry"))
        self.snprintf = c_function(module, "snprintf", I32, [PTR, I64, PTR], var_arg=True)

    def require(
        self, ok: ir.Value, status: ir.Value, err: ir.Value, n: ir.Value, text: str, *args: ir.Value
    ) -> None:
        good = self.fn.append_basic_block("ok")
        bad = self.fn.append_basic_block("bad")
        self.b.cbranch(ok, good, bad)
        self.b.position_at_end(bad)
        self.b.call(self.snprintf, [err, n, cstring(self.module, text), *args])
        self.b.ret(status)
        self.b.position_at_end(good)


def add_check_helpers(module: ir.Module) -> None:
    if CHECK_TENSOR in module.globals:
        return
    _define_format_dims(module)
    _define_check_tensor(module)
    _define_check_shape(module)
    _define_kernel_status(module)


def _define_check_tensor(module: ir.Module) -> None:
    """`int32 tvmlite_check_tensor(const DLTensor* t, int32 ndim, int32 dtype,
    int32 status, const char* what, char* err, int64 err_len)`: NULL, device,
    rank (ndim < 0: any), dtype (-1: any), data, alignment, compactness."""
    h = _Fn(module, CHECK_TENSOR, [PTR, I32, I32, I32, PTR, PTR, I64])
    t, ndim, dtype, status, what, err, n = h.fn.args
    b = h.b
    h.require(b.icmp_unsigned("!=", t, NULL), status, err, n, "%s: got NULL", what)
    device = b.load(abi.field_ptr(b, t, abi.DEV), typ=I32)
    h.require(
        b.icmp_signed("==", device, _c("int32", abi.KDL_CPU)), status, err, n,
        "%s: expected a CPU tensor (device type 1), got device type %d", what, device,
    )  # fmt: skip
    got_ndim = abi.load_field(b, t, abi.NDIM, I32)
    any_ndim = b.icmp_signed("<", ndim, _c("int32", 0))
    h.require(
        b.or_(any_ndim, b.icmp_signed("==", got_ndim, ndim)), status, err, n,
        "%s: expected %d dimensions, got %d", what, ndim, got_ndim,
    )  # fmt: skip
    got = abi.dtype_bits(b, t)
    any_dtype = b.icmp_signed("==", dtype, _c("int32", -1))
    buffers = [b.alloca(ir.ArrayType(abi.I8, 32)) for _ in range(2)]
    for buf in buffers:
        buf.type = PTR
    ok = b.or_(any_dtype, b.icmp_unsigned("==", got, dtype))
    good = h.fn.append_basic_block("dtype.ok")
    bad = h.fn.append_basic_block("dtype.bad")
    b.cbranch(ok, good, bad)
    b.position_at_end(bad)
    names = module.globals[abi.DTYPE_NAME]
    want_text = b.call(names, [dtype, buffers[0]])
    got_text = b.call(names, [got, buffers[1]])
    text = cstring(module, "%s: expected dtype %s, got %s")
    b.call(h.snprintf, [err, n, text, what, want_text, got_text])
    b.ret(status)
    b.position_at_end(good)
    data = abi.data_pointer(b, t)
    bits = b.and_(b.lshr(got, _c("int32", 8)), _c("int32", 0xFF))
    h.require(
        b.or_(b.icmp_unsigned("!=", data, NULL), b.icmp_unsigned("==", bits, _c("int32", 0))),
        status, err, n, "%s: data is NULL", what,
    )  # fmt: skip
    item = b.zext(b.udiv(b.add(bits, _c("int32", 7)), _c("int32", 8)), I64)
    low = b.urem(
        b.ptrtoint(data, I64),
        b.select(b.icmp_unsigned("==", item, _c("int64", 0)), _c("int64", 1), item),
    )
    h.require(
        b.icmp_unsigned("==", low, _c("int64", 0)), status, err, n,
        "%s: data is not aligned to its element size", what,
    )  # fmt: skip
    compact = b.call(module.globals[abi.IS_COMPACT], [t])
    h.require(
        compact, status, err, n,
        "%s: expected a compact (C-contiguous) tensor, got strides that are not", what,
    )  # fmt: skip
    b.ret(_c("int32", 0))


def _define_format_dims(module: ir.Module) -> None:
    """`int32 tvmlite_format_dims(const int64* dims, int32 n, char* buf, int64 len)`:
    writes "(4, 16)" ("(4,)" for one dim); returns 0."""
    h = _Fn(module, FORMAT_DIMS, [PTR, I32, PTR, I64])
    dims, count, buf, size = h.fn.args
    b = h.b
    entry = b.block
    b.call(h.snprintf, [buf, size, cstring(module, "(")])
    loop, body, done = (h.fn.append_basic_block(x) for x in ("loop", "body", "done"))
    count64 = b.sext(count, I64)
    b.branch(loop)
    b.position_at_end(loop)
    i = b.phi(I64)
    i.add_incoming(_c("int64", 0), entry)
    b.cbranch(b.icmp_signed("<", i, count64), body, done)
    b.position_at_end(body)
    strlen = c_function(module, "strlen", I64, [PTR])
    used = b.call(strlen, [buf])
    room = b.sub(size, used)
    dim = b.load(b.gep(dims, [i], source_etype=I64), typ=I64)
    first = b.icmp_signed("==", i, _c("int64", 0))
    fmt = b.select(first, cstring(module, "%ld"), cstring(module, ", %ld"))
    b.call(h.snprintf, [b.gep(buf, [used], source_etype=abi.I8), room, fmt, dim])
    i.add_incoming(b.add(i, _c("int64", 1)), body)
    b.branch(loop)
    b.position_at_end(done)
    used = b.call(strlen, [buf])
    one = b.icmp_signed("==", count64, _c("int64", 1))
    close = b.select(one, cstring(module, ",)"), cstring(module, ")"))
    b.call(h.snprintf, [b.gep(buf, [used], source_etype=abi.I8), b.sub(size, used), close])
    b.ret(_c("int32", 0))


def _define_check_shape(module: ir.Module) -> None:
    """`int32 tvmlite_check_shape(const DLTensor* t, int32 ndim, const int64* want,
    const char* want_text, int32 status, const char* what, char* err, int64 len)`:
    every dim equal to `want` (-1: any)."""
    h = _Fn(module, CHECK_SHAPE, [PTR, I32, PTR, PTR, I32, PTR, PTR, I64])
    t, ndim, want, want_text, status, what, err, n = h.fn.args
    b = h.b
    entry = b.block
    shape = abi.load_field(b, t, abi.SHAPE, PTR)
    count = b.sext(ndim, I64)
    loop, body, step, done, bad = (
        h.fn.append_basic_block(x) for x in ("loop", "body", "step", "done", "bad")
    )
    b.branch(loop)
    b.position_at_end(loop)
    i = b.phi(I64)
    i.add_incoming(_c("int64", 0), entry)
    b.cbranch(b.icmp_signed("<", i, count), body, done)
    b.position_at_end(body)
    expect = b.load(b.gep(want, [i], source_etype=I64), typ=I64)
    got = b.load(b.gep(shape, [i], source_etype=I64), typ=I64)
    same = b.or_(b.icmp_signed("==", expect, got), b.icmp_signed("==", expect, _c("int64", -1)))
    b.cbranch(same, step, bad)
    b.position_at_end(step)
    i.add_incoming(b.add(i, _c("int64", 1)), step)
    b.branch(loop)
    b.position_at_end(done)
    b.ret(_c("int32", 0))
    b.position_at_end(bad)
    texts = [b.alloca(ir.ArrayType(abi.I8, 256)) for _ in range(2)]
    for buf in texts:
        buf.type = PTR
    fmt = module.globals[FORMAT_DIMS]
    b.call(fmt, [want, ndim, texts[0], _c("int64", 256)])
    b.call(fmt, [shape, ndim, texts[1], _c("int64", 256)])
    symbolic = b.icmp_unsigned("!=", want_text, NULL)
    message = b.select(
        symbolic,
        cstring(module, "%s: expected shape %s = %s, got %s"),
        cstring(module, "%s: expected shape %s, got %s"),  # the 4th argument is unused
    )
    second = b.select(symbolic, want_text, texts[0])
    third = b.select(symbolic, texts[0], texts[1])
    b.call(h.snprintf, [err, n, message, what, second, third, texts[1]])
    b.ret(status)


def _define_kernel_status(module: ir.Module) -> None:
    """`int32 tvmlite.kernel_status(int32 status, const char* const* messages,
    int32 count, const char* where, const char* reported, char* err, int64 len)`:
    0 for a kernel that returned 0; else "WHERE: MESSAGE (status S)" and
    STATUS_RUNTIME. The message is the one the kernel wrote in `reported` (an
    assert reporting values; NULL or empty: none), else its assert message
    `messages[status]` when 0 < status <= count."""
    h = _Fn(module, KERNEL_STATUS, [I32, PTR, I32, PTR, PTR, PTR, I64])
    status, messages, count, where, reported, err, n = h.fn.args
    b = h.b
    failed = h.fn.append_basic_block("failed")
    done = h.fn.append_basic_block("done")
    b.cbranch(b.icmp_signed("==", status, _c("int32", 0)), done, failed)
    b.position_at_end(done)
    b.ret(_c("int32", 0))
    b.position_at_end(failed)
    in_range = b.and_(
        b.icmp_signed(">", status, _c("int32", 0)), b.icmp_signed("<=", status, count)
    )
    index = b.zext(b.select(in_range, status, _c("int32", 0)), I64)
    listed = b.load(b.gep(messages, [index], source_etype=PTR), typ=PTR)
    given = b.block
    check, pick = h.fn.append_basic_block("reported"), h.fn.append_basic_block("pick")
    b.cbranch(b.icmp_unsigned("!=", reported, NULL), check, pick)
    b.position_at_end(check)
    written = b.icmp_unsigned("!=", b.load(reported, typ=abi.I8), _c("int8", 0))
    chosen = b.select(written, reported, listed)
    b.branch(pick)
    b.position_at_end(pick)
    message = b.phi(PTR)
    message.add_incoming(listed, given)
    message.add_incoming(chosen, check)
    oom = b.icmp_signed("==", status, _c("int32", STATUS_OUT_OF_MEMORY))
    message = b.select(oom, cstring(module, "out of memory in a kernel"), message)
    b.call(h.snprintf, [err, n, cstring(module, "%s: %s (status %d)"), where, message, status])
    b.ret(_c("int32", abi.STATUS_RUNTIME))

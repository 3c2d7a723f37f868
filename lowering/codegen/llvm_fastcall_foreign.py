"""Arguments of the fast-call body (`llvm_fastcall.py`) that are not NumPy
arrays: tensors of other libraries, read through DLPack without Python.

Two ways, per argument:

- the one producer type the module serves (`fastcall.serve_producer`): its C
  exchange API describes the tensor as a DLTensor; nothing to release;
- any other object: the body calls `arg.__dlpack__(max_version=(1, 0))` itself
  (`__dlpack__()` when that is a TypeError: a producer older than DLPack 1.0),
  takes the capsule, `dltensor_versioned` or legacy `dltensor`, renames it
  `used_...` as the protocol says, and owns the managed tensor until the entry
  has returned; then (or on the way to the Python path) it calls the manager's
  deleter. A type that carries a C exchange API while the module serves none
  goes to the Python path first, which serves it.

Either way the tensor is taken only as the NumPy path takes an array: on the
CPU, of the parameter's rank and packed DLDataType, compact (size-1 axes may
have any stride), aligned; its byte offset folded into the data pointer.
Anything else (another device or dtype, a strided view, a producer that raises,
a capsule of another name) releases what the call took and goes to the Python
path, which asks again and reports the error naming the parameter.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from llvmlite import ir

from tvmlite.lowering.codegen import llvm_host_abi as abi
from tvmlite.runtime import fastcall as fc

if TYPE_CHECKING:
    from tvmlite.lowering.codegen.llvm_fastcall import Emitter, _Body

I32, I64, PTR = abi.I32, abi.I64, abi.PTR
VOID = ir.VoidType()
DELETER = abi.FnPtr(ir.FunctionType(VOID, [PTR]))
# DLTensor field offsets (dlpack.h; the struct `abi.DLTENSOR` describes).
T_DEVICE_TYPE, T_NDIM, T_DTYPE, T_SHAPE, T_STRIDES = 8, 16, 20, 24, 32
# DLManagedTensorVersioned: version.major at 0, deleter at 16, the tensor at 32;
# DLManagedTensor (legacy): the tensor at 0, deleter at 56.
VERSIONED_DELETER, LEGACY_DELETER = 16, 56
PY_VECTORCALL_ARGS = 1  # `__dlpack__` gets self only (plus the keyword, when given)
# int32 tvmlite_fastcall.capsule(PyObject* arg, PyTypeObject* type, DLTensor* tensor,
#                                int32 ndim, int32 dtype, int32 writes, void* owned[2]):
# 0 when `tensor` describes arg's tensor and `owned` holds it and its deleter.
CAPSULE_READER = "tvmlite_fastcall.capsule"  # private; the dot: no name makes it
CAPSULE_READER_TYPE = ir.FunctionType(I32, [PTR, PTR, PTR, I32, I32, I32, PTR])
FLAGS, READ_ONLY = 24, 1  # DLManagedTensorVersioned.flags, DLPACK_FLAG_BITMASK_READ_ONLY


def read_foreign(
    body: _Body,
    k: ir.Value,
    arg: ir.Value,
    ob_type: ir.Value,
    ndim: ir.Value,
    dtype: ir.Value,
    need: ir.Value,
) -> None:
    """Describe argument `k` (not a NumPy array) in `body.tensors[k]`, or take
    the Python path; the builder ends where the tensor is filled. `need` is the
    NumPy flags the parameter asks of arrays: with WRITEABLE (written in place),
    a capsule's tensor must be versioned and not flagged read-only."""
    b, fn = body.b, body.fn
    tensor = b.gep(body.tensors, [k], source_etype=abi.DLTENSOR)
    served, capsule = fn.append_basic_block("served"), fn.append_basic_block("capsule")
    filled = fn.append_basic_block("foreign_filled")
    b.cbranch(b.icmp_unsigned("==", ob_type, body.const("exchange_type")), served, capsule)
    b.position_at_end(served)
    status = body.call("exchange_dltensor", [arg, tensor])
    refused = fn.append_basic_block("producer_refused")
    with b.goto_block(refused):
        body.call("clear_error", [])  # the Python path asks again and reports
        b.branch(body.fallback)
    body.branch_unless(b.icmp_signed("==", status, ir.Constant(I32, 0)), refused)
    accept(body, tensor, tensor, ndim, dtype, body.fallback)
    b.branch(filled)
    b.position_at_end(capsule)
    owned = body.at(body.owned, b.mul(k, ir.Constant(I64, 2)))
    writes = b.and_(need, ir.Constant(I32, fc.WRITEABLE))
    status = b.call(body.capsule_reader, [arg, ob_type, tensor, ndim, dtype, writes, owned])
    body.branch_unless(b.icmp_signed("==", status, ir.Constant(I32, 0)), body.fallback)
    b.branch(filled)
    b.position_at_end(filled)


def define_capsule_reader(e: Emitter) -> ir.Function:
    """The body of `CAPSULE_READER` (its function `e.fn`)."""
    b, fn = e.b, e.fn
    arg, ob_type, tensor, ndim, dtype, writes, owned = fn.args
    writes = b.icmp_unsigned("!=", writes, ir.Constant(I32, 0))
    with b.goto_block(e.fallback):
        b.ret(ir.Constant(I32, 1))
    null = ir.Constant(PTR, None)
    unserved = b.icmp_unsigned("==", e.const("exchange_type"), null)
    ask, lookup = fn.append_basic_block("ask"), fn.append_basic_block("lookup")
    b.cbranch(unserved, lookup, ask)
    b.position_at_end(lookup)  # a type Python should serve first?
    api = e.call("type_lookup", [ob_type, e.const("exchange_attribute")])
    e.branch_unless(b.icmp_unsigned("==", api, null), e.fallback)
    b.branch(ask)
    b.position_at_end(ask)
    capsule = _dlpack(e, arg)
    refuse = fn.append_basic_block("capsule_refused")
    with b.goto_block(refuse):  # not consumed: its destructor releases the tensor
        e.call("decref", [capsule])
        b.branch(e.fallback)
    versioned, legacy = fn.append_basic_block("versioned"), fn.append_basic_block("legacy")
    taken = fn.append_basic_block("taken")
    is_versioned = e.call("capsule_is_valid", [capsule, e.const("versioned_name")])
    b.cbranch(b.icmp_signed("!=", is_versioned, ir.Constant(I32, 0)), versioned, legacy)
    found = []
    for block, name, used, offset, deleter_at in (
        (versioned, "versioned_name", "used_versioned_name", abi.TENSOR_OFFSET, VERSIONED_DELETER),
        (legacy, "legacy_name", "used_legacy_name", 0, LEGACY_DELETER),
    ):
        b.position_at_end(block)
        if block is legacy:  # no flags: taken as NumPy takes it, read-only
            valid = e.call("capsule_is_valid", [capsule, e.const(name)])
            valid = b.icmp_signed("!=", valid, ir.Constant(I32, 0))
            e.branch_unless(b.and_(valid, b.not_(writes)), refuse)
        managed = e.call("capsule_pointer", [capsule, e.const(name)])
        if block is versioned:  # a major version other than ours is not read
            major = e.load(managed, 0, I32)
            flags = b.and_(e.load(managed, FLAGS, I64), ir.Constant(I64, READ_ONLY))
            read_only = b.icmp_unsigned("!=", flags, ir.Constant(I64, 0))
            ok = b.icmp_signed("==", major, ir.Constant(I32, 1))
            e.branch_unless(b.and_(ok, b.not_(b.and_(writes, read_only))), refuse)
        at = b.gep(managed, [ir.Constant(I64, offset)], source_etype=abi.I8)
        deleter = e.load(managed, deleter_at, PTR)
        found.append((b.block, managed, at, deleter, e.const(used)))
        b.branch(taken)
    b.position_at_end(taken)
    managed, at, deleter, used = (_merge(b, found, i) for i in range(1, 5))
    accept(e, at, tensor, ndim, dtype, refuse)
    e.call("capsule_set_name", [capsule, used])  # cannot fail: the capsule is valid
    b.store(managed, owned)
    b.store(deleter, e.at(owned, ir.Constant(I64, 1)))
    e.call("decref", [capsule])  # renamed: its destructor leaves the tensor to us
    b.ret(ir.Constant(I32, 0))
    return fn


def _merge(b: ir.IRBuilder, found: list[tuple], index: int) -> ir.Value:
    phi = b.phi(PTR)
    for row in found:
        phi.add_incoming(row[index], row[0])
    return phi


def _dlpack(body: Emitter, arg: ir.Value) -> ir.Value:
    """`arg.__dlpack__(max_version=...)`, else (a TypeError) `arg.__dlpack__()`;
    a new reference. When both fail, the error is cleared and the call takes the
    Python path."""
    b, fn = body.b, body.fn
    null = ir.Constant(PTR, None)
    argv = body.call_args
    b.store(arg, argv)
    b.store(body.const("dlpack_max_version"), body.at(argv, ir.Constant(I64, 1)))
    method, count = body.const("dlpack_method"), ir.Constant(I64, PY_VECTORCALL_ARGS)
    first = body.call("vectorcall_method", [method, argv, count, body.const("dlpack_kwnames")])
    start = b.block
    have, failed = fn.append_basic_block("have_capsule"), fn.append_basic_block("no_version")
    retry, none = fn.append_basic_block("legacy_ask"), fn.append_basic_block("no_capsule")
    b.cbranch(b.icmp_unsigned("!=", first, null), have, failed)
    b.position_at_end(failed)
    matches = body.call("exception_matches", [body.const("type_error")])
    b.cbranch(b.icmp_signed("!=", matches, ir.Constant(I32, 0)), retry, none)
    b.position_at_end(retry)
    body.call("clear_error", [])
    second = body.call("vectorcall_method", [method, argv, count, null])
    b.cbranch(b.icmp_unsigned("!=", second, null), have, none)
    b.position_at_end(none)
    body.call("clear_error", [])  # the Python path asks again and reports
    b.branch(body.fallback)
    b.position_at_end(have)
    capsule = b.phi(PTR)
    capsule.add_incoming(first, start)
    capsule.add_incoming(second, retry)
    return capsule


def accept(
    body: Emitter, src: ir.Value, dst: ir.Value, ndim: ir.Value, dtype: ir.Value, refuse: ir.Block
) -> None:
    """Write DLTensor `src` into `dst` as the entry takes it (data pointer with
    its byte offset, no strides) when it is on the CPU, of rank `ndim` and
    packed DLDataType `dtype`, compact and aligned; else branch to `refuse`."""
    b, fn = body.b, body.fn
    cpu = ir.Constant(I32, abi.KDL_CPU)
    ok = b.icmp_signed("==", body.load(src, T_DEVICE_TYPE, I32), cpu)
    ok = b.and_(ok, b.icmp_signed("==", body.load(src, T_NDIM, I32), ndim))
    body.branch_unless(b.and_(ok, b.icmp_signed("==", body.load(src, T_DTYPE, I32), dtype)), refuse)
    shape, strides = body.load(src, T_SHAPE, PTR), body.load(src, T_STRIDES, PTR)
    strided, compact = fn.append_basic_block("strided"), fn.append_basic_block("compact")
    b.cbranch(b.icmp_unsigned("==", strides, ir.Constant(PTR, None)), compact, strided)
    b.position_at_end(strided)
    b.store(ir.Constant(I64, 1), body.step)
    rank = b.sext(ndim, I64)
    axes = body.loop(rank)
    axis = b.sub(b.sub(rank, ir.Constant(I64, 1)), axes.i)  # the last axis first
    extent = b.load(b.gep(shape, [axis], source_etype=I64), typ=I64)
    stride = b.load(b.gep(strides, [axis], source_etype=I64), typ=I64)
    step = b.load(body.step, typ=I64)
    one = b.icmp_signed("==", extent, ir.Constant(I64, 1))
    body.branch_unless(b.or_(one, b.icmp_signed("==", stride, step)), refuse)
    b.store(b.mul(step, extent), body.step)
    axes.close()
    b.branch(compact)
    b.position_at_end(compact)
    data = abi.data_pointer(b, src)
    item = b.lshr(b.and_(dtype, ir.Constant(I32, 0xFF00)), ir.Constant(I32, 11))  # bytes
    mask = b.sub(b.zext(item, I64), ir.Constant(I64, 1))
    aligned = b.icmp_unsigned("==", b.and_(b.ptrtoint(data, I64), mask), ir.Constant(I64, 0))
    body.branch_unless(aligned, refuse)
    value = b.insert_value(b.load(src, typ=abi.DLTENSOR), data, abi.DATA)
    value = b.insert_value(value, ir.Constant(PTR, None), abi.STRIDES)
    b.store(b.insert_value(value, ir.Constant(I64, 0), abi.OFFSET), dst)


def release_owned(body: _Body, n: ir.Value) -> None:
    """Call the deleter of every managed tensor the call took (`body.owned`:
    pairs of tensor and deleter, the deleter NULL where nothing was taken)."""
    b = body.b
    loop = body.loop(n)
    slot = b.mul(loop.i, ir.Constant(I64, 2))
    deleter = b.load(body.at(body.owned, b.add(slot, ir.Constant(I64, 1))), typ=DELETER)
    with b.if_then(b.icmp_unsigned("!=", deleter, ir.Constant(PTR, None))):
        b.call(deleter, [b.load(body.at(body.owned, slot), typ=PTR)])
    body.close(loop)


def clear_owned(body: _Body, n: ir.Value) -> None:
    """Nothing taken yet: every deleter slot NULL."""
    b = body.b
    loop = body.loop(n)
    slot = b.add(b.mul(loop.i, ir.Constant(I64, 2)), ir.Constant(I64, 1))
    b.store(ir.Constant(PTR, None), body.at(body.owned, slot))
    body.close(loop)

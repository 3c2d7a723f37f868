"""The LLVM IR of a fast-call wrapper: a CPython `METH_FASTCALL` function that
turns plain NumPy arrays into DLTensors, calls one compiled entry, and wraps
its results as NumPy arrays that own their blocks.

    PyObject* wrapper(PyObject* fallback, PyObject* const* args, Py_ssize_t nargs)

Only the common case runs here: the right number of exact `numpy.ndarray`s of
the declared rank and dtype, native byte order, C-contiguous and aligned.
Anything else (lists, DLPack producers, strided views, subclasses, wrong rank
or dtype) goes to `fallback`, the Python path, which converts or raises the
same error it always has; shape and symbolic-dim checks happen inside the
entry either way, which reports them through the error buffer. Every address
the code needs (the entry, CPython and NumPy functions, the error class) is a
constant: a wrapper lives in the process that made it, never in a file.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from tvmlite.lowering.codegen import llvm_host_abi as abi

I8, I32, I64, PTR = abi.I8, abi.I32, abi.I64, abi.PTR
VOID = ir.VoidType()
ERROR_BYTES = 1024
DESTRUCTOR = "tvmlite_fastcall_release"
# PyArrayObject and PyArray_Descr field offsets (NumPy's stable C ABI; 64-bit);
# `fastcall.layout_ok()` checks them against live objects before any wrapper is used.
OB_TYPE, AR_DATA, AR_ND, AR_DIMS, AR_DESCR, AR_FLAGS = 8, 16, 24, 32, 56, 64
DESCR_BYTEORDER, DESCR_TYPE_NUM = 26, 28
TUPLE_ITEMS = 24  # offsetof(PyTupleObject, ob_item)
C_CONTIGUOUS_ALIGNED = 0x1 | 0x100
CARRAY_WRITEABLE = 0x1 | 0x100 | 0x400

FN_TYPES = {
    "entry": abi.ENTRY_TYPE,
    "save_thread": ir.FunctionType(PTR, []),
    "restore_thread": ir.FunctionType(VOID, [PTR]),
    "set_error": ir.FunctionType(VOID, [PTR, PTR]),
    "vectorcall": ir.FunctionType(PTR, [PTR, PTR, I64, PTR]),
    "descr_from_type": ir.FunctionType(PTR, [I32]),
    "new_from_descr": ir.FunctionType(PTR, [PTR, PTR, I32, PTR, PTR, PTR, I32, PTR]),
    "set_base": ir.FunctionType(I32, [PTR, PTR]),
    "capsule_new": ir.FunctionType(PTR, [PTR, PTR, PTR]),
    "capsule_pointer": ir.FunctionType(PTR, [PTR, PTR]),
    "decref": ir.FunctionType(VOID, [PTR]),
    "tuple_new": ir.FunctionType(PTR, [I64]),
}


@dataclass(frozen=True)
class ParamSpec:
    ndim: int
    type_nums: tuple[int, ...]  # NumPy type numbers of the dtype (int64 has two)
    packed_dtype: int  # DLDataType as code | bits << 8 | lanes << 16


@dataclass(frozen=True)
class WrapperSpec:
    params: tuple[ParamSpec, ...]
    out_type_nums: tuple[int, ...]
    as_tuple: bool
    addresses: dict[str, int]  # FN_TYPES names, "array_type", "error_class", "destructor"


def wrapper_module(spec: WrapperSpec, name: str = "tvmlite_fastcall") -> ir.Module:
    module = ir.Module(name=name)
    fn = ir.Function(module, ir.FunctionType(PTR, [PTR, PTR, I64]), name)
    _Wrapper(fn, spec).emit()
    return module


class _Wrapper:
    def __init__(self, fn: ir.Function, spec: WrapperSpec) -> None:
        self.fn, self.spec = fn, spec
        self.b = ir.IRBuilder(fn.append_basic_block("entry"))
        self.fallback = fn.append_basic_block("fallback")

    def const(self, name: str) -> ir.Value:
        address = ir.Constant(I64, self.spec.addresses[name])
        if name in FN_TYPES:
            return self.b.inttoptr(address, abi.FnPtr(FN_TYPES[name]))
        return self.b.inttoptr(address, PTR)

    def call(self, name: str, args: list[ir.Value]) -> ir.Value:
        return self.b.call(self.const(name), args)

    def load(self, base: ir.Value, offset: int, kind: ir.Type) -> ir.Value:
        return self.b.load(self.b.gep(base, [ir.Constant(I64, offset)], source_etype=I8), typ=kind)

    def guard(self, ok: ir.Value) -> None:
        """Continue when `ok`, else take the Python path."""
        self.branch_unless(ok, self.fallback)

    def emit(self) -> None:
        b, spec = self.b, self.spec
        self_, args, nargs = self.fn.args
        n, m = len(spec.params), len(spec.out_type_nums)
        tensors = b.alloca(abi.DLTENSOR, ir.Constant(I32, max(1, n)))
        pointers = b.alloca(PTR, ir.Constant(I32, max(1, n)))
        outs = b.alloca(PTR, ir.Constant(I32, max(1, m)))
        err = b.alloca(I8, ir.Constant(I32, ERROR_BYTES))
        self.guard(b.icmp_signed("==", nargs, ir.Constant(I64, n)))
        array_type = self.const("array_type")
        for k, p in enumerate(spec.params):
            arg = b.load(b.gep(args, [ir.Constant(I64, k)], source_etype=PTR), typ=PTR)
            self.guard(b.icmp_unsigned("==", self.load(arg, OB_TYPE, PTR), array_type))
            self.guard(b.icmp_signed("==", self.load(arg, AR_ND, I32), ir.Constant(I32, p.ndim)))
            descr = self.load(arg, AR_DESCR, PTR)
            num = self.load(descr, DESCR_TYPE_NUM, I32)
            ok = b.icmp_signed("==", num, ir.Constant(I32, p.type_nums[0]))
            for other in p.type_nums[1:]:
                ok = b.or_(ok, b.icmp_signed("==", num, ir.Constant(I32, other)))
            big_endian = ir.Constant(I8, ord(">"))
            ok = b.and_(
                ok, b.icmp_unsigned("!=", self.load(descr, DESCR_BYTEORDER, I8), big_endian)
            )
            flags = b.and_(self.load(arg, AR_FLAGS, I32), ir.Constant(I32, C_CONTIGUOUS_ALIGNED))
            self.guard(b.and_(ok, b.icmp_unsigned("==", flags, ir.Constant(I32, 0x101))))
            tensor = b.gep(tensors, [ir.Constant(I64, k)], source_etype=abi.DLTENSOR)
            self.fill(tensor, arg, p)
            b.store(tensor, b.gep(pointers, [ir.Constant(I64, k)], source_etype=PTR))
        for j in range(m):
            b.store(ir.Constant(PTR, None), b.gep(outs, [ir.Constant(I64, j)], source_etype=PTR))
        state = self.call("save_thread", [])
        status = self.call(
            "entry",
            [pointers, ir.Constant(I32, n), outs, ir.Constant(I32, m), err,
             ir.Constant(I64, ERROR_BYTES)],
        )  # fmt: skip
        self.call("restore_thread", [state])
        failed = self.fn.append_basic_block("failed")
        done = self.fn.append_basic_block("done")
        b.cbranch(b.icmp_signed("!=", status, ir.Constant(I32, 0)), failed, done)
        b.position_at_end(failed)
        self.call("set_error", [self.const("error_class"), err])
        b.ret(ir.Constant(PTR, None))
        b.position_at_end(done)
        self.results(outs)
        b.position_at_end(self.fallback)
        b.ret(self.call("vectorcall", [self_, args, nargs, ir.Constant(PTR, None)]))

    def fill(self, tensor: ir.Value, arg: ir.Value, p: ParamSpec) -> None:
        b = self.b
        dtype = p.packed_dtype
        value = ir.Constant(
            abi.DLTENSOR,
            [
                ir.Constant(PTR, None),
                ir.Constant(abi.DEVICE, [ir.Constant(I32, abi.KDL_CPU), ir.Constant(I32, 0)]),
                ir.Constant(I32, p.ndim),
                ir.Constant(
                    abi.DTYPE,
                    [
                        ir.Constant(I8, dtype & 0xFF),
                        ir.Constant(I8, (dtype >> 8) & 0xFF),
                        ir.Constant(abi.I16, dtype >> 16),
                    ],
                ),  # fmt: skip
                ir.Constant(PTR, None),
                ir.Constant(PTR, None),
                ir.Constant(I64, 0),
            ],
        )
        value = b.insert_value(value, self.load(arg, AR_DATA, PTR), abi.DATA)
        value = b.insert_value(value, self.load(arg, AR_DIMS, PTR), abi.SHAPE)
        b.store(value, tensor)

    def results(self, outs: ir.Value) -> None:
        """Wrap every block as an array; on a failure release what is left."""
        b, m = self.b, len(self.spec.out_type_nums)
        blocks = [
            b.load(b.gep(outs, [ir.Constant(I64, j)], source_etype=PTR), typ=PTR) for j in range(m)
        ]
        arrays: list[ir.Value] = []
        for j, num in enumerate(self.spec.out_type_nums):
            bad = self.fn.append_basic_block("wrap_failed")
            with b.goto_block(bad):
                for made in arrays:
                    self.call("decref", [made])
                for block in blocks[j + 1 :]:
                    self.release(block)
                b.ret(ir.Constant(PTR, None))
            arrays.append(self.wrap(blocks[j], num, bad))
        if not self.spec.as_tuple:
            b.ret(arrays[0])
            return
        result = self.call("tuple_new", [ir.Constant(I64, m)])
        bad = self.fn.append_basic_block("tuple_failed")
        cont = self.fn.append_basic_block("tuple_ok")
        b.cbranch(b.icmp_unsigned("==", result, ir.Constant(PTR, None)), bad, cont)
        b.position_at_end(bad)
        for made in arrays:
            self.call("decref", [made])
        b.ret(ir.Constant(PTR, None))
        b.position_at_end(cont)
        for j, array in enumerate(arrays):  # PyTuple_SET_ITEM: the tuple takes the reference
            slot = b.gep(result, [ir.Constant(I64, TUPLE_ITEMS + 8 * j)], source_etype=I8)
            b.store(array, slot)
        b.ret(result)

    def release(self, block: ir.Value) -> None:
        deleter = self.load(block, 16, abi.FnPtr(ir.FunctionType(VOID, [PTR])))
        self.b.call(deleter, [block])

    def wrap(self, block: ir.Value, type_num: int, fail: ir.Block) -> ir.Value:
        """A NumPy array over `block` (released with it); on a failure, release the
        block and branch to `fail` (a Python error is set)."""
        b = self.b
        t = b.gep(block, [ir.Constant(I64, abi.TENSOR_OFFSET)], source_etype=I8)
        data = abi.data_pointer(b, t)
        ndim = abi.load_field(b, t, abi.NDIM, I32)
        shape = abi.load_field(b, t, abi.SHAPE, PTR)
        descr = self.call("descr_from_type", [ir.Constant(I32, type_num)])
        null = ir.Constant(PTR, None)
        array = self.call(
            "new_from_descr",
            [self.const("array_type"), descr, ndim, shape, null, data,
             ir.Constant(I32, CARRAY_WRITEABLE), null],
        )  # fmt: skip
        no_array = self.fn.append_basic_block("no_array")
        with b.goto_block(no_array):
            self.release(block)
            b.branch(fail)
        self.branch_unless(b.icmp_unsigned("!=", array, null), no_array)
        capsule = self.call("capsule_new", [block, null, self.const("destructor")])
        no_capsule = self.fn.append_basic_block("no_capsule")
        with b.goto_block(no_capsule):
            self.call("decref", [array])
            self.release(block)
            b.branch(fail)
        self.branch_unless(b.icmp_unsigned("!=", capsule, null), no_capsule)
        status = self.call("set_base", [array, capsule])  # steals the capsule, also on failure
        no_base = self.fn.append_basic_block("no_base")
        with b.goto_block(no_base):
            self.call("decref", [array])
            b.branch(fail)
        self.branch_unless(b.icmp_signed("==", status, ir.Constant(I32, 0)), no_base)
        return array

    def branch_unless(self, ok: ir.Value, otherwise: ir.Block) -> None:
        cont = self.fn.append_basic_block("ok")
        self.b.cbranch(ok, cont, otherwise)
        self.b.position_at_end(cont)


def destructor_module(capsule_pointer: int) -> ir.Module:
    """`void tvmlite_fastcall_release(PyObject* capsule)`: call the block's DLPack
    deleter. Compiled once per process and never unloaded: result arrays may
    outlive every wrapper and executable."""
    module = ir.Module(name=DESTRUCTOR)
    fn = ir.Function(module, ir.FunctionType(VOID, [PTR]), DESTRUCTOR)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    address = ir.Constant(I64, capsule_pointer)
    get_pointer = b.inttoptr(address, abi.FnPtr(FN_TYPES["capsule_pointer"]))
    block = b.call(get_pointer, [fn.args[0], ir.Constant(PTR, None)])
    done = fn.append_basic_block("done")
    release = fn.append_basic_block("release")
    b.cbranch(b.icmp_unsigned("==", block, ir.Constant(PTR, None)), done, release)
    b.position_at_end(release)
    slot = b.gep(block, [ir.Constant(I64, 16)], source_etype=I8)
    deleter = b.load(slot, typ=abi.FnPtr(ir.FunctionType(VOID, [PTR])))
    b.call(deleter, [block])
    b.ret_void()
    b.position_at_end(done)
    b.ret_void()
    return module

"""The LLVM IR of fast-call wrappers (`runtime/fastcall.py`): for a graph
function whose signature takes them, a CPython `METH_FASTCALL` function that
turns plain NumPy arrays into DLTensors, calls the entry, and wraps its results
as NumPy arrays that own their blocks.

    PyObject* tvmlite_fastcall_NAME(PyObject* fallback, PyObject* const* args,
                                    Py_ssize_t nargs)

Only the common case runs here: the right number of exact `numpy.ndarray`s of
the declared rank and dtype, native byte order, C-contiguous and aligned.
Anything else (lists, DLPack producers, strided views, subclasses, wrong rank
or dtype) goes to `fallback`, the Python path, which converts or raises the
same error it always has; shape and symbolic-dim checks happen inside the
entry either way, which reports them through the error buffer.

The wrappers are part of the module, in the JIT and in exported libraries
alike, and hold no address of the process that compiled them: every CPython
and NumPy function and object they use is read from the module's table
`tvmlite_python_api` (slots in `fastcall.API_SLOTS` order), which the loader
fills before any wrapper runs. A C user of a library never calls them.
"""

from __future__ import annotations

from collections.abc import Mapping

from llvmlite import ir

from tvmlite.dsl import relax
from tvmlite.lowering.codegen import llvm_host_abi as abi
from tvmlite.lowering.codegen import llvm_types as ty
from tvmlite.runtime import fastcall as fc
from tvmlite.runtime.abi import ERROR_BYTES, PYTHON_API, entry_symbol, fastcall_symbol

I8, I32, I64, PTR = abi.I8, abi.I32, abi.I64, abi.PTR
VOID = ir.VoidType()
UNROLL = 16  # parameters up to which the wrapper's check loop is unrolled

FN_TYPES = {
    "save_thread": ir.FunctionType(PTR, []),
    "restore_thread": ir.FunctionType(VOID, [PTR]),
    "set_error": ir.FunctionType(VOID, [PTR, PTR]),
    "vectorcall": ir.FunctionType(PTR, [PTR, PTR, I64, PTR]),
    "descr_from_type": ir.FunctionType(PTR, [I32]),
    "new_from_descr": ir.FunctionType(PTR, [PTR, PTR, I32, PTR, PTR, PTR, I32, PTR]),
    "set_base": ir.FunctionType(I32, [PTR, PTR]),
    "capsule_new": ir.FunctionType(PTR, [PTR, PTR, PTR]),
    "decref": ir.FunctionType(VOID, [PTR]),
    "tuple_new": ir.FunctionType(PTR, [I64]),
    "clear_error": ir.FunctionType(VOID, []),
    "exchange_dltensor": ir.FunctionType(I32, [PTR, PTR]),
}
# DLTensor field offsets (dlpack.h; the struct `abi.DLTENSOR` describes).
T_DEVICE_TYPE, T_NDIM, T_DTYPE, T_SHAPE, T_STRIDES = 8, 16, 20, 24, 32


def add_fast_calls(module: ir.Module, graphs: Mapping[str, relax.Function]) -> None:
    """The API table, and a wrapper for every graph function whose signature
    `fastcall.wrapper_spec` accepts (the ones the manifest names), calling its
    entry, already in `module`."""
    slots = ir.ArrayType(PTR, len(fc.API_SLOTS))
    table = abi.global_var(module, slots, PYTHON_API)
    table.initializer = ir.Constant(slots, [None] * len(fc.API_SLOTS))
    for name, func in graphs.items():
        spec = fc.wrapper_spec(func.params, func.ret_struct_info)
        if spec is None:
            continue
        fnty = ir.FunctionType(PTR, [PTR, PTR, I64])
        fn = ir.Function(module, fnty, fastcall_symbol(name))
        _Wrapper(fn, spec, module.get_global(entry_symbol(name)), table).emit()


class _Wrapper:
    def __init__(
        self, fn: ir.Function, spec: fc.WrapperSpec, entry: ir.Function, table: ir.Value
    ) -> None:
        self.fn, self.spec, self.entry, self.table = fn, spec, entry, table
        self.b = ir.IRBuilder(fn.append_basic_block("entry"))
        self.fallback = fn.append_basic_block("fallback")

    def const(self, name: str) -> ir.Value:
        """The API table's slot `name`: a function pointer or an object's address."""
        offset = 8 * fc.API_SLOTS.index(name)
        kind = abi.FnPtr(FN_TYPES[name]) if name in FN_TYPES else PTR
        return self.load(self.table, offset, kind)

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
        self.step = b.alloca(I64)  # the compact stride of the next axis (foreign_tensor)
        self.guard(b.icmp_signed("==", nargs, ir.Constant(I64, n)))
        array_type = self.const("array_type")
        # One loop over a constant table of the parameters, not code per parameter:
        # a function of a thousand parameters gets a wrapper of the same size (LLVM's
        # time on one function grows faster than its size). The loop of a few
        # parameters is unrolled by request (builds unroll nothing unasked), so that
        # its table reads fold into constants, as code per parameter would have them.
        kind, table = self.param_table()
        loop = abi.Loop(b, ir.Constant(I64, 0), ir.Constant(I64, n), ir.Constant(I64, 1))
        k, row = loop.i, b.gep(table, [loop.i], source_etype=kind)

        def field(j: int) -> ir.Value:
            at = b.gep(row, [ir.Constant(I32, 0), ir.Constant(I32, j)], source_etype=kind)
            return b.load(at, typ=I32)

        arg = b.load(b.gep(args, [k], source_etype=PTR), typ=PTR)
        tensor = b.gep(tensors, [k], source_etype=abi.DLTENSOR)
        ndim, ob_type = field(0), self.load(arg, fc.OB_TYPE, PTR)
        numpy, foreign = self.fn.append_basic_block("numpy"), self.fn.append_basic_block("foreign")
        filled = self.fn.append_basic_block("filled")
        b.cbranch(b.icmp_unsigned("==", ob_type, array_type), numpy, foreign)
        b.position_at_end(foreign)
        self.guard(b.icmp_unsigned("==", ob_type, self.const("exchange_type")))
        self.foreign_tensor(tensor, arg, ndim, field(1))
        b.branch(filled)
        b.position_at_end(numpy)
        self.guard(b.icmp_signed("==", self.load(arg, fc.AR_ND, I32), ndim))
        descr = self.load(arg, fc.AR_DESCR, PTR)
        num = self.load(descr, fc.DESCR_TYPE_NUM, I32)
        ok = b.icmp_signed("==", num, field(2))
        for j in range(3, len(kind.elements)):
            ok = b.or_(ok, b.icmp_signed("==", num, field(j)))
        big_endian = ir.Constant(I8, ord(">"))
        ok = b.and_(ok, b.icmp_unsigned("!=", self.load(descr, fc.DESCR_BYTEORDER, I8), big_endian))
        flags = b.and_(self.load(arg, fc.AR_FLAGS, I32), ir.Constant(I32, fc.C_CONTIGUOUS_ALIGNED))
        self.guard(b.and_(ok, b.icmp_unsigned("==", flags, ir.Constant(I32, 0x101))))
        self.fill(tensor, arg, ndim, field(1))
        b.branch(filled)
        b.position_at_end(filled)
        b.store(tensor, b.gep(pointers, [k], source_etype=PTR))
        loop.close(ty.loop_hint(self.fn.module, "llvm.loop.unroll.full") if n <= UNROLL else None)
        for j in range(m):
            b.store(ir.Constant(PTR, None), b.gep(outs, [ir.Constant(I64, j)], source_etype=PTR))
        state = self.call("save_thread", [])
        status = self.b.call(
            self.entry,
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

    def param_table(self) -> tuple[ir.LiteralStructType, ir.Value]:
        """A private constant array, one record per parameter: its rank, its
        packed DLDataType, then the NumPy type numbers its arrays may have (padded
        with the first: int64 has two)."""
        params = self.spec.params
        width = max((len(p.type_nums) for p in params), default=1)
        kind = ir.LiteralStructType([I32] * (2 + width))
        rows = [
            [p.ndim, abi.packed_dtype(p.dtype), *p.type_nums]
            + [p.type_nums[0]] * (width - len(p.type_nums))
            for p in params
        ]
        items = [ir.Constant(kind, [ir.Constant(I32, v) for v in row]) for row in rows]
        array = ir.ArrayType(kind, max(1, len(items)))
        table = abi.global_var(self.fn.module, array, f"{self.fn.name}.params")
        table.initializer = ir.Constant(array, items or [ir.Constant(kind, None)])
        table.global_constant = True
        table.linkage = "private"
        return kind, table

    def foreign_tensor(
        self, tensor: ir.Value, arg: ir.Value, ndim: ir.Value, dtype: ir.Value
    ) -> None:
        """Let the served producer type fill `tensor` (a view it keeps valid while
        `arg` lives), then take it only as the NumPy path would take the array:
        on the CPU, of rank `ndim` and packed DLDataType `dtype`, compact (size-1
        axes may have any stride), aligned; its byte offset folded into the data
        pointer. Anything else goes to the Python path, which reports it."""
        b = self.b
        status = self.call("exchange_dltensor", [arg, tensor])
        refused = self.fn.append_basic_block("producer_refused")
        with b.goto_block(refused):
            self.call("clear_error", [])  # the Python path asks again and reports
            b.branch(self.fallback)
        self.branch_unless(b.icmp_signed("==", status, ir.Constant(I32, 0)), refused)
        cpu = ir.Constant(I32, abi.KDL_CPU)
        ok = b.icmp_signed("==", self.load(tensor, T_DEVICE_TYPE, I32), cpu)
        ok = b.and_(ok, b.icmp_signed("==", self.load(tensor, T_NDIM, I32), ndim))
        self.guard(b.and_(ok, b.icmp_signed("==", self.load(tensor, T_DTYPE, I32), dtype)))
        shape, strides = self.load(tensor, T_SHAPE, PTR), self.load(tensor, T_STRIDES, PTR)
        strided, compact = (
            self.fn.append_basic_block("strided"),
            self.fn.append_basic_block("compact"),
        )
        b.cbranch(b.icmp_unsigned("==", strides, ir.Constant(PTR, None)), compact, strided)
        b.position_at_end(strided)
        b.store(ir.Constant(I64, 1), self.step)
        rank = b.sext(ndim, I64)
        axes = abi.Loop(b, ir.Constant(I64, 0), rank, ir.Constant(I64, 1))
        axis = b.sub(b.sub(rank, ir.Constant(I64, 1)), axes.i)  # the last axis first
        extent = b.load(b.gep(shape, [axis], source_etype=I64), typ=I64)
        stride = b.load(b.gep(strides, [axis], source_etype=I64), typ=I64)
        step = b.load(self.step, typ=I64)
        one = b.icmp_signed("==", extent, ir.Constant(I64, 1))
        self.guard(b.or_(one, b.icmp_signed("==", stride, step)))
        b.store(b.mul(step, extent), self.step)
        axes.close()
        b.branch(compact)
        b.position_at_end(compact)
        data = abi.data_pointer(b, tensor)
        item = b.lshr(b.and_(dtype, ir.Constant(I32, 0xFF00)), ir.Constant(I32, 11))  # bytes
        mask = b.sub(b.zext(item, I64), ir.Constant(I64, 1))
        self.guard(b.icmp_unsigned("==", b.and_(b.ptrtoint(data, I64), mask), ir.Constant(I64, 0)))
        value = b.insert_value(b.load(tensor, typ=abi.DLTENSOR), data, abi.DATA)
        value = b.insert_value(value, ir.Constant(PTR, None), abi.STRIDES)
        b.store(b.insert_value(value, ir.Constant(I64, 0), abi.OFFSET), tensor)

    def fill(self, tensor: ir.Value, arg: ir.Value, ndim: ir.Value, dtype: ir.Value) -> None:
        """The DLTensor at `tensor` over array `arg`, of rank `ndim` and packed
        DLDataType `dtype` (code | bits << 8 | lanes << 16)."""
        b = self.b
        value = ir.Constant(
            abi.DLTENSOR,
            [
                ir.Constant(PTR, None),
                ir.Constant(abi.DEVICE, [ir.Constant(I32, abi.KDL_CPU), ir.Constant(I32, 0)]),
                ir.Constant(I32, 0),
                ir.Constant(abi.DTYPE, None),
                ir.Constant(PTR, None),
                ir.Constant(PTR, None),
                ir.Constant(I64, 0),
            ],
        )
        parts = ir.Constant(abi.DTYPE, None)
        for j, (shift, typ) in enumerate(((0, I8), (8, I8), (16, abi.I16))):
            part = b.trunc(b.lshr(dtype, ir.Constant(I32, shift)), typ)
            parts = b.insert_value(parts, part, j)
        value = b.insert_value(value, ndim, abi.NDIM)
        value = b.insert_value(value, parts, abi.DT)
        value = b.insert_value(value, self.load(arg, fc.AR_DATA, PTR), abi.DATA)
        value = b.insert_value(value, self.load(arg, fc.AR_DIMS, PTR), abi.SHAPE)
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
            slot = b.gep(result, [ir.Constant(I64, fc.TUPLE_ITEMS + 8 * j)], source_etype=I8)
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
             ir.Constant(I32, fc.CARRAY_WRITEABLE), null],
        )  # fmt: skip
        no_array = self.fn.append_basic_block("no_array")
        with b.goto_block(no_array):
            self.release(block)
            b.branch(fail)
        self.branch_unless(b.icmp_unsigned("!=", array, null), no_array)
        name, destructor = self.const("capsule_name"), self.const("capsule_destructor")
        capsule = self.call("capsule_new", [block, name, destructor])
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

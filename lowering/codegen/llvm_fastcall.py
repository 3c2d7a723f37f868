"""The LLVM IR of fast-call wrappers (`runtime/fastcall.py`): for a graph
function whose signature takes them, a CPython `METH_FASTCALL` function that
turns plain NumPy arrays into DLTensors, calls the entry, and wraps its results
as NumPy arrays that own their blocks.

    PyObject* wrapper(PyObject* self, PyObject* const* args, Py_ssize_t nargs)

Only the common case runs here: the right number of arguments, each an exact
`numpy.ndarray` of the declared rank and dtype, native byte order, C-contiguous
and aligned, or another library's tensor under the same conditions, read
through DLPack (`llvm_fastcall_foreign.py`: the C exchange API of the one type
the module serves, else the producer's `__dlpack__` capsule). Anything else
(lists, strided views, wrong rank or dtype, other devices, producers that
raise) goes to the fallback, the Python path, which converts or raises the
same error it always has; shape and symbolic-dim checks happen inside the
entry either way, which reports them through the error buffer. A wrapper's
`self` may end with `convert`, which it hands every result array to
(`with_output("torch")`: `torch.from_numpy`).

One body does the work for every function of a module (private
`tvmlite_fastcall.body`), reading what differs from a constant record per
function: its entry, its parameters' ranks, dtypes and NumPy type numbers, its
results' type numbers. Which function CPython calls depends on the module:

- a small one (`SMALL_MODULE` graph functions or fewer) has a wrapper per
  function, `tvmlite_fastcall_NAME`, whose `self` is (fallback[, convert]): a stub that
  makes room for the DLTensors and calls the body, inlined, with its record,
  where the record's reads fold into constants and its short loops unroll (the
  code of a wrapper written for the one function, for the calls whose
  overhead shows);
- a large one has one wrapper, `tvmlite_fastcall`, for all: its `self` is
  (fallback, capsule of the function's record[, convert]), the records one exported
  table, `tvmlite_fastcall_records`. Thousands of stubs were the larger part of
  such a module's machine-code time.

The wrappers are part of the module, in the JIT and in exported libraries
alike, and hold no address of the process that compiled them: every CPython
and NumPy function and object they use is read from the module's table
`tvmlite_python_api` (slots in `fastcall.API_SLOTS` order), which the loader
fills before any wrapper runs. A C user of a library never calls them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from llvmlite import ir

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import relax
from tvmlite.lowering.codegen import llvm_fastcall_foreign as foreign
from tvmlite.lowering.codegen import llvm_host_abi as abi
from tvmlite.lowering.codegen import llvm_types as ty
from tvmlite.lowering.codegen.llvm_host_module import SMALL_MODULE
from tvmlite.runtime import fastcall as fc
from tvmlite.runtime.abi import (
    ERROR_BYTES,
    FASTCALL_RECORDS,
    PYTHON_API,
    SHARED_FASTCALL,
    entry_symbol,
    fastcall_symbol,
)

I8, I32, I64, PTR = abi.I8, abi.I32, abi.I64, abi.PTR
VOID = ir.VoidType()
UNROLL = 16  # parameters up to which an inlined body's loops are unrolled
BODY = "tvmlite_fastcall.body"  # private; the dot keeps it off any symbol a name makes

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
    "vectorcall_method": ir.FunctionType(PTR, [PTR, PTR, I64, PTR]),
    "exception_matches": ir.FunctionType(I32, [PTR]),
    "type_lookup": ir.FunctionType(PTR, [PTR, PTR]),
    "capsule_is_valid": ir.FunctionType(I32, [PTR, PTR]),
    "capsule_pointer": ir.FunctionType(PTR, [PTR, PTR]),
    "capsule_set_name": ir.FunctionType(I32, [PTR, PTR]),
}
ENTRY = ir.FunctionType(I32, [PTR, I32, PTR, I32, PTR, I64])
# A function's record: its entry, its parameter table, its results' NumPy type
# numbers (i32 each), the counts of parameters and results, whether the results
# come back as a tuple.
RECORD = ir.LiteralStructType([PTR, PTR, PTR, I32, I32, I32])
ENTRY_FIELD, PARAMS_FIELD, OUTS_FIELD, N_FIELD, M_FIELD, TUPLE_FIELD = range(6)
ROW_FIXED = 3  # a parameter row: rank, packed dtype, NumPy flags, then type numbers
# Wrapper -> body: fallback, args, nargs, record, convert (or NULL), DLTensors, their
# pointers, the managed tensors taken from capsules (a tensor and its deleter
# each), result blocks.
BODY_TYPE = ir.FunctionType(PTR, [PTR, PTR, I64, PTR, PTR, PTR, PTR, PTR, PTR])
WRAPPER_TYPE = ir.FunctionType(PTR, [PTR, PTR, I64])  # METH_FASTCALL: self, args, nargs


def add_fast_calls(
    module: ir.Module,
    graphs: Mapping[str, relax.Function],
    written: Mapping[str, frozenset[int]],
) -> dict[str, dict[str, Any]]:
    """The API table, and a wrapper for every graph function whose signature
    `fastcall.wrapper_spec` accepts, calling its entry, already in `module`
    (`written`: the parameters each writes in place).
    Returns what the manifest says of each served function: the symbol of its
    own wrapper (`fastcall`) or its index in the shared wrapper's records
    (`fastcall_record`)."""
    slots = ir.ArrayType(PTR, len(fc.API_SLOTS))
    table = abi.global_var(module, slots, PYTHON_API)
    table.initializer = ir.Constant(slots, [None] * len(fc.API_SLOTS))
    specs = {}
    for name, func in graphs.items():
        spec = fc.wrapper_spec(func.params, func.ret_struct_info, written[name])
        if spec is not None:
            specs[name] = spec
    if not specs:
        return {}
    # Every parameter row holds as many type numbers as the most any has (int64 has two).
    width = max((len(p.type_nums) for s in specs.values() for p in s.params), default=1)
    small = len(graphs) <= SMALL_MODULE
    unroll = small and all(len(s.params) <= UNROLL for s in specs.values())
    body = _Body(module, table, width, unroll).emit()
    tables = _Tables(module, width)
    if small:
        for name, spec in specs.items():
            record = _private(module, f"{fastcall_symbol(name)}.record", RECORD)
            record.initializer = tables.record(name, spec)
            _stub(module, fastcall_symbol(name), spec, body, record)
        return {name: {"fastcall": fastcall_symbol(name)} for name in specs}
    _claim(module, FASTCALL_RECORDS)
    records = abi.global_var(module, ir.ArrayType(RECORD, len(specs)), FASTCALL_RECORDS)
    records.initializer = ir.Constant(
        records.value_type, [tables.record(name, spec) for name, spec in specs.items()]
    )
    records.global_constant = True
    _shared(module, body)
    return {name: {"fastcall_record": k} for k, name in enumerate(specs)}


def _stub(module: ir.Module, symbol: str, spec: fc.WrapperSpec, body: ir.Function,
          record: ir.Value) -> None:  # fmt: skip
    """A function's own wrapper: room for its DLTensors, and the body on its record
    (inlined, the record's reads fold into constants). Its `self` is the tuple
    (fallback[, convert])."""
    fn = ir.Function(module, WRAPPER_TYPE, symbol)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    state, args, nargs = fn.args
    fallback, convert = _state(b, state, 1)
    n = ir.Constant(I32, max(1, len(spec.params)))
    m = ir.Constant(I32, max(1, len(spec.out_type_nums)))
    tensors, pointers, outs = b.alloca(abi.DLTENSOR, n), b.alloca(PTR, n), b.alloca(PTR, m)
    owned = b.alloca(PTR, ir.Constant(I32, 2 * max(1, len(spec.params))))
    b.ret(b.call(body, [fallback, args, nargs, record, convert, tensors, pointers, owned, outs]))


def _shared(module: ir.Module, body: ir.Function) -> None:
    """`tvmlite_fastcall`, the wrapper of every function of a large module. Its
    `self` is the tuple (fallback, capsule of the function's record[, convert])
    (`fastcall.fast_builtin`); its DLTensors get room as the record says."""
    _claim(module, SHARED_FASTCALL)
    fn = ir.Function(module, WRAPPER_TYPE, SHARED_FASTCALL)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    state, args, nargs = fn.args
    fallback, convert = _state(b, state, 2)
    capsule = _load(b, state, fc.TUPLE_ITEMS + 8, PTR)
    record = _load(b, capsule, fc.CAPSULE_POINTER, PTR)

    def count(index: int) -> ir.Value:
        at = b.gep(record, [ir.Constant(I32, 0), ir.Constant(I32, index)], source_etype=RECORD)
        return b.load(at, typ=I32)

    n, m = count(N_FIELD), count(M_FIELD)
    tensors, pointers, outs = b.alloca(abi.DLTENSOR, n), b.alloca(PTR, n), b.alloca(PTR, m)
    owned = b.alloca(PTR, b.mul(n, ir.Constant(I32, 2)))
    b.ret(b.call(body, [fallback, args, nargs, record, convert, tensors, pointers, owned, outs]))


def _load(b: ir.IRBuilder, base: ir.Value, offset: int, kind: ir.Type) -> ir.Value:
    return b.load(b.gep(base, [ir.Constant(I64, offset)], source_etype=I8), typ=kind)


def _state(b: ir.IRBuilder, state: ir.Value, items: int) -> tuple[ir.Value, ir.Value]:
    """(fallback, convert or NULL) of a wrapper's `self`, a tuple of `items`
    fields, and `convert` after them when results are converted."""
    fallback = _load(b, state, fc.TUPLE_ITEMS, PTR)
    size = _load(b, state, fc.TUPLE_SIZE, I64)
    converts = b.icmp_signed("==", size, ir.Constant(I64, items + 1))
    # Without a branch (a stub stays straight-line code) and reading only items
    # the tuple has: item `items` when it exists, else item 0, unused.
    index = b.select(converts, ir.Constant(I64, items), ir.Constant(I64, 0))
    items_at = b.gep(state, [ir.Constant(I64, fc.TUPLE_ITEMS)], source_etype=I8)
    last = b.load(b.gep(items_at, [index], source_etype=PTR), typ=PTR)
    return fallback, b.select(converts, last, ir.Constant(PTR, None))


def _claim(module: ir.Module, symbol: str) -> None:
    """Refuse a prim function whose kernel symbol is `symbol`."""
    if symbol in module.globals:
        raise TVMLiteError(
            f"a prim function's symbol {symbol} is the fast-call wrapper's of a module of "
            f"more than {SMALL_MODULE} graph functions: rename the prim function"
        )


def _private(module: ir.Module, name: str, kind: ir.Type) -> ir.GlobalVariable:
    g = abi.global_var(module, kind, name)
    g.global_constant = True
    g.linkage = "private"
    return g


class _Tables:
    """Functions' records, and the constant tables they point at, one for each
    distinct content (alike functions share them)."""

    def __init__(self, module: ir.Module, width: int) -> None:
        self.module, self.width = module, width
        self.row = ir.LiteralStructType([I32] * (ROW_FIXED + width))
        self.made: dict[tuple, ir.Value] = {}

    def record(self, name: str, spec: fc.WrapperSpec) -> ir.Constant:
        """What the body reads of function `name`: its entry, its tables, counts."""
        symbol = fastcall_symbol(name)
        return ir.Constant(
            RECORD,
            [
                self.module.get_global(entry_symbol(name)),
                self.params(symbol, spec.params),
                self.outs(symbol, spec.out_type_nums),
                ir.Constant(I32, len(spec.params)),
                ir.Constant(I32, len(spec.out_type_nums)),
                ir.Constant(I32, int(spec.as_tuple)),
            ],
        )

    def params(self, symbol: str, params: tuple[fc.ParamSpec, ...]) -> ir.Value:
        """One record per parameter: its rank, its packed DLDataType, the NumPy
        flags its arrays must have, then the NumPy type numbers they may have
        (padded with the first)."""
        rows = tuple(
            (p.ndim, abi.packed_dtype(p.dtype), p.flags, *p.type_nums)
            + (p.type_nums[0],) * (self.width - len(p.type_nums))
            for p in params
        )
        return self.table(f"{symbol}.params", self.row, rows)

    def outs(self, symbol: str, type_nums: tuple[int, ...]) -> ir.Value:
        return self.table(f"{symbol}.outs", I32, tuple((t,) for t in type_nums))

    def table(self, name: str, kind: ir.Type, rows: tuple[tuple[int, ...], ...]) -> ir.Value:
        key = (str(kind), rows)
        if key not in self.made:

            def item(row: tuple[int, ...]) -> ir.Constant:
                if kind == I32:
                    return ir.Constant(I32, row[0])
                return ir.Constant(kind, [ir.Constant(I32, v) for v in row])

            items = [item(row) for row in rows] or [ir.Constant(kind, None)]
            array = ir.ArrayType(kind, len(items))
            g = _private(self.module, name, array)
            g.initializer = ir.Constant(array, items)
            self.made[key] = g
        return self.made[key]


class Emitter:
    """The IR of one function of the fast-call code: reads of the API table,
    loops, the block that gives up (`fallback`), scratch room on the stack."""

    def __init__(self, module: ir.Module, table: ir.Value, fn: ir.Function, unroll: bool) -> None:
        self.module, self.table, self.fn, self.unroll = module, table, fn, unroll
        self.b = ir.IRBuilder(fn.append_basic_block("entry"))
        self.fallback = fn.append_basic_block("fallback")
        self.step = self.b.alloca(I64)  # the compact stride of the next axis (foreign.accept)
        self.call_args = self.b.alloca(PTR, ir.Constant(I32, 2))  # of `__dlpack__`, `convert`

    def const(self, name: str) -> ir.Value:
        """The API table's slot `name`: a function pointer or an object's address."""
        offset = 8 * fc.API_SLOTS.index(name)
        kind = abi.FnPtr(FN_TYPES[name]) if name in FN_TYPES else PTR
        return self.load(self.table, offset, kind)

    def call(self, name: str, args: list[ir.Value]) -> ir.Value:
        return self.b.call(self.const(name), args)

    def load(self, base: ir.Value, offset: int, kind: ir.Type) -> ir.Value:
        return self.b.load(self.b.gep(base, [ir.Constant(I64, offset)], source_etype=I8), typ=kind)

    def at(self, base: ir.Value, index: ir.Value) -> ir.Value:
        """The address of pointer `index` of array `base`."""
        return self.b.gep(base, [index], source_etype=PTR)

    def loop(self, stop: ir.Value, start: ir.Value | None = None) -> abi.Loop:
        return abi.Loop(self.b, start or ir.Constant(I64, 0), stop, ir.Constant(I64, 1))

    def close(self, loop: abi.Loop) -> None:
        """End `loop`; in an inlined body of few parameters, unrolled (builds
        unroll nothing unasked), so that its table reads fold into constants."""
        loop.close(ty.loop_hint(self.module, "llvm.loop.unroll.full") if self.unroll else None)

    def branch_unless(self, ok: ir.Value, otherwise: ir.Block) -> None:
        cont = self.fn.append_basic_block("ok")
        self.b.cbranch(ok, cont, otherwise)
        self.b.position_at_end(cont)


class _Body(Emitter):
    """The one wrapper body of a module, `tvmlite_fastcall`; producers' capsules
    are read by a function of their own (`foreign.define_capsule_reader`), kept
    out of line: it runs only for them, and after a Python call anyway."""

    def __init__(self, module: ir.Module, table: ir.Value, width: int, unroll: bool) -> None:
        fn = ir.Function(module, BODY_TYPE, BODY)
        fn.linkage = "private"
        fn.attributes.add("alwaysinline")  # into every stub, or the one shared wrapper
        super().__init__(module, table, fn, unroll)
        self.width = width
        reader = ir.Function(module, foreign.CAPSULE_READER_TYPE, foreign.CAPSULE_READER)
        reader.linkage = "private"
        reader.attributes.add("noinline")
        self.capsule_reader = foreign.define_capsule_reader(Emitter(module, table, reader, False))

    def guard(self, ok: ir.Value) -> None:
        """Continue when `ok`, else take the Python path."""
        self.branch_unless(ok, self.fallback)

    def emit(self) -> ir.Function:
        b = self.b
        fallback, args, nargs, record, convert, self.tensors, pointers, self.owned, outs = (
            self.fn.args
        )

        def field(index: int, kind: ir.Type) -> ir.Value:
            at = b.gep(record, [ir.Constant(I32, 0), ir.Constant(I32, index)], source_etype=RECORD)
            return b.load(at, typ=kind)

        entry, params = field(ENTRY_FIELD, abi.FnPtr(ENTRY)), field(PARAMS_FIELD, PTR)
        out_nums, as_tuple = field(OUTS_FIELD, PTR), field(TUPLE_FIELD, I32)
        n, m = b.sext(field(N_FIELD, I32), I64), b.sext(field(M_FIELD, I32), I64)
        err = b.alloca(I8, ir.Constant(I32, ERROR_BYTES))
        foreign.clear_owned(self, n)
        self.guard(b.icmp_signed("==", nargs, n))
        self.check(args, n, params, pointers)
        loop = self.loop(m)
        b.store(ir.Constant(PTR, None), self.at(outs, loop.i))
        self.close(loop)
        state = self.call("save_thread", [])
        n32, m32 = b.trunc(n, I32), b.trunc(m, I32)
        status = b.call(entry, [pointers, n32, outs, m32, err, ir.Constant(I64, ERROR_BYTES)])
        self.call("restore_thread", [state])
        foreign.release_owned(self, n)
        failed = self.fn.append_basic_block("failed")
        done = self.fn.append_basic_block("done")
        b.cbranch(b.icmp_signed("!=", status, ir.Constant(I32, 0)), failed, done)
        b.position_at_end(failed)
        self.call("set_error", [self.const("error_class"), err])
        b.ret(ir.Constant(PTR, None))
        b.position_at_end(done)
        self.results(outs, m, out_nums, as_tuple, convert)
        b.position_at_end(self.fallback)
        foreign.release_owned(self, n)
        b.ret(self.call("vectorcall", [fallback, args, nargs, ir.Constant(PTR, None)]))
        return self.fn

    def check(self, args: ir.Value, n: ir.Value, params: ir.Value, pointers: ir.Value) -> None:
        """Every argument an array (or another library's tensor, `foreign`) as
        its parameter's row says, described as a DLTensor."""
        b = self.b
        row_kind = ir.LiteralStructType([I32] * (ROW_FIXED + self.width))
        array_type = self.const("array_type")
        loop = self.loop(n)
        k = loop.i
        row = b.gep(params, [k], source_etype=row_kind)

        def field(j: int) -> ir.Value:
            at = b.gep(row, [ir.Constant(I32, 0), ir.Constant(I32, j)], source_etype=row_kind)
            return b.load(at, typ=I32)

        arg = b.load(self.at(args, k), typ=PTR)
        tensor = b.gep(self.tensors, [k], source_etype=abi.DLTENSOR)
        ndim, ob_type, need = field(0), self.load(arg, fc.OB_TYPE, PTR), field(2)
        numpy, other = self.fn.append_basic_block("numpy"), self.fn.append_basic_block("other")
        filled = self.fn.append_basic_block("filled")
        b.cbranch(b.icmp_unsigned("==", ob_type, array_type), numpy, other)
        b.position_at_end(other)
        foreign.read_foreign(self, k, arg, ob_type, ndim, field(1), need)
        b.branch(filled)
        b.position_at_end(numpy)
        self.guard(b.icmp_signed("==", self.load(arg, fc.AR_ND, I32), ndim))
        descr = self.load(arg, fc.AR_DESCR, PTR)
        num = self.load(descr, fc.DESCR_TYPE_NUM, I32)
        ok = b.icmp_signed("==", num, field(ROW_FIXED))
        for j in range(ROW_FIXED + 1, ROW_FIXED + self.width):
            ok = b.or_(ok, b.icmp_signed("==", num, field(j)))
        big_endian = ir.Constant(I8, ord(">"))
        ok = b.and_(ok, b.icmp_unsigned("!=", self.load(descr, fc.DESCR_BYTEORDER, I8), big_endian))
        flags = b.and_(self.load(arg, fc.AR_FLAGS, I32), need)
        self.guard(b.and_(ok, b.icmp_unsigned("==", flags, need)))
        self.fill(tensor, arg, ndim, field(1))
        b.branch(filled)
        b.position_at_end(filled)
        b.store(tensor, self.at(pointers, k))
        self.close(loop)

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

    def results(
        self, outs: ir.Value, m: ir.Value, out_nums: ir.Value, as_tuple: ir.Value, convert: ir.Value
    ) -> None:
        """Wrap every block as an array (as `convert(array)` unless `convert` is
        NULL), in its place in `outs`; on a failure at result j, release the
        results before it and the blocks after it."""
        b = self.b
        loop = self.loop(m)
        j = loop.i
        bad = self.fn.append_basic_block("wrap_failed")
        num = b.load(b.gep(out_nums, [j], source_etype=I32), typ=I32)
        array = self.wrap(b.load(self.at(outs, j), typ=PTR), num, bad)
        b.store(self.converted(array, convert, bad), self.at(outs, j))
        self.close(loop)
        with b.goto_block(bad):
            self.release_from(outs, ir.Constant(I64, 0), j, "decref")
            self.release_from(outs, b.add(j, ir.Constant(I64, 1)), m, "")
            b.ret(ir.Constant(PTR, None))
        single = self.fn.append_basic_block("single")
        many = self.fn.append_basic_block("tuple")
        b.cbranch(b.icmp_signed("==", as_tuple, ir.Constant(I32, 0)), single, many)
        b.position_at_end(single)
        b.ret(b.load(outs, typ=PTR))
        b.position_at_end(many)
        result = self.call("tuple_new", [m])
        no_tuple = self.fn.append_basic_block("tuple_failed")
        with b.goto_block(no_tuple):
            self.release_from(outs, ir.Constant(I64, 0), m, "decref")
            b.ret(ir.Constant(PTR, None))
        self.branch_unless(b.icmp_unsigned("!=", result, ir.Constant(PTR, None)), no_tuple)
        items = b.gep(result, [ir.Constant(I64, fc.TUPLE_ITEMS)], source_etype=I8)
        loop = self.loop(m)  # PyTuple_SET_ITEM: the tuple takes the references
        b.store(b.load(self.at(outs, loop.i), typ=PTR), self.at(items, loop.i))
        self.close(loop)
        b.ret(result)

    def converted(self, array: ir.Value, convert: ir.Value, fail: ir.Block) -> ir.Value:
        """`convert(array)` (the array let go), or `array` when `convert` is NULL;
        on a failure, branch to `fail` (a Python error is set)."""
        b = self.b
        start = b.block
        call, join = self.fn.append_basic_block("convert"), self.fn.append_basic_block("converted")
        b.cbranch(b.icmp_unsigned("==", convert, ir.Constant(PTR, None)), join, call)
        b.position_at_end(call)
        b.store(array, self.call_args)
        one, null = ir.Constant(I64, 1), ir.Constant(PTR, None)
        result = self.call("vectorcall", [convert, self.call_args, one, null])
        self.call("decref", [array])
        self.branch_unless(b.icmp_unsigned("!=", result, null), fail)
        end = b.block
        b.branch(join)
        b.position_at_end(join)
        phi = b.phi(PTR)
        phi.add_incoming(array, start)
        phi.add_incoming(result, end)
        return phi

    def release_from(self, outs: ir.Value, start: ir.Value, stop: ir.Value, how: str) -> None:
        """Let go of `outs[start:stop]`: arrays (`how` "decref") or result blocks."""
        loop = self.loop(stop, start)
        item = self.b.load(self.at(outs, loop.i), typ=PTR)
        if how == "decref":
            self.call("decref", [item])
        else:
            self.release(item)
        loop.close()  # a failure path: cold, and its bounds need not fold to constants

    def release(self, block: ir.Value) -> None:
        deleter = self.load(block, 16, abi.FnPtr(ir.FunctionType(VOID, [PTR])))
        self.b.call(deleter, [block])

    def wrap(self, block: ir.Value, type_num: ir.Value, fail: ir.Block) -> ir.Value:
        """A NumPy array over `block` (released with it); on a failure, release the
        block and branch to `fail` (a Python error is set)."""
        b = self.b
        t = b.gep(block, [ir.Constant(I64, abi.TENSOR_OFFSET)], source_etype=I8)
        data = abi.data_pointer(b, t)
        ndim = abi.load_field(b, t, abi.NDIM, I32)
        shape = abi.load_field(b, t, abi.SHAPE, PTR)
        descr = self.call("descr_from_type", [type_num])
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

"""Expressions of lowered TIR as LLVM values, and buffer element access.

Bound variables (params, lets, loop vars, data pointers) live in `self.vars` as
SSA values: TIR bindings are immutable, so no stack slots are needed. Buffer
accesses take a flat int64 index (FlattenBuffers made sure); a `Ramp` index with
stride 1 is one vector load/store, any other vector index is done lane by lane.
"""

from __future__ import annotations

from llvmlite import ir

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import dtype as dt
from tvmlite.dsl import tir
from tvmlite.dsl.tir_functor import TIRFunctor
from tvmlite.lowering.codegen import llvm_types as ty
from tvmlite.lowering.codegen.llvm_arith import Arith
from tvmlite.lowering.codegen.llvm_math import CallEmitter, check_lane_count

Value = ir.Value


class ExprEmitter(TIRFunctor):
    """Emits expressions at `self.b`'s position; holds the arithmetic (`arith`:
    operators and casts) and the intrinsic calls (`calls`) it uses."""

    # Codegen (this file, llvm_math and the host emitter) calls the dispatch `expr`.
    expr = TIRFunctor.visit_expr

    def __init__(self, module: ir.Module, builder: ir.IRBuilder) -> None:
        self.module = module
        self.b = builder
        self.vars: dict[tir.Var, Value] = {}
        self.arith = Arith(module, builder)
        self.calls = CallEmitter(self)

    def int64(self, e: tir.PrimExpr) -> Value:
        """The value of `e` as an int64 (a dim, an index, a count)."""
        return self.arith.cast(self.expr(e), e.dtype, "int64")

    # ------------------------------------------------------------ leaves

    def visit_Var(self, e: tir.Var) -> Value:
        value = self.vars.get(e)
        if value is None:
            raise TVMLiteError(
                f"variable '{e.name}' has no value here: it is free (declared with "
                f"`{e.name} = T.{e.dtype}()` and never bound) or used outside its scope"
            )
        return value

    def visit_IntImm(self, e: tir.IntImm) -> Value:
        return ty.constant(e.dtype, e.value)

    def visit_FloatImm(self, e: tir.FloatImm) -> Value:
        return ty.constant(e.dtype, e.value)

    def visit_StringImm(self, e: tir.StringImm) -> Value:
        raise TVMLiteError(f"string {e.value!r} cannot be used as a value")

    # ------------------------------------------------------------ operators

    def visit_Cast(self, e: tir.Cast) -> Value:
        return self.arith.cast(self.expr(e.value), e.value.dtype, e.dtype)

    def visit_BinaryOp(self, e: tir.BinaryOp) -> Value:
        a, b = self.expr(e.a), self.expr(e.b)
        if e.kind == "and":
            return self.b.and_(a, b)
        if e.kind == "or":
            return self.b.or_(a, b)
        return self.arith.binary(e, a, b)

    def visit_Not(self, e: tir.Not) -> Value:
        return self.b.not_(self.expr(e.a))

    def visit_Select(self, e: tir.Select) -> Value:
        cond = self.expr(e.condition)
        return self.b.select(cond, self.expr(e.true_value), self.expr(e.false_value))

    def visit_Let(self, e: tir.Let) -> Value:
        self.vars[e.var] = self.expr(e.value)
        try:
            return self.expr(e.body)
        finally:
            del self.vars[e.var]

    def visit_Call(self, e: tir.Call) -> Value:
        return self.calls.call(e)

    # ------------------------------------------------------------ vectors

    def splat(self, value: Value, lanes: int) -> Value:
        vector = ir.VectorType(value.type, lanes)
        undef = ir.Constant(vector, ir.Undefined)
        first = self.b.insert_element(undef, value, ty.constant("int32", 0))
        mask = ir.Constant(ir.VectorType(ty.I32, lanes), [0] * lanes)
        return self.b.shuffle_vector(first, undef, mask)

    def visit_Broadcast(self, e: tir.Broadcast) -> Value:
        ty.check_fixed(e.dtype)
        return self.splat(self.expr(e.value), e.lanes)

    def visit_Shuffle(self, e: tir.Shuffle) -> Value:
        """Lane by lane: the concatenated vectors' lanes that constant indices pick."""
        lanes: list[Value] = []
        for vector in e.vectors:
            value = self.expr(vector)
            count = dt.lanes(vector.dtype)
            if count == 1:
                lanes.append(value)
                continue
            for k in range(count):
                lanes.append(self.b.extract_element(value, ty.constant("int32", k)))
        result: Value = ir.Constant(ty.value_type(e.dtype), ir.Undefined)
        for k, index in enumerate(e.indices):
            if not isinstance(index, tir.IntImm) or not 0 <= index.value < len(lanes):
                raise TVMLiteError("T.Shuffle needs constant indices within its vectors' lanes")
            pick = lanes[index.value]
            if dt.lanes(e.dtype) == 1:
                return pick
            result = self.b.insert_element(result, pick, ty.constant("int32", k))
        return result

    def visit_Ramp(self, e: tir.Ramp) -> Value:
        ty.check_fixed(e.dtype)
        base = self.splat(self.expr(e.base), e.lanes)
        stride = self.splat(self.expr(e.stride), e.lanes)
        steps = ir.Constant(base.type, [ty.constant(e.base.dtype, i) for i in range(e.lanes)])
        return self.b.add(base, self.b.mul(stride, steps))

    # ------------------------------------------------------------ memory

    def pointer_of(self, buffer: tir.Buffer) -> Value:
        ptr = self.vars.get(buffer.data)
        if ptr is None:
            raise TVMLiteError(f"buffer '{buffer.name}' has no storage in this function")
        return ptr

    def element_pointer(self, buffer: tir.Buffer, index: tir.PrimExpr) -> Value:
        elem = ty.memory_type(dt.element_of(buffer.dtype))
        return self.b.gep(self.pointer_of(buffer), [self.expr(index)], source_etype=elem)

    def _check_flat(self, buffer: tir.Buffer, indices: tuple[tir.PrimExpr, ...]) -> tir.PrimExpr:
        if len(indices) != 1:
            raise TVMLiteError(f"access to '{buffer.name}' was not flattened")
        ty.check_fixed(indices[0].dtype)
        return indices[0]

    def _contiguous(self, index: tir.PrimExpr) -> tir.PrimExpr | None:
        """The base of a stride-1 Ramp index (one vector access), else None."""
        if isinstance(index, tir.Ramp) and isinstance(index.stride, tir.IntImm):
            if index.stride.value == 1:
                return index.base
        return None

    def _from_memory(self, value: Value, dtype: str) -> Value:
        if dt.is_bool(dt.element_of(dtype)):
            return self.b.icmp_unsigned(
                "!=", value, ty.constant(dt.with_lanes("int8", dt.lanes(dtype)), 0)
            )
        return value

    def _to_memory(self, value: Value, dtype: str) -> Value:
        if dt.is_bool(dt.element_of(dtype)):
            return self.b.zext(value, ty.memory_type(dtype))
        return value

    def visit_BufferLoad(self, e: tir.BufferLoad) -> Value:
        index = self._check_flat(e.buffer, e.indices)
        lanes = dt.lanes(index.dtype)
        elem = dt.element_of(e.buffer.dtype)
        align = ty.byte_size(elem)
        if lanes == 1:
            ptr = self.element_pointer(e.buffer, index)
            value = self.b.load(ptr, typ=ty.memory_type(e.dtype), align=align)
            return self._from_memory(value, e.dtype)
        if isinstance(index, tir.Broadcast):
            scalar = tir.BufferLoad(e.buffer, (index.value,), elem)
            return self.splat(self.expr(scalar), lanes)
        base = self._contiguous(index)
        vector_dtype = dt.with_lanes(elem, lanes)
        if base is not None:
            ptr = self.element_pointer(e.buffer, base)
            value = self.b.load(ptr, typ=ty.memory_type(vector_dtype), align=align)
            return self._from_memory(value, vector_dtype)
        check_lane_count(lanes, f"a load of '{e.buffer.name}' at a non-contiguous index")
        indices = self.expr(index)
        result: Value = ir.Constant(ty.memory_type(vector_dtype), ir.Undefined)
        elem_type = ty.memory_type(elem)
        for lane in range(lanes):
            i = self.b.extract_element(indices, ty.constant("int32", lane))
            ptr = self.b.gep(self.pointer_of(e.buffer), [i], source_etype=elem_type)
            item = self.b.load(ptr, typ=elem_type, align=align)
            result = self.b.insert_element(result, item, ty.constant("int32", lane))
        return self._from_memory(result, vector_dtype)

    def store(self, s: tir.BufferStore) -> None:
        index = self._check_flat(s.buffer, s.indices)
        lanes = dt.lanes(index.dtype)
        elem = dt.element_of(s.buffer.dtype)
        align = ty.byte_size(elem)
        value = self._to_memory(self.expr(s.value), s.value.dtype)
        if lanes == 1:
            self.b.store(value, self.element_pointer(s.buffer, index), align=align)
            return
        if dt.lanes(s.value.dtype) == 1:
            value = self.splat(value, lanes)
        base = self._contiguous(index)
        if base is not None:
            self.b.store(value, self.element_pointer(s.buffer, base), align=align)
            return
        check_lane_count(lanes, f"a store to '{s.buffer.name}' at a non-contiguous index")
        indices = self.expr(index)
        elem_type = ty.memory_type(elem)
        for lane in range(lanes):
            i = self.b.extract_element(indices, ty.constant("int32", lane))
            ptr = self.b.gep(self.pointer_of(s.buffer), [i], source_etype=elem_type)
            self.b.store(
                self.b.extract_element(value, ty.constant("int32", lane)), ptr, align=align
            )

"""TIR intrinsic calls (`T.exp`, `T.isnan`, `T.popcount`, `T.if_then_else`, ...) as
LLVM code.

float32 exp, exp2, log, log2, log10, log1p, tanh, erf and pow are inline code
that vectorizes (mathlib/), as are the constant exponents of pow that models
use, in any float format. Otherwise LLVM intrinsics where LLVM has one that
every backend lowers (they vectorize and constant-fold), and libm functions
where it has not, declared by name and resolved by the JIT in the process (see
target.py), called lane by lane on vectors. float16 math never gets here:
LowerIntrinsics computes it in float32.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from llvmlite import ir

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import dtype as dt
from tvmlite.dsl import tir
from tvmlite.lowering.codegen import llvm_types as ty
from tvmlite.lowering.codegen import mathlib
from tvmlite.lowering.codegen.llvm_host_abi import c_function
from tvmlite.lowering.codegen.target import resolves

if TYPE_CHECKING:
    from tvmlite.lowering.codegen.llvm_expr import ExprEmitter

Value = ir.Value

LLVM_UNARY = {
    "sqrt": "llvm.sqrt",
    "exp": "llvm.exp",
    "exp2": "llvm.exp2",
    "log": "llvm.log",
    "log2": "llvm.log2",
    "log10": "llvm.log10",
    "sin": "llvm.sin",
    "cos": "llvm.cos",
    "fabs": "llvm.fabs",
    "floor": "llvm.floor",
    "ceil": "llvm.ceil",
    "trunc": "llvm.trunc",
    "round": "llvm.nearbyint",  # TVM rounds half to even, like NumPy
    "nearbyint": "llvm.nearbyint",
}
LLVM_BINARY = {"pow": "llvm.pow", "copysign": "llvm.copysign"}
LIBM_UNARY = frozenset(
    "tan asin acos atan sinh cosh tanh asinh acosh atanh erf log1p exp10".split()
)
LIBM_BINARY = frozenset(["atan2", "hypot", "nextafter"])


_C_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# What each intrinsic's operands must be: LLVM's verifier rejects `llvm.pow.i32` or
# `ctpop` of a float, so IR built in code with such a call stops here instead.
# "same" ops also need every operand and the result to share one dtype.
_FLOAT_SAME = ("float", True)
_INT_SAME = ("int", True)
_OPERANDS: dict[str, tuple[str, bool]] = {
    **dict.fromkeys(LLVM_UNARY, _FLOAT_SAME),
    **dict.fromkeys(LLVM_BINARY, _FLOAT_SAME),
    **dict.fromkeys(["isnan", "isinf", "isfinite", "ldexp"], ("float", False)),
    **dict.fromkeys(["popcount", "shift_left", "shift_right"], _INT_SAME),
    "clz": ("int", False),  # an int32 count of any integer
    **dict.fromkeys(["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not"], _INT_SAME),
    "fmod": ("any", True),
}


# Code made lane by lane (libm calls, strided accesses) grows with the lanes, and
# LLVM's optimizer grows faster than that: 1024 lanes take seconds, 65535 hours.
MAX_LANE_BY_LANE = 1024


def check_lane_count(lanes: int, what: str) -> None:
    if lanes > MAX_LANE_BY_LANE:
        raise TVMLiteError(
            f"{what} on {lanes} lanes would be compiled lane by lane; the LLVM backend "
            f"does that for at most {MAX_LANE_BY_LANE} lanes (write a loop instead)"
        )


def _check_operands(e: tir.Call) -> None:
    rule = _OPERANDS.get(e.op)
    if rule is None or not e.args:
        return
    kind, same = rule
    elem = dt.element_of(e.args[0].dtype)
    ok = kind == "any" or (dt.is_float(elem) if kind == "float" else dt.is_integer_like(elem))
    if not ok:
        raise TVMLiteError(f"T.{e.op} needs {kind} operands, got {e.args[0].dtype}")
    if same and any(a.dtype != e.dtype for a in e.args):
        shown = ", ".join(a.dtype for a in e.args)
        raise TVMLiteError(f"T.{e.op} of {e.dtype} has operands of dtypes {shown}")


def _constant(e: tir.PrimExpr) -> float | None:
    """The value of a float constant, of every lane of a broadcast one, or of one
    cast to another float format (float16 pow is computed in float32)."""
    if isinstance(e, tir.Broadcast):
        e = e.value
    if isinstance(e, tir.Cast) and dt.is_float(dt.element_of(e.value.dtype)):
        e = e.value
    return e.value if isinstance(e, tir.FloatImm) else None


def intrinsic_suffix(t: ir.Type) -> str:
    """LLVM's mangling of an overloaded type in an intrinsic's name: `f32`, `v4f32`."""
    if isinstance(t, ir.VectorType):
        return f"v{t.count}{intrinsic_suffix(t.element)}"
    return t.intrinsic_name


def intrinsic(module: ir.Module, b: ir.IRBuilder, name: str, args: list[Value]) -> Value:
    """Call LLVM intrinsic `name` overloaded on its first argument's type
    (`llvm.copysign.f32`, `llvm.exp.v4f32`, `llvm.ctlz.v8i16`): returns that type,
    takes the arguments' types. llvmlite's `declare_intrinsic` gets both wrong for
    binary intrinsics other than pow, and has no names for vector types."""
    overload = args[0].type
    symbol = f"{name}.{intrinsic_suffix(overload)}"
    fn = module.globals.get(symbol)
    if fn is None:
        fnty = ir.FunctionType(overload, [a.type for a in args])
        fn = ir.Function(module, fnty, symbol)
    return b.call(fn, args)


class CallEmitter:
    """TIR calls of the expression emitter `exprs`, at its builder's position;
    their operands are its expressions, integer `fmod` and casts its arithmetic."""

    def __init__(self, exprs: ExprEmitter) -> None:
        self.b = exprs.b
        self.module = exprs.module
        self.expr = exprs.expr
        self.element_pointer = exprs.element_pointer
        self.arith = exprs.arith
        self._calls: dict[str, Callable[[tir.Call], Value]] = {
            "if_then_else": self._if_then_else,
            "isnan": self._isnan,
            "isinf": self._isinf,
            "isfinite": self._isfinite,
            "popcount": self._popcount,
            "clz": self._clz,
            "shift_left": self._shift_left,
            "shift_right": self._shift_right,
            "bitwise_and": self._bitwise_and,
            "bitwise_or": self._bitwise_or,
            "bitwise_xor": self._bitwise_xor,
            "bitwise_not": self._bitwise_not,
            "reinterpret": self._reinterpret,
            "vectorlow": self._vector_half,
            "vectorhigh": self._vector_half,
            "fmod": self._fmod,
            "ldexp": self._ldexp,
            "call_extern": self._extern,
            "call_pure_extern": self._extern,
            "address_of": self._address_of,
        }
        for name in LLVM_UNARY:
            self._calls[name] = self._llvm_intrinsic
        for name in LLVM_BINARY:
            self._calls[name] = self._llvm_intrinsic
        for name in LIBM_UNARY | LIBM_BINARY:
            self._calls[name] = self._libm
        for name in mathlib.UNARY:
            self._calls[name] = self._inline
        self._calls["pow"] = self._pow

    def call(self, e: tir.Call) -> Value:
        method = self._calls.get(e.op)
        if method is None and e.op.startswith(tir.GLOBAL_CALL):
            name = e.op[len(tir.GLOBAL_CALL) :]
            raise TVMLiteError(
                f"a call to prim function '{name}' inside TIR is not supported by the LLVM backend"
            )
        if method is None:
            raise TVMLiteError(f"T.{e.op} is not supported by the LLVM backend")
        _check_operands(e)
        return method(e)

    # ------------------------------------------------------------ helpers

    def _intrinsic(self, name: str, args: list[Value]) -> Value:
        return intrinsic(self.module, self.b, name, args)

    def _libm_function(self, name: str, elem: str, arity: int) -> ir.Function:
        scalar = ty.value_type(elem)
        symbol = name + ("f" if elem == "float32" else "")
        return c_function(self.module, symbol, scalar, [scalar] * arity)

    def _per_lane(self, fn: ir.Function, args: list[Value], dtype: str) -> Value:
        """Call a scalar function on every lane of vector arguments."""
        n = dt.lanes(dtype)
        if n == 1:
            return self.b.call(fn, args)
        check_lane_count(n, f"a call of {fn.name}")
        result: Value = ir.Constant(ty.value_type(dtype), ir.Undefined)
        for lane in range(n):
            index = ty.constant("int32", lane)
            scalars = [self.b.extract_element(a, index) for a in args]
            result = self.b.insert_element(result, self.b.call(fn, scalars), index)
        return result

    def _args(self, e: tir.Call) -> list[Value]:
        return [self.expr(a) for a in e.args]

    # ------------------------------------------------------------ math

    def _lanes(self, x: Value) -> mathlib.Lanes:
        return mathlib.Lanes.like(self.b, self._intrinsic, x)

    def _inline(self, e: tir.Call) -> Value:
        """float32: the routine of mathlib; other dtypes: LLVM's intrinsic or libm."""
        if dt.element_of(e.dtype) != "float32":
            return self._llvm_intrinsic(e) if e.op in LLVM_UNARY else self._libm(e)
        x = self.expr(e.args[0])
        return mathlib.UNARY[e.op](self._lanes(x), x)

    def _pow(self, e: tir.Call) -> Value:
        exponent = _constant(e.args[1])
        if exponent in mathlib.CONSTANT_EXPONENTS:
            x = self.expr(e.args[0])
            return mathlib.constant(self._lanes(x), x, exponent)
        if dt.element_of(e.dtype) == "float32":
            x, y = self._args(e)
            return mathlib.pow(self._lanes(x), x, y)
        return self._llvm_intrinsic(e)

    def _llvm_intrinsic(self, e: tir.Call) -> Value:
        name = LLVM_UNARY.get(e.op) or LLVM_BINARY[e.op]
        check_lane_count(dt.lanes(e.dtype), f"T.{e.op}")  # LLVM expands most per lane
        return self._intrinsic(name, self._args(e))

    def _libm(self, e: tir.Call) -> Value:
        elem = dt.element_of(e.dtype)
        if elem not in ("float32", "float64"):
            raise TVMLiteError(f"T.{e.op} on {e.dtype} is not supported")
        fn = self._libm_function(e.op, elem, len(e.args))
        return self._per_lane(fn, self._args(e), e.dtype)

    def _fmod(self, e: tir.Call) -> Value:
        a, b = self._args(e)
        if dt.is_float(dt.element_of(e.dtype)):
            return self.b.frem(a, b)
        # On integers fmod is truncmod, whose divisor guard keeps x % 0 from trapping.
        return self.arith.binary(tir.BinaryOp("mod", e.args[0], e.args[1], e.dtype), a, b)

    def _ldexp(self, e: tir.Call) -> Value:
        x, n = self._args(e)
        elem = dt.element_of(e.dtype)
        n = self.arith.cast(n, e.args[1].dtype, dt.with_lanes("int32", dt.lanes(e.args[1].dtype)))
        scalar = ty.value_type(elem)
        symbol = "ldexpf" if elem == "float32" else "ldexp"
        fn = c_function(self.module, symbol, scalar, [scalar, ty.I32])
        return self._per_lane(fn, [x, n], e.dtype)

    def _isnan(self, e: tir.Call) -> Value:
        x = self.expr(e.args[0])
        return self.b.fcmp_unordered("uno", x, x)

    def _infinity(self, e: tir.Call) -> Value:
        return ty.constant(e.args[0].dtype, math.inf)

    def _isinf(self, e: tir.Call) -> Value:
        x = self._intrinsic("llvm.fabs", [self.expr(e.args[0])])
        return self.b.fcmp_ordered("==", x, self._infinity(e))

    def _isfinite(self, e: tir.Call) -> Value:
        x = self._intrinsic("llvm.fabs", [self.expr(e.args[0])])
        return self.b.fcmp_ordered("<", x, self._infinity(e))

    # ------------------------------------------------------------ bits

    def _popcount(self, e: tir.Call) -> Value:
        return self._intrinsic("llvm.ctpop", [self.expr(e.args[0])])

    def _clz(self, e: tir.Call) -> Value:
        (x,) = e.args
        count = self._intrinsic("llvm.ctlz", [self.expr(x), ir.Constant(ty.I1, 0)])
        return self.arith.cast(count, x.dtype, e.dtype)

    def _shift_left(self, e: tir.Call) -> Value:
        a, b = self._args(e)
        return self.b.shl(a, b)

    def _shift_right(self, e: tir.Call) -> Value:
        a, b = self._args(e)
        return self.b.ashr(a, b) if dt.is_int(dt.element_of(e.dtype)) else self.b.lshr(a, b)

    def _bitwise_and(self, e: tir.Call) -> Value:
        a, b = self._args(e)
        return self.b.and_(a, b)

    def _bitwise_or(self, e: tir.Call) -> Value:
        a, b = self._args(e)
        return self.b.or_(a, b)

    def _bitwise_xor(self, e: tir.Call) -> Value:
        a, b = self._args(e)
        return self.b.xor(a, b)

    def _bitwise_not(self, e: tir.Call) -> Value:
        return self.b.not_(self.expr(e.args[0]))

    def _reinterpret(self, e: tir.Call) -> Value:
        src = e.args[-1]
        if ty.byte_size(src.dtype) != ty.byte_size(e.dtype) or "bool" in (src.dtype, e.dtype):
            raise TVMLiteError(
                f"T.reinterpret cannot change {src.dtype} into {e.dtype}: sizes differ"
            )
        return self.b.bitcast(self.expr(src), ty.value_type(e.dtype))

    def _vector_half(self, e: tir.Call) -> Value:
        """`T.vectorlow("int8x8", v)` / `T.vectorhigh(...)`: the first or last lanes of
        `v`, as many as the result has (half of them, as TVM uses it)."""
        src, lanes = e.args[-1], dt.lanes(e.dtype)
        total = dt.lanes(src.dtype)
        if dt.element_of(src.dtype) != dt.element_of(e.dtype) or lanes > total:
            raise TVMLiteError(f"T.{e.op} cannot take {e.dtype} out of {src.dtype}")
        start = 0 if e.op == "vectorlow" else total - lanes
        value = self.expr(src)
        mask = ir.Constant(ir.VectorType(ty.I32, lanes), list(range(start, start + lanes)))
        return self.b.shuffle_vector(value, ir.Constant(value.type, ir.Undefined), mask)

    # ------------------------------------------------------------ control and calls

    def _if_then_else(self, e: tir.Call) -> Value:
        """Lazy: only the chosen branch runs (it may load out of bounds otherwise)."""
        cond_e, then_e, else_e = e.args
        if dt.lanes(cond_e.dtype) > 1:
            return self.b.select(self.expr(cond_e), self.expr(then_e), self.expr(else_e))
        cond = self.expr(cond_e)
        fn = self.b.function
        then_block = fn.append_basic_block("ite.then")
        else_block = fn.append_basic_block("ite.else")
        done = fn.append_basic_block("ite.done")
        self.b.cbranch(cond, then_block, else_block)
        self.b.position_at_end(then_block)
        then_value = self.expr(then_e)
        then_end = self.b.block
        self.b.branch(done)
        self.b.position_at_end(else_block)
        else_value = self.expr(else_e)
        else_end = self.b.block
        self.b.branch(done)
        self.b.position_at_end(done)
        phi = self.b.phi(ty.value_type(e.dtype))
        phi.add_incoming(then_value, then_end)
        phi.add_incoming(else_value, else_end)
        return phi

    def _extern(self, e: tir.Call) -> Value:
        """`T.call_extern(dtype, "name", args...)`: a C function in the process. The
        name must be a C identifier that the process defines (the JIT would call
        address 0 for one it cannot resolve), and not one of tvmlite's own."""
        callee, *rest = e.args
        if not isinstance(callee, tir.StringImm):
            raise TVMLiteError(f"T.{e.op} needs the function name as a string")
        name = callee.value
        if not _C_NAME.match(name) or name.startswith("tvmlite"):
            raise TVMLiteError(f"T.{e.op}: {name!r} is not the name of an external C function")
        if not resolves(name):
            raise TVMLiteError(
                f"T.{e.op}: C function '{name}' is not loaded in this process (load its "
                "library with llvmlite.binding.load_library_permanently first)"
            )
        args = [self.expr(a) for a in rest]
        fn = c_function(self.module, name, ty.value_type(e.dtype), [a.type for a in args])
        return self.b.call(fn, args)

    def _address_of(self, e: tir.Call) -> Value:
        load = e.args[0]
        if isinstance(load, tir.Var) and load.pointee == tir.TENSOR_MAP:
            raise TVMLiteError(
                "T.address_of of a T.TensorMap() var (a CUDA tensor-map descriptor) "
                "is not supported by the LLVM backend"
            )
        if not isinstance(load, tir.BufferLoad):  # a variable has no address in a register
            raise TVMLiteError("T.address_of of a variable is not supported by the LLVM backend")
        return self.element_pointer(load.buffer, load.indices[0])

"""Numerics cases: unary math, predicates, casts, binary arithmetic, comparison,
logic and bit operators (with broadcasting), where, clip and activations."""

from __future__ import annotations

import math

import numpy as np
from op_cases_common import Case, Inputs, as_, case, erf, f64, like

G = Inputs(1)

# ----------------------------------------------------------------- unary math

_UNARY = {  # op -> (NumPy reference on float64, input range)
    "abs": (np.abs, (-2, 2)),
    "acos": (np.arccos, (-0.95, 0.95)),
    "acosh": (np.arccosh, (1.05, 4)),
    "asin": (np.arcsin, (-0.95, 0.95)),
    "asinh": (np.arcsinh, (-3, 3)),
    "atan": (np.arctan, (-3, 3)),
    "atanh": (np.arctanh, (-0.95, 0.95)),
    "ceil": (np.ceil, (-3, 3)),
    "cos": (np.cos, (-3, 3)),
    "cosh": (np.cosh, (-2, 2)),
    "erf": (erf, (-2.5, 2.5)),
    "exp": (np.exp, (-3, 3)),
    "floor": (np.floor, (-3, 3)),
    "log": (np.log, (0.1, 5)),
    "negative": (np.negative, (-2, 2)),
    "round": (np.round, (-3, 3)),
    "rsqrt": (lambda x: 1 / np.sqrt(x), (0.1, 5)),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), (-4, 4)),
    "sign": (np.sign, (-2, 2)),
    "sin": (np.sin, (-3, 3)),
    "sinh": (np.sinh, (-2, 2)),
    "sqrt": (np.sqrt, (0.0, 5)),
    "square": (np.square, (-2, 2)),
    "tan": (np.tan, (-1.2, 1.2)),
    "tanh": (np.tanh, (-3, 3)),
    "trunc": (np.trunc, (-3, 3)),
}
_F64 = (
    "acos",
    "acosh",
    "asinh",
    "atanh",
    "cosh",
    "erf",
    "exp",
    "log",
    "rsqrt",
    "sigmoid",
    "sin",
    "sqrt",
    "tan",
    "tanh",
    "round",
    "floor",
)
_F16 = ("abs", "exp", "negative", "sigmoid", "sqrt", "tanh", "floor")


def _unary_input(op: str, dtype: str) -> np.ndarray:
    lo, hi = _UNARY[op][1]
    x = G.uniform(2, 3, 4, lo=lo, hi=hi, dtype=dtype)
    if op in ("sign", "abs", "negative", "square"):
        x.flat[:2] = 0
    if op in ("round", "ceil", "floor", "trunc"):  # exact ties and integers
        x.flat[:8] = [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -2.0, 3.0]
    return x


def _unary_cases() -> list[Case]:
    out = []
    for op, (fn, _) in _UNARY.items():
        dtypes = ["float32"] + ["float64"] * (op in _F64) + ["float16"] * (op in _F16)
        for dtype in dtypes:
            out.append(case(f"{op}-{dtype}", f"R.{op}(x)", _unary_input(op, dtype), like(fn)))
    x = G.ints(-9, 9, 2, 5)
    out += [
        case("abs-int32", "R.abs(x)", x, as_("int32", np.abs)),
        case("negative-int64", "R.negative(x)", x.astype("int64"), as_("int64", np.negative)),
        case("sign-int32", "R.sign(x)", x, as_("int32", np.sign)),
        case("square-int64", "R.square(x)", x.astype("int64"), as_("int64", np.square)),
        case("floor-int32", "R.floor(x)", x, as_("int32", np.floor)),
        case("ceil-int64", "R.ceil(x)", x.astype("int64"), as_("int64", np.ceil)),
        case("round-int32", "R.round(x)", x, as_("int32", np.round)),
        case("trunc-int32", "R.trunc(x)", x, as_("int32", np.trunc)),
        case("bitwise_not-int32", "R.bitwise_not(x)", x, as_("int32", np.invert)),
        case("bitwise_not-int64", "R.bitwise_not(x)", x.astype("int64"), as_("int64", np.invert)),
        case("logical_not-bool", "R.logical_not(x)", G.bools(3, 4), np.logical_not),
    ]
    special = np.array([[np.nan, np.inf, -np.inf, 0.0], [1.5, -2.0, np.nan, 3e38]], "float32")
    for op, fn in (("isnan", np.isnan), ("isinf", np.isinf), ("isfinite", np.isfinite)):
        out.append(case(f"{op}-float32", f"R.{op}(x)", special, fn))
        out.append(case(f"{op}-float64", f"R.{op}(x)", special.astype("float64"), fn))
        out.append(case(f"{op}-int32", f"R.{op}(x)", x, fn))
    return out


# --------------------------------------------------------------------- binary


def _trunc_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.sign(a) * np.sign(b) * (np.abs(a) // np.abs(b))


def _floor_mod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a - np.floor(a / b) * b


def _log_add_exp(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.logaddexp(a, b)


_ARITH = {  # op -> float64 reference
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "divide": np.divide,
    "floor_divide": lambda a, b: np.floor(a / b),
    "floor_mod": _floor_mod,
    "mod": np.fmod,
    "power": np.power,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "atan2": np.arctan2,
    "log_add_exp": _log_add_exp,
}
_INT_ARITH = {  # op -> exact integer reference (TIR division truncates, mod is fmod)
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "divide": _trunc_div,
    "floor_divide": np.floor_divide,
    "floor_mod": np.mod,
    "mod": np.fmod,
    "maximum": np.maximum,
    "minimum": np.minimum,
}
_CMP = {
    "equal": np.equal,
    "not_equal": np.not_equal,
    "greater": np.greater,
    "greater_equal": np.greater_equal,
    "less": np.less,
    "less_equal": np.less_equal,
}


def _float_pair(op: str, dtype: str, shapes: tuple) -> tuple[np.ndarray, np.ndarray]:
    a, b = G.uniform(*shapes[0], dtype=dtype), G.uniform(*shapes[1], dtype=dtype)
    if op == "power":
        a = G.uniform(*shapes[0], lo=0.5, hi=2.0, dtype=dtype)
    if op in ("divide", "floor_divide", "floor_mod", "mod"):
        b = (np.sign(b) * (np.abs(b) + 0.25)).astype(dtype)
    return a, b


def _binary_cases() -> list[Case]:
    out = []
    bcast = ((2, 3, 4), (3, 1))
    for op, fn in _ARITH.items():
        x, y = _float_pair(op, "float32", bcast)
        out.append(case(f"{op}-float32-bcast", f"R.{op}(x, y)", (x, y), like(fn)))
        x, y = _float_pair(op, "float64", ((4,), (2, 1, 4)))
        out.append(case(f"{op}-float64-bcast-lhs", f"R.{op}(x, y)", (x, y), like(fn)))
    for op in ("add", "multiply", "divide", "maximum"):
        x, y = _float_pair(op, "float16", ((3, 4), (4,)))
        out.append(case(f"{op}-float16", f"R.{op}(x, y)", (x, y), like(_ARITH[op]), tol=4e-3))
    for op, fn in _INT_ARITH.items():
        x, y = G.ints(-20, 20, 3, 4), G.nonzero_ints(-6, 6, 4)
        out.append(case(f"{op}-int32-bcast", f"R.{op}(x, y)", (x, y), as_("int32", fn)))
        x, y = G.ints(-20, 20, 2, 1, 3, dtype="int64"), G.nonzero_ints(-6, 6, 4, 1, dtype="int64")
        out.append(case(f"{op}-int64-bcast", f"R.{op}(x, y)", (x, y), as_("int64", fn)))
    x = G.uniform(2, 3)
    out.append(
        case("add-const-scalar", 'R.add(x, R.const(1.5, "float32"))', x, like(lambda a: a + 1.5))
    )
    out.append(
        case(
            "multiply-const-lhs",
            'R.multiply(R.const(-2.0, "float32"), x)',
            x,
            like(lambda a: -2.0 * a),
        )
    )
    for op, fn in _CMP.items():
        # small integers stored as floats: plenty of exact ties
        x, y = G.ints(-2, 3, 2, 3, 4).astype("float32"), G.ints(-2, 3, 3, 1).astype("float32")
        out.append(case(f"{op}-float32-bcast", f"R.{op}(x, y)", (x, y), fn))
        x, y = G.ints(-2, 3, 3, 4), G.ints(-2, 3, 4)
        out.append(case(f"{op}-int32-bcast", f"R.{op}(x, y)", (x, y), fn))
        x, y = G.ints(-2, 3, 4, 1, dtype="int64"), G.ints(-2, 3, 1, 5, dtype="int64")
        out.append(case(f"{op}-int64-outer", f"R.{op}(x, y)", (x, y), fn))
    for op, fn in (
        ("logical_and", np.logical_and),
        ("logical_or", np.logical_or),
        ("logical_xor", np.logical_xor),
    ):
        out.append(case(f"{op}-bool-bcast", f"R.{op}(x, y)", (G.bools(2, 3, 4), G.bools(4)), fn))
        out.append(
            case(
                f"{op}-bool",
                f"R.{op}(x, y)",
                (
                    G.bools(
                        5,
                    ),
                    G.bools(
                        5,
                    ),
                ),
                fn,
            )
        )
    for op, fn in (
        ("bitwise_and", np.bitwise_and),
        ("bitwise_or", np.bitwise_or),
        ("bitwise_xor", np.bitwise_xor),
    ):
        for dtype in ("int32", "int64"):
            x, y = G.ints(-50, 50, 3, 4, dtype=dtype), G.ints(-50, 50, 4, dtype=dtype)
            out.append(case(f"{op}-{dtype}-bcast", f"R.{op}(x, y)", (x, y), as_(dtype, fn)))
    for op, fn in (("left_shift", np.left_shift), ("right_shift", np.right_shift)):
        for dtype in ("int32", "int64"):
            x, y = G.ints(-100, 100, 3, 4, dtype=dtype), G.ints(0, 6, 4, dtype=dtype)
            out.append(case(f"{op}-{dtype}-bcast", f"R.{op}(x, y)", (x, y), as_(dtype, fn)))
    return out


# -------------------------------------------------------- ternary, casts, clip


def _misc_cases() -> list[Case]:
    c, x, y = G.bools(2, 3, 4), G.uniform(3, 4), G.uniform(2, 1, 4)
    xi, yi = G.ints(-9, 9, 3, 4), G.ints(-9, 9, 4)
    a, b, d = G.uniform(3, 4), G.uniform(3, 4), G.uniform(3, 4)
    f = G.uniform(3, 5, lo=-4, hi=4)
    f.flat[:4] = [0.0, -0.0, 2.75, -2.75]
    out = [
        case("where-float32-bcast", "R.where(x, y, z)", (c, x, y), np.where),
        case("where-int32-bcast", "R.where(x, y, z)", (c[0], xi, yi), np.where),
        case(
            "ewise_fma-float32", "R.ewise_fma(x, y, z)", (a, b, d), like(lambda p, q, r: p * q + r)
        ),
        case(
            "ewise_fma-float64",
            "R.ewise_fma(x, y, z)",
            tuple(v.astype("float64") for v in (a, b, d)),
            like(lambda p, q, r: p * q + r),
        ),
        case("astype-f32-to-i32", 'R.astype(x, dtype="int32")', f, as_("int32", np.trunc)),
        case("astype-f32-to-i64", 'R.astype(x, dtype="int64")', f, as_("int64", np.trunc)),
        case("astype-f32-to-f16", 'R.astype(x, dtype="float16")', f, as_("float16", f64)),
        case("astype-f32-to-f64", 'R.astype(x, dtype="float64")', f, as_("float64", f64)),
        case("astype-f32-to-bool", 'R.astype(x, dtype="bool")', f, as_("bool", lambda v: v != 0)),
        case("astype-i32-to-f64", 'R.astype(x, dtype="float64")', xi, as_("float64", f64)),
        case(
            "astype-i64-to-i32",
            'R.astype(x, dtype="int32")',
            xi.astype("int64"),
            as_("int32", np.asarray),
        ),
        case("astype-bool-to-f32", 'R.astype(x, dtype="float32")', c, as_("float32", f64)),
        case("astype-bool-to-i32", 'R.astype(x, dtype="int32")', c, as_("int32", np.asarray)),
        case(
            "astype-f16-to-f32",
            'R.astype(x, dtype="float32")',
            f.astype("float16"),
            as_("float32", f64),
        ),
        case("clip-float32", "R.clip(x, -0.5, 1.25)", f, like(lambda v: np.clip(v, -0.5, 1.25))),
        case("clip-int32", "R.clip(x, -3, 4)", xi, as_("int32", lambda v: np.clip(v, -3, 4))),
        case(
            "clip-float64", "R.clip(x, 0, 2)", f.astype("float64"), like(lambda v: np.clip(v, 0, 2))
        ),
    ]
    return out


# ---------------------------------------------------------------- activations

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


def _gelu_tanh(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def _selu(x: np.ndarray) -> np.ndarray:
    return SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * (np.exp(x) - 1))


def _softplus(beta: float, threshold: float):
    def fn(x: np.ndarray) -> np.ndarray:
        return np.where(beta * x > threshold, x, np.log1p(np.exp(beta * x)) / beta)

    return fn


def _softmax(axis: int, log: bool = False):
    def fn(x: np.ndarray) -> np.ndarray:
        s = x - x.max(axis, keepdims=True)
        lse = np.log(np.exp(s).sum(axis, keepdims=True))
        return s - lse if log else np.exp(s - lse)

    return fn


def _prelu(axis: int):
    def fn(x: np.ndarray, a: np.ndarray) -> np.ndarray:
        shape = [1] * x.ndim
        shape[axis] = -1
        return np.where(x > 0, x, x * a.reshape(shape))

    return fn


def _activation_cases() -> list[Case]:
    x, xd = G.uniform(2, 3, 4, lo=-4, hi=4), G.uniform(3, 5, lo=-4, hi=4, dtype="float64")
    x.flat[:3] = [0.0, 6.0, 7.5]
    xi = G.ints(-9, 9, 3, 4)
    out = [
        case("relu-float32", "R.nn.relu(x)", x, like(lambda v: np.maximum(v, 0))),
        case("relu-float64", "R.nn.relu(x)", xd, like(lambda v: np.maximum(v, 0))),
        case("relu-int32", "R.nn.relu(x)", xi, as_("int32", lambda v: np.maximum(v, 0))),
        # R.nn.relu6 parses to R.clip(x, 0, 6) (TVM's wrapper); the rule gets a direct call
        case(
            "relu6-float32",
            "R.nn.relu(x)",
            x * 2,
            like(lambda v: np.clip(v, 0, 6)),
            rename="relax.nn.relu6",
        ),
        case(
            "relu6-int64",
            "R.nn.relu(x)",
            xi.astype("int64"),
            as_("int64", lambda v: np.clip(v, 0, 6)),
            rename="relax.nn.relu6",
        ),
        case("relu6-wrapper-clip", "R.nn.relu6(x)", x * 2, like(lambda v: np.clip(v, 0, 6))),
        case(
            "leakyrelu-default",
            "R.nn.leakyrelu(x)",
            x,
            like(lambda v: np.where(v > 0, v, 0.01 * v)),
        ),
        case(
            "leakyrelu-alpha",
            "R.nn.leakyrelu(x, alpha=0.2)",
            xd,
            like(lambda v: np.where(v > 0, v, 0.2 * v)),
        ),
        case("gelu-float32", "R.nn.gelu(x)", x, like(_gelu)),
        case("gelu-float64", "R.nn.gelu(x)", xd, like(_gelu)),
        case("gelu_tanh-float32", "R.nn.gelu_tanh(x)", x, like(_gelu_tanh)),
        case("gelu_tanh-float64", "R.nn.gelu_tanh(x)", xd, like(_gelu_tanh)),
        case("silu-float32", "R.nn.silu(x)", x, like(lambda v: v / (1 + np.exp(-v)))),
        case("silu-float64", "R.nn.silu(x)", xd, like(lambda v: v / (1 + np.exp(-v)))),
        case("selu-float32", "R.nn.selu(x)", x, like(_selu)),
        case("selu-float64", "R.nn.selu(x)", xd, like(_selu)),
        case("softplus-default", "R.nn.softplus(x)", x, like(_softplus(1.0, 20.0))),
        case(
            "softplus-beta-threshold",
            "R.nn.softplus(x, beta=2.0, threshold=3.0)",
            x,
            like(_softplus(2.0, 3.0)),
        ),
        case(
            "softplus-float64",
            "R.nn.softplus(x, beta=0.5, threshold=1.0)",
            xd,
            like(_softplus(0.5, 1.0)),
        ),
        case(
            "prelu-axis1",
            "R.nn.prelu(x, y, axis=1)",
            (x, G.uniform(3, lo=0, hi=1)),
            like(_prelu(1)),
        ),
        case(
            "prelu-axis-last",
            "R.nn.prelu(x, y, axis=2)",
            (x, G.uniform(4, lo=0, hi=1)),
            like(_prelu(2)),
        ),
        case("softmax-last", "R.nn.softmax(x)", x, like(_softmax(-1))),
        case("softmax-axis0", "R.nn.softmax(x, axis=0)", x, like(_softmax(0))),
        case("softmax-float64", "R.nn.softmax(x, axis=1)", xd, like(_softmax(1))),
        case(
            "softmax-float16",
            "R.nn.softmax(x, axis=-1)",
            x.astype("float16"),
            like(_softmax(-1)),
            tol=4e-3,
        ),
        case("log_softmax-last", "R.nn.log_softmax(x)", x, like(_softmax(-1, True))),
        case("log_softmax-axis1", "R.nn.log_softmax(x, axis=1)", x, like(_softmax(1, True))),
        case("log_softmax-float64", "R.nn.log_softmax(x, axis=0)", xd, like(_softmax(0, True))),
    ]
    return out


CASES: list[Case] = _unary_cases() + _binary_cases() + _misc_cases() + _activation_cases()

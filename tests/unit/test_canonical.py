"""The canonical simplifier (dsl/canonical.py) and the iteration-map normal form
(dsl/iter_map.py) give the expressions TVM 0.27 gives for the same input."""

from tvmlite.dsl import arith, iter_map, tir
from tvmlite.dsl.canonical import Analyzer
from tvmlite.dsl.structural import structural_equal

I64 = "int64"


def var(name: str) -> tir.Var:
    return tir.Var(name, I64)


def c(value: int) -> tir.IntImm:
    return tir.IntImm(I64, value)


def op(kind: str, a: tir.PrimExpr, b: tir.PrimExpr | int) -> tir.PrimExpr:
    """An unfolded operator, as a user or a substitution leaves it."""
    return tir.BinaryOp(kind, a, b if isinstance(b, tir.PrimExpr) else c(b), I64)


def same(a: tir.PrimExpr, b: tir.PrimExpr) -> bool:
    return structural_equal(a, b)


def test_division_of_a_split_sum_uses_bounds() -> None:
    x, y = var("x"), var("y")
    an = Analyzer()
    an.bind(y, 0, 4)
    e = op("floordiv", op("add", op("mul", x, 4), y), 4)
    assert an.canonical_simplify(e) is x
    mod = op("floormod", op("add", op("mul", x, 8), y), 8)
    assert an.canonical_simplify(mod) is y


def test_merges_div_and_mod_of_one_index() -> None:
    x = var("x")
    e = op("add", op("mul", op("floordiv", x, 6), 6), op("floormod", x, 6))
    assert Analyzer().canonical_simplify(e) is x


def test_terms_ordered_by_scale_then_factors() -> None:
    f, y = var("f"), var("y")
    an = Analyzer()
    an.bind(f, 0, 24)
    # y + f % 12 // 6 * 2  ->  f % 12 // 6 * 2 + y
    e = op("add", y, op("mul", op("floordiv", op("floormod", f, 12), 6), 2))
    want = arith.add(arith.mul(arith.floordiv(arith.floormod(f, 12), 6), 2), y)
    assert same(an.canonical_simplify(e), want)


def test_single_value_vars_and_unit_ranges() -> None:
    f, x0 = var("f"), var("x0")
    an = Analyzer()
    an.bind(f, 0, 6)
    an.bind(x0, 0, 1)
    assert an.canonical_simplify(op("floordiv", f, 6)).value == 0
    assert an.canonical_simplify(op("add", op("mul", x0, 5), f)) is f


def test_rewrite_rules_decide_min_max_and_comparisons() -> None:
    x = var("x")
    an = Analyzer()
    an.bind(x, 0, 6)
    assert an.simplify(op("min", x, op("add", x, 2))) is x
    assert arith.as_bool(an.simplify(arith.compare("lt", op("add", x, 2), c(8)))) is True
    assert arith.as_bool(an.simplify(arith.compare("lt", x, c(5)))) is None


def test_fused_bindings_in_iteration_map_form() -> None:
    f = var("f")
    middle = arith.floordiv(arith.floormod(f, 12), 6)
    (out,) = iter_map.simplify_bindings((middle,), {f: (0, 24)})
    assert same(out, tir.BinaryOp("floordiv", op("floormod", f, 12), c(6), I64))
    top = arith.floordiv(f, 12)
    (out,) = iter_map.simplify_bindings((top,), {f: (0, 12)})
    assert out.value == 0  # the top part of a mark that fits in one step


def test_a_split_fused_loop_keeps_its_mark() -> None:
    a, b = var("a"), var("b")
    fused = op("add", op("mul", a, 8), b)
    binding = op("floormod", fused, 8)
    (out,) = iter_map.simplify_bindings((binding,), {a: (0, 3), b: (0, 8)})
    assert same(out, binding)  # TVM prints (a * 8 + b) % 8, not b


def test_non_affine_bindings_are_left_alone() -> None:
    a, b = var("a"), var("b")
    values = (op("mul", a, b), a)
    assert iter_map.simplify_bindings(values, {a: (0, 3), b: (0, 8)}) is values

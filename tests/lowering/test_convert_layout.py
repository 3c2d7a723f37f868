"""ConvertLayout: convolutions run in the desired layouts, the operators after
them follow with rewritten attributes or get their input permuted back, and the
function computes what it computed before."""

from __future__ import annotations

import numpy as np
import pytest

import tvmlite
from tvmlite.dsl.module import IRModule
from tvmlite.transform import ConvertLayout

HEADER = "# from tvm.script import ir as I\n# from tvm.script import relax as R\n\n"
NHWC = {"relax.nn.conv2d": ["NHWC", "OHWI"]}


def module(params: str, body: str, ret: str) -> IRModule:
    lines = "".join(f"            {line}\n" for line in body.strip().splitlines())
    return tvmlite.parse(
        HEADER + "@I.ir_module\nclass Module:\n    @R.function\n"
        f"    def main({params}):\n        with R.dataflow():\n{lines}        return {ret}\n"
    )


def t(*shape: int, dtype: str = "float32") -> str:
    return f'R.Tensor({shape}, "{dtype}")'


GRAPH = module(
    f"x: {t(2, 3, 8, 8)}, w: {t(4, 3, 3, 3)}, b: {t(1, 4, 1, 1)}, g: {t(4)}, be: {t(4)}, "
    f"mu: {t(4)}, var: {t(4)}",
    """
y = R.nn.conv2d(x, w, padding=[1, 1, 1, 1])
y1 = R.add(y, b)
y2 = R.nn.relu(y1)
bn = R.nn.batch_norm(y2, g, be, mu, var, axis=1)
y3 = bn[0]
p = R.nn.max_pool2d(y3, pool_size=[2, 2], strides=[2, 2])
s = R.sum(p, axis=[1], keepdims=True)
m = R.mean(p, axis=[2, 3])
c = R.concat([p, p], axis=1)
r = R.reshape(c, (2, -1))
R.output(s, m, r)""",
    "(s, m, r)",
)

# What TVM 0.27's ConvertLayout gives for GRAPH (same bindings, same attributes).
GRAPH_NHWC = module(
    f"x: {t(2, 3, 8, 8)}, w: {t(4, 3, 3, 3)}, b: {t(1, 4, 1, 1)}, g: {t(4)}, be: {t(4)}, "
    f"mu: {t(4)}, var: {t(4)}",
    """
lv = R.permute_dims(x, axes=[0, 2, 3, 1])
lv1 = R.permute_dims(w, axes=[0, 2, 3, 1])
y = R.nn.conv2d(lv, lv1, padding=[1, 1, 1, 1], data_layout="NHWC", kernel_layout="OHWI", out_layout="NHWC")
lv2 = R.permute_dims(b, axes=[0, 2, 3, 1])
y1 = R.add(y, lv2)
y2 = R.nn.relu(y1)
bn = R.nn.batch_norm(y2, g, be, mu, var, axis=3)
y3 = bn[0]
p = R.nn.max_pool2d(y3, pool_size=[2, 2], strides=[2, 2], layout="NHWC", out_layout="NHWC")
lv3 = R.sum(p, axis=[3], keepdims=True)
s = R.permute_dims(lv3, axes=[0, 3, 1, 2])
m = R.mean(p, axis=[1, 2], keepdims=False)
c = R.concat((p, p), axis=3)
lv4 = R.permute_dims(c, axes=[0, 3, 1, 2])
r = R.reshape(lv4, R.shape([2, 128]))
R.output(s, m, r)""",
    "(s, m, r)",
)


def inputs(mod: IRModule, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for p in mod.functions["main"].params:
        shape = tuple(int(d.value) for d in p.struct_info.shape)
        a = rng.standard_normal(shape)
        out.append((np.abs(a) + 0.5 if p.name == "var" else a).astype(p.struct_info.dtype))
    return out


def same_results(before: IRModule, after: IRModule) -> None:
    args = inputs(before)
    want, got = tvmlite.build(before)["main"](*args), tvmlite.build(after)["main"](*args)
    want, got = (want, got) if isinstance(want, tuple) else ((want,), (got,))
    for w, g in zip(want, got, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)


def test_graph_converts_as_tvm_does() -> None:
    after = ConvertLayout(NHWC)(GRAPH)
    assert tvmlite.structural_equal(after, GRAPH_NHWC), after.script()
    same_results(GRAPH, after)


CASES = {
    "chain-pools-norms-reductions": (
        f"x: {t(1, 4, 8, 8)}, w: {t(4, 4, 3, 3)}, g: {t(4)}, b: {t(4)}",
        """
y = R.nn.conv2d(x, w, padding=[1, 1, 1, 1])
z = R.nn.conv2d(y, w, padding=[1, 1, 1, 1])
a = R.nn.avg_pool2d(z, pool_size=[2, 2], strides=[2, 2])
n = R.nn.group_norm(a, g, b, num_groups=2, channel_axis=1, axes=[2, 3])
s = R.nn.softmax(n, axis=1)
m = R.argmax(s, axis=1, keepdims=False)
q = R.nn.adaptive_avg_pool2d(s, output_size=[1, 1])
c = R.concat([s, a], axis=1)
R.output(m, q, c)""",
        "(m, q, c)",
        NHWC,
        ['data_layout="NHWC"', "channel_axis=3", "axis=3", 'layout="NHWC"'],
    ),
    "lower-rank-bias-goes-back": (
        f"x: {t(1, 4, 6, 6)}, w: {t(4, 4, 1, 1)}, b: {t(4, 1, 1)}",
        "y = R.nn.conv2d(x, w)\nz = R.add(y, b)\ne = R.exp(z)\nR.output(e)",
        "e",
        NHWC,
        ["R.add(lv_2, b)"],
    ),
    "conv1d-kernel-default": (
        f"x: {t(2, 3, 9)}, w: {t(5, 3, 3)}",
        "y = R.nn.conv1d(x, w)\nz = R.nn.relu(y)\nm = R.max(z, axis=[2], keepdims=True)\nR.output(m)",
        "m",
        {"relax.nn.conv1d": ["NWC", "default"]},
        ['data_layout="NWC", kernel_layout="OIW"', "R.max(z, axis=[1], keepdims=True)"],
    ),
    "conv3d-pool-full-reduction": (
        f"x: {t(1, 2, 4, 5, 6)}, w: {t(3, 2, 2, 2, 2)}",
        "y = R.nn.conv3d(x, w)\nz = R.nn.max_pool3d(y, pool_size=[2, 2, 2])\n"
        "s = R.sum(z)\nR.output(z, s)",
        "(z, s)",
        {"relax.nn.conv3d": ["NDHWC", "DHWIO"]},
        ['layout="NDHWC"', "R.sum(z, axis=None, keepdims=False)"],
    ),
    "batch-norm-tuple-output": (
        f"x: {t(2, 3, 5, 5)}, w: {t(3, 3, 3, 3)}, g: {t(3)}, b: {t(3)}, mu: {t(3)}, var: {t(3)}",
        "y = R.nn.conv2d(x, w)\nbn = R.nn.batch_norm(y, g, b, mu, var, axis=1)\nR.output(bn)",
        "bn",
        NHWC,
        ["axis=3", "= lv_4, lv_5, lv_6\n"],
    ),
    "where-and-permute": (
        f"x: {t(1, 4, 4, 4)}, w: {t(4, 4, 1, 1)}, c: {t(1, 4, 4, 4, dtype='bool')}",
        'y = R.nn.conv2d(x, w)\nz = R.where(c, y, R.const(1.0, "float32"))\n'
        "q = R.permute_dims(z, axes=[0, 2, 3, 1])\nR.output(q)",
        "q",
        NHWC,
        ["R.where(lv_2, y,", "R.permute_dims(lv_3, axes=[0, 2, 3, 1])"],
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_layouts_change_results_do_not(name: str) -> None:
    params, body, ret, desired, expected = CASES[name]
    before = module(params, body, ret)
    after = ConvertLayout(desired)(before)
    text = after.script()
    for piece in expected:
        assert piece in text, text
    same_results(before, after)


def test_nothing_to_convert_returns_the_module() -> None:
    mod = module(f"x: {t(2, 3)}", "y = R.exp(x)\nR.output(y)", "y")
    assert ConvertLayout(NHWC)(mod) is mod
    nhwc = ConvertLayout(NHWC)(GRAPH)
    assert tvmlite.structural_equal(ConvertLayout(NHWC)(nhwc), nhwc)  # already there


@pytest.mark.parametrize(
    ("desired", "message"),
    [
        ({"relax.nn.max_pool2d": ["NHWC"]}, "cannot choose the layout of relax.nn.max_pool2d"),
        (
            {"relax.nn.conv2d": ["NCHW4c", "OIHW"]},
            "'NCHW4c' of relax.nn.conv2d is not a permutation",
        ),
        ({"relax.nn.conv2d": "NHWC"}, "needs \\[data layout, kernel layout\\]"),
        ({"relax.nn.conv2d": ["NHWC", "OHWI", "NHWC"]}, "needs \\[data layout, kernel layout\\]"),
    ],
)
def test_rejects_what_it_cannot_convert(desired: dict, message: str) -> None:
    with pytest.raises(tvmlite.TVMLiteError, match=message):
        ConvertLayout(desired)


def test_a_layout_naming_other_axes_is_a_located_error() -> None:
    with pytest.raises(tvmlite.ParseError, match="layout NDHWC does not name the axes of NCHW"):
        ConvertLayout({"relax.nn.conv2d": ["NDHWC", "default"]})(GRAPH)

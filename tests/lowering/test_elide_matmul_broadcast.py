"""ElideMatmulBroadcast: a matmul reads a batch-only `broadcast_to` operand from
its source (R.matmul broadcasts batch dims itself), and a `broadcast_to` that
changes no shape is its input. Checked on the graph and against NumPy."""

from __future__ import annotations

import numpy as np
from relax_text import float32_main

import tvmlite
from tvmlite.dsl import relax
from tvmlite.dsl.module import IRModule
from tvmlite.dsl.walk import walk
from tvmlite.lowering.passes import ElideMatmulBroadcast

HEADER = "# from tvm.script import ir as I\n# from tvm.script import relax as R\n\n"


def module(params: dict[str, tuple[int, ...]], body: str) -> IRModule:
    return tvmlite.parse(float32_main(params, body, HEADER))


def matmul_operands(mod: IRModule) -> list[tuple[str, ...]]:
    """For each matmul, what produces its operands (an op name, or 'param')."""
    producers: dict[relax.Var, str] = {}
    found = []
    for node in walk(mod["main"]):
        if isinstance(node, relax.VarBinding) and isinstance(node.value, relax.Call):
            op = node.value.op
            producers[node.var] = op.name if isinstance(op, relax.Op) else "call"
            if isinstance(op, relax.Op) and op.name == "relax.matmul":
                found.append(tuple(producers.get(a, "param") for a in node.value.args))
    return found


def rand(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype("float32")


# What torch.export makes of `x @ W.T` for a permuted (non-contiguous) x of
# shape (L, N, E): expand the weight to every batch, then bmm.
MHA = """
wt = R.permute_dims(w, axes=[1, 0])
xb = R.broadcast_to(x, R.shape([6, 2, 8]))
wb = R.broadcast_to(wt, R.shape([6, 8, 24]))
gv = R.matmul(xb, wb)
"""


def test_the_expanded_weight_is_read_unexpanded() -> None:
    mod = module({"x": (6, 2, 8), "w": (24, 8)}, MHA)
    assert matmul_operands(mod) == [("relax.broadcast_to", "relax.broadcast_to")]
    out = ElideMatmulBroadcast()(mod)
    assert matmul_operands(out) == [("param", "relax.permute_dims")]
    x, w = rand(6, 2, 8), rand(24, 8, seed=1)
    got = tvmlite.build(mod, cache=False)["main"](x, w)
    np.testing.assert_allclose(got, x @ w.T, rtol=1e-5, atol=1e-5)
    # built: no kernel writes the expanded copy
    lowered = tvmlite.lower(mod)
    assert not any("broadcast" in name for name in lowered.functions)


def test_broadcasts_the_product_needs_stay() -> None:
    """A broadcast that stretches a matrix dim, or one that gives the product its
    batch shape, is not the matmul's own broadcasting: kept."""
    stretch = "b = R.broadcast_to(w, R.shape([3, 8, 24]))\ngv = R.matmul(x, b)"
    mod = module({"x": (3, 4, 8), "w": (1, 8, 1)}, stretch)
    assert ElideMatmulBroadcast()(mod) is mod
    batch = "b = R.broadcast_to(w, R.shape([3, 8, 24]))\ngv = R.matmul(x, b)"
    mod = module({"x": (4, 8), "w": (8, 24)}, batch)
    assert ElideMatmulBroadcast()(mod) is mod
    x, w = rand(4, 8), rand(8, 24, seed=1)
    got = tvmlite.build(mod, cache=False)["main"](x, w)
    np.testing.assert_allclose(got, np.broadcast_to(x @ w, (3, 4, 24)), rtol=1e-5, atol=1e-5)

"""Cases: tensor creation, dtype conversion, copies, symbolic sizes, scalars read from
data, assertions, `torch.cond`, and operators torch.export does not write on CPU
(sparse products, torchvision's roi_align), made by retargeting a node."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from cases import Case, Fixed, f32, i64
from roi_align import ROIS, roi_align

X = f32(3, 4)


def _checked(condition):
    """x scaled by n read from data, with a check on n (the comparison is in the graph)."""

    def program(x, y):
        n = y.item()
        torch._check(condition(n))
        return x * n

    return program


CASES = [
    # ------------------------------------------------------------ creation
    Case("arange.default", lambda x: x[0] + torch.arange(4), (X,)),
    Case("arange.start", lambda x: x[0] + torch.arange(2, 6), (X,)),
    Case("arange.start_step", lambda x: x[0] + torch.arange(0.0, 1.0, 0.25), (X,)),
    Case(
        "arange.default", lambda x: torch.arange(5, dtype=torch.int32), (X,), "dtype", check="exact"
    ),
    Case("zeros.default", lambda x: x + torch.zeros(3, 4), (X,)),
    Case(
        "zeros.default", lambda x: torch.zeros(2, 3, dtype=torch.int64), (X,), "int", check="exact"
    ),
    Case("ones.default", lambda x: x + torch.ones(4), (X,)),
    Case("full.default", lambda x: x + torch.full((3, 4), 2.5), (X,)),
    Case("full.default", lambda x: torch.full((2, 2), 7), (X,), "int", check="exact"),
    Case("full.default", lambda x: torch.full((2, 2), True), (X,), "bool", check="exact"),
    Case("empty.memory_format", lambda x: torch.empty(3, 4), (X,), check="shape"),
    Case(
        "empty.default", lambda x: torch.zeros(3, 4), (X,), check="shape", retarget="zeros.default"
    ),
    Case(
        "empty_permuted.default",
        lambda x: torch.empty_permuted((2, 3), (1, 0)),
        (X,),
        check="shape",
    ),
    Case("empty_like.default", lambda x: torch.empty_like(x), (X,), check="shape"),
    Case("zeros_like.default", lambda x: torch.zeros_like(x), (X,)),
    Case("ones_like.default", lambda x: torch.ones_like(x), (X,)),
    Case("full_like.default", lambda x: torch.full_like(x, 3.5), (X,)),
    Case(
        "full_like.default",
        lambda x: torch.full_like(x, 2, dtype=torch.int64),
        (X,),
        "dtype",
        check="exact",
    ),
    Case("new_ones.default", lambda x: x.new_ones(2, 3), (X,)),
    Case("new_zeros.default", lambda x: x.new_zeros((2, 3)), (i64(3, 4),), check="exact"),
    Case("eye.default", lambda x: torch.eye(3), (X,)),
    Case("eye.m", lambda x: torch.eye(3, 4, dtype=torch.int64), (X,), check="exact"),
    Case("fill.Scalar", lambda x: torch.fill(x, 1.5), (X,)),
    Case("fill_.Scalar", lambda x: x.clone().fill_(2.0), (X,)),
    Case("zero_.default", lambda x: x.clone().zero_(), (X,)),
    Case("scalar_tensor.default", lambda x: x + torch.scalar_tensor(3.0), (X,)),
    Case("linspace.default", lambda x: torch.linspace(0.0, 1.0, 5), (X,)),
    Case("hamming_window.default", lambda x: torch.hamming_window(6), (X,)),
    Case("hamming_window.periodic", lambda x: torch.hamming_window(6, False), (X,)),
    Case("hamming_window.periodic_alpha", lambda x: torch.hamming_window(6, True, 0.5), (X,)),
    Case(
        "hamming_window.periodic_alpha_beta",
        lambda x: torch.hamming_window(6, True, 0.5, 0.4),
        (X,),
    ),
    Case("randn.default", lambda x: torch.randn(3, 4), (X,), check="shape"),
    Case("randn_like.default", lambda x: torch.randn_like(x), (X,), check="shape"),
    Case(
        "exponential.default",
        lambda x: x.clone().exponential_(),
        (X,),
        check="shape",
        retarget="exponential_.default",
    ),
    Case("bernoulli.p", lambda x: torch.bernoulli(x, 0.5), (X,), check="shape"),
    Case(
        "native_dropout.default",
        lambda x: F.dropout(x, 0.5, training=True),
        (X,),
        check="shape",
        decompose=True,
    ),
    Case("dropout_.default", lambda x: F.dropout(x.clone(), 0.5, False, True) * 2, (X,)),
    # ------------------------------------------------------------ dtypes and copies
    Case("to.dtype", lambda x: x.to(torch.float64), (X,)),
    Case("to.dtype", lambda x: x.to(torch.int32), (X,), "to_int", check="exact"),
    Case("to.dtype_layout", lambda x: torch.ops.aten.to.dtype_layout(x, dtype=torch.float64), (X,)),
    Case(
        "_to_copy.default",
        lambda x: x.to(torch.float16),
        (X,),
        decompose=True,
        atol=1e-3,
        rtol=1e-3,
    ),
    Case(
        "_to_copy.default", lambda x: x.to(torch.bool), (X,), "bool", decompose=True, check="exact"
    ),
    Case("_assert_tensor_metadata.default", lambda x: x.to(torch.float64) * 2, (X,)),
    Case("type_as.default", lambda x, y: x.type_as(y), (X, i64(2))),
    Case("copy_.default", lambda x, y: x.clone().copy_(y), (X, f32(4))),
    Case("copy_.default", lambda x, y: x.clone().copy_(y), (X, i64(3, 4)), "cast"),
    Case("copy.default", lambda x, y: torch.ops.aten.copy(x, y), (X, f32(3, 4))),
    # ------------------------------------------------------------ tuples and scalars
    Case("getitem", lambda x: torch.max(x, 1)[1], (X,), check="exact"),
    Case("item.default", lambda x, y: x * y.sum().item(), (X, f32(2))),
    Case(
        "_local_scalar_dense.default", lambda x, y: x * y.sum().item(), (X, f32(2)), decompose=True
    ),
    Case("item.default", lambda x, n: x * n.item(), (X, Fixed(torch.tensor([3]))), "int"),
    # torch 2.13 writes the range check as _assert_scalar; older releases wrote this
    Case(
        "sym_constrain_range_for_size.default",
        _checked(lambda n: n >= 0),
        (X, Fixed(torch.tensor([2]))),
        retarget="_assert_scalar.default",
    ),
    # ------------------------------------------------------------ symbolic sizes
    Case("sym_size.int", lambda x: x.view(x.size(0), -1), (f32(8, 2, 3),), dynamic={0: 0}),
    Case("mul", lambda x: x.reshape(x.size(0) * 2, -1), (f32(8, 2, 3),), dynamic={0: 0}),
    Case("add", lambda x: torch.zeros(x.size(0) + 1, 2), (f32(8, 2, 3),), dynamic={0: 0}),
    Case("sub", lambda x: torch.zeros(x.size(0) - 1, 2), (f32(8, 2, 3),), dynamic={0: 0}),
    Case("floordiv", lambda x: torch.zeros(x.size(0) // 2, 2), (f32(4, 2, 3),), dynamic={0: 0}),
    Case("mod", lambda x: torch.zeros(x.size(0) % 3 + 2, 2), (f32(8, 2, 3),), dynamic={0: 0}),
    Case("ge", _checked(lambda n: n >= 1), (X, Fixed(torch.tensor([2])))),
    Case("gt", _checked(lambda n: n > 1), (X, Fixed(torch.tensor([2])))),
    Case("le", _checked(lambda n: n <= 3), (X, Fixed(torch.tensor([2])))),
    Case("lt", _checked(lambda n: n < 3), (X, Fixed(torch.tensor([2])))),
    Case("eq", _checked(lambda n: n % 2 == 0), (X, Fixed(torch.tensor([2])))),
    Case("sym_not", _checked(lambda n: n != 1), (X, Fixed(torch.tensor([2])))),
    # torch writes `n != 1` as sym_not(eq): `ne` is the comparison node retargeted
    Case(
        "ne.default",
        _checked(lambda n: n % 2 == 0),
        (X, Fixed(torch.tensor([2]))),
        retarget="eq|ne.default",
    ),
    Case(
        "ne",
        _checked(lambda n: n % 2 == 0),
        (X, Fixed(torch.tensor([2]))),
        retarget="eq|ne.default",
    ),
    Case("_assert_scalar.default", _checked(lambda n: n >= 0), (X, Fixed(torch.tensor([2])))),
    Case("neg", lambda x: x * (-x.size(0)), (f32(8, 3),), dynamic={0: 0}),
    Case("slice.Tensor", lambda x: x[1:] * 2, (f32(8, 3),), "symbolic", dynamic={0: 0}),
    # ------------------------------------------------------------ not written on CPU
    Case("_sparse_mm.default", torch.mm, (f32(3, 4), f32(4, 5)), retarget="mm.default"),
    Case(
        "_sparse_addmm.default",
        torch.addmm,
        (f32(5), f32(3, 4), f32(4, 5)),
        retarget="addmm.default",
    ),
    Case(
        "to_sparse.default", lambda x: torch.ops.aten.alias(x) * 2, (X,), retarget="alias.default"
    ),
    Case(
        "roi_align.default",
        lambda x, r: roi_align(x, r, 1.0, 2, 2, -1, False),
        (f32(2, 3, 8, 8), ROIS),
    ),
    Case(
        "roi_align.default",
        lambda x, r: roi_align(x, r, 0.5, 3, 2, 2, True),
        (f32(2, 3, 8, 8), ROIS),
        "aligned",
    ),
    # ------------------------------------------------------------ effects and control
    Case(
        "_assert_async.msg",
        lambda x: torch._assert_async(x.sum() > -100, "too small") or x + 1,
        (X,),
    ),
    Case("_assert_async.default", lambda x: torch._assert_async(x.sum() > -100) or x + 1, (X,)),
    Case("cond", lambda x: torch.cond(x.sum() > 0, lambda t: t * 2, lambda t: t - 1, (x,)), (X,)),
    Case(
        "cond",
        lambda x: torch.cond(x.sum() < -100, lambda t: t * 2, lambda t: t - 1, (x,)),
        (X,),
        "false_branch",
    ),
]

"""Cases: shapes and views, joining and splitting, indexing, scatter/gather."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from cases import Case, Fixed, boolean, f32

X = f32(2, 3, 4)

CASES = [
    # ------------------------------------------------------------ views
    Case("view.default", lambda x: x.view(6, 4), (X,)),
    Case("view.default", lambda x: x.view(-1), (X,), "flat"),
    Case("reshape.default", lambda x: torch.ops.aten.reshape(x, [4, 6]), (X,)),
    Case("reshape_as.default", lambda x, y: torch.ops.aten.reshape_as(x, y), (X, f32(4, 6))),
    Case("as_strided.default", lambda x: torch.ops.aten.as_strided(x, [6, 4], [4, 1]), (X,)),
    Case("flatten.using_ints", lambda x: x.flatten(1), (X,)),
    Case("flatten.using_ints", lambda x: x.flatten(), (X,), "all"),
    Case("unflatten.int", lambda x: x.unflatten(2, (2, 2)), (X,)),
    Case("permute.default", lambda x: x.permute(2, 0, 1), (X,)),
    Case("transpose.int", lambda x: x.transpose(0, 2), (X,)),
    Case("squeeze.dim", lambda x: x.squeeze(1), (f32(2, 1, 3),)),
    Case("squeeze.default", lambda x: torch.ops.aten.squeeze.default(x), (f32(2, 1, 3, 1),)),
    Case("squeeze.dims", lambda x: x.squeeze((1, 3)), (f32(2, 1, 3, 1),)),
    Case("unsqueeze.default", lambda x: x.unsqueeze(1), (X,)),
    Case("expand.default", lambda x: x.expand(2, 3, 4), (f32(3, 1),)),
    Case("expand.default", lambda x: x.expand(5, -1, -1), (f32(1, 3, 4),), "minus_one"),
    Case("expand_as.default", lambda x, y: torch.ops.aten.expand_as(x, y), (f32(3, 1), X)),
    Case("broadcast_to.default", lambda x: torch.ops.aten.broadcast_to(x, [2, 3, 4]), (f32(3, 1),)),
    Case("alias.default", lambda x: torch.ops.aten.alias(x) + 1, (X,)),
    Case("clone.default", lambda x: x.clone() * 2, (X,)),
    Case("contiguous.default", lambda x: torch.ops.aten.contiguous(x) * 2, (X,)),
    Case("detach.default", lambda x: torch.ops.aten.detach(x) * 2, (X,)),
    Case("detach_.default", lambda x: torch.ops.aten.detach_(x.clone()) * 2, (X,)),
    Case("dropout.default", lambda x: F.dropout(x, 0.5, training=False) * 2, (X,)),
    Case("lift_fresh_copy.default", lambda x: x + torch.tensor([1.0, 2.0, 3.0, 4.0]), (X,)),
    # ------------------------------------------------------------ join, split, repeat
    Case("cat.default", lambda x, y: torch.cat([x, y], 1), (X, f32(2, 5, 4))),
    Case("cat.default", lambda x, y: torch.cat([x, y]), (X, X), "dim0"),
    Case("concat.default", lambda x, y: torch.concat([x, y], -1), (X, X)),
    Case("stack.default", lambda x, y: torch.stack([x, y], 1), (X, X)),
    Case("split.Tensor", lambda x: torch.split(x, 2, 2), (f32(2, 3, 5),)),
    Case("split_with_sizes.default", lambda x: torch.split(x, [1, 3], 2), (X,)),
    Case("chunk.default", lambda x: torch.chunk(x, 2, 2), (X,)),
    Case("unbind.int", lambda x: torch.unbind(x, 1), (X,)),
    Case("unbind.int", lambda x: torch.unbind(x, 0), (f32(1, 3),), "single"),
    Case("meshgrid.indexing", lambda a, b: torch.meshgrid(a, b, indexing="xy"), (f32(3), f32(4))),
    Case(
        "meshgrid.default", lambda a, b: torch.ops.aten.meshgrid.default([a, b]), (f32(3), f32(4))
    ),
    Case("repeat.default", lambda x: x.repeat(2, 1, 3), (X,)),
    Case("tile.default", lambda x: torch.ops.aten.tile(x, [2, 2]), (X,)),
    Case("flip.default", lambda x: torch.flip(x, (0, 2)), (X,)),
    Case("roll.default", lambda x: torch.roll(x, 1, 2), (X,)),
    Case("roll.default", lambda x: torch.roll(x, (1, -2), (0, 1)), (X,), "two_dims"),
    Case("roll.default", lambda x: torch.roll(x, 5), (X,), "flat"),
    # ------------------------------------------------------------ slicing
    Case("slice.Tensor", lambda x: x[:, 1:3], (X,)),
    Case("slice.Tensor", lambda x: x[..., ::2], (X,), "step"),
    Case("slice.Tensor", lambda x: x[:, -2:], (X,), "negative"),
    Case("narrow.default", lambda x: torch.narrow(x, 2, 1, 2), (X,)),
    Case("select.int", lambda x: x[:, 1], (X,)),
    Case("select.int", lambda x: x[..., -1], (X,), "negative"),
    # ------------------------------------------------------------ indexing
    Case("index.Tensor", lambda x, i: x[i], (X, Fixed(torch.tensor([1, 0, 1])))),
    Case(
        "index.Tensor",
        lambda x, i, j: x[i, j],
        (X, Fixed(torch.tensor([1, 0])), Fixed(torch.tensor([2, 0]))),
        "zipped",
    ),
    Case("index.Tensor", lambda x, i: x[:, i], (X, Fixed(torch.tensor([2, 0]))), "axis1"),
    Case(
        "index.Tensor",
        lambda x, i, j: x[i, :, j],
        (X, Fixed(torch.tensor([1, 0])), Fixed(torch.tensor([3, 1]))),
        "sliced",
    ),
    Case(
        "index_select.default",
        lambda x, i: torch.index_select(x, 2, i),
        (X, Fixed(torch.tensor([3, 0, 3]))),
    ),
    Case(
        "take.default", lambda x, i: torch.take(x, i), (X, Fixed(torch.tensor([[0, 5], [23, 7]])))
    ),
    Case(
        "gather.default",
        lambda x, i: torch.gather(x, 2, i),
        (X, Fixed(torch.tensor([[[0, 3], [1, 1], [2, 0]], [[3, 3], [0, 1], [2, 2]]]))),
    ),
    Case(
        "scatter.src",
        lambda x, i, s: torch.scatter(x, 1, i, s),
        (f32(3, 4), Fixed(torch.tensor([[0, 2], [1, 3], [3, 0]])), f32(3, 2)),
    ),
    Case(
        "scatter.value",
        lambda x, i: torch.scatter(x, 1, i, 2.5),
        (f32(3, 4), Fixed(torch.tensor([[0, 2], [1, 3], [3, 0]]))),
    ),
    Case(
        "index_put.default",
        lambda x, i, v: torch.ops.aten.index_put(x, [i], v),
        (f32(5, 3), Fixed(torch.tensor([4, 0])), f32(2, 3)),
    ),
    Case(
        "index_put.default",
        lambda x, i, v: torch.ops.aten.index_put(x, [i], v, accumulate=True),
        (f32(5, 3), Fixed(torch.tensor([1, 1, 3])), f32(3, 3)),
        "accumulate",
    ),
    Case(
        "index_put.default",
        lambda x, i, v: torch.ops.aten.index_put(x, [None, i], v),
        (f32(5, 3), Fixed(torch.tensor([2, 0])), f32(5, 2)),
        "none_first",
    ),
    Case(
        "index_put_.default",
        lambda x, i, v: x.clone().index_put_([i], v),
        (f32(5, 3), Fixed(torch.tensor([4, 0])), f32(2, 3)),
    ),
    Case("masked_fill.Scalar", lambda x, m: x.masked_fill(m, -1.5), (X, boolean(2, 3, 4))),
    Case(
        "masked_fill.Scalar",
        lambda x, m: x.masked_fill(m, float("-inf")),
        (X, boolean(2, 3, 4)),
        "inf",
    ),
    Case("masked_fill_.Scalar", lambda x, m: x.clone().masked_fill_(m, 0.5), (X, boolean(2, 3, 4))),
    Case(
        "masked_select.default",
        lambda x, m: torch.masked_select(x, m),
        (X, Fixed(torch.arange(24).reshape(2, 3, 4) % 3 == 0)),
    ),
    Case("where.self", torch.where, (boolean(2, 3, 4), X, X)),
    Case(
        "where.self",
        lambda c, x: torch.where(c, x, 0.0),
        (boolean(2, 3, 4), X),
        "scalar",
        decompose=True,
    ),
    Case(
        "slice_scatter.default",
        lambda x, s: torch.slice_scatter(x, s, 1, 1, 3),
        (f32(3, 5), f32(3, 2)),
    ),
    Case(
        "slice_scatter.default",
        lambda x, s: torch.slice_scatter(x, s, 0, step=2),
        (f32(4, 3), f32(2, 3)),
        "step",
    ),
    Case(
        "embedding.default",
        lambda w, i: F.embedding(i, w),
        (f32(10, 4), Fixed(torch.tensor([[1, 7, 3], [0, 9, 9]]))),
    ),
    Case(
        "embedding.default",
        lambda w, i: F.embedding(i, w),
        (f32(10, 4), Fixed(torch.tensor([2, 5]))),
        "1d",
    ),
    Case(
        "one_hot.default",
        lambda i: F.one_hot(i, 5),
        (Fixed(torch.tensor([[0, 4], [2, 1]])),),
        check="exact",
    ),
    Case(
        "cross_entropy_loss.default",
        lambda x, t: F.cross_entropy(x, t, ignore_index=1),
        (f32(4, 5), Fixed(torch.tensor([0, 1, 4, 2]))),
        "ignore_index",
    ),
]

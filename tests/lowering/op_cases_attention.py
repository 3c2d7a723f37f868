"""Numerics cases: attention (nn.attention, attention_bias) and variable-length
attention (nn.attention_var_len)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from op_cases_common import Case, Inputs, Ref, case, f64

G = Inputs(11)


def attention_ref(scale: float | None, causal: str | None, window: int | None = None) -> Ref:
    """Scaled dot-product attention over (batch, seq, heads, dim); the causal mask
    removes the masked keys from the softmax (TopLeft: k <= q; BottomRight:
    k <= q + |seq_kv - seq|, as TVM shifts it), a window keeps the last `window`
    of them. Key heads are shared by groups of query heads; a row that sees no
    key is 0."""

    def ref(q: np.ndarray, k: np.ndarray, v: np.ndarray, bias: Any = None) -> np.ndarray:
        group = q.shape[2] // k.shape[2]
        k, v = np.repeat(f64(k), group, axis=2), np.repeat(f64(v), group, axis=2)
        sc = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
        s = np.einsum("bqhd,bkhd->bhqk", f64(q), k) * sc
        if bias is not None:
            s = s + f64(bias)
        seq, seq_kv = s.shape[-2:]
        rows, keys = np.arange(seq)[:, None], np.arange(seq_kv)[None, :]
        allowed = np.ones((seq, seq_kv), bool)
        if causal is not None:
            last = rows + (abs(seq_kv - seq) if causal == "BottomRight" else 0)
            allowed = keys <= last
            if window is not None:
                allowed &= keys > last - window
        s = np.where(allowed, s, -np.inf)
        top = np.where(allowed.any(-1, keepdims=True), s.max(-1, keepdims=True, initial=-np.inf), 0)
        p = np.exp(s - top)
        total = p.sum(-1, keepdims=True)
        p = np.divide(p, total, out=np.zeros_like(p), where=total > 0)
        return np.einsum("bhqk,bkhd->bqhd", p, v).astype(q.dtype)

    return ref


def var_len_ref(scale: float | None, causal: str | None, window: int | None = None) -> Ref:
    """Attention per sequence: queries `starts_q[b]:starts_q[b + 1]` over keys
    `starts_k[b]:starts_k[b + 1]`; rows outside every sequence are 0."""
    one = attention_ref(scale, causal, window)

    def ref(q: np.ndarray, k: np.ndarray, v: np.ndarray, starts_q: Any, _: Any, starts_k: Any):
        out = np.zeros(q.shape[:3] + v.shape[3:], q.dtype)
        for b in range(len(starts_q) - 1):
            rows = slice(starts_q[b], starts_q[b + 1])
            keys = slice(starts_k[b], starts_k[b + 1])
            out[:, rows] = one(q[:, rows], k[:, keys], v[:, keys])
        return out

    return ref


def _attention_cases() -> list[Case]:
    u = G.uniform
    q, k, v = u(2, 3, 2, 4), u(2, 3, 2, 4), u(2, 3, 2, 4)
    k5, v5 = u(1, 5, 2, 4), u(1, 5, 2, 6)
    q1 = u(1, 3, 2, 4)
    return [
        case("attention-basic", "R.nn.attention(x, y, z)", (q, k, v), attention_ref(None, None)),
        case(
            "attention-scale",
            "R.nn.attention(x, y, z, scale=0.3)",
            (q, k, v),
            attention_ref(0.3, None),
        ),
        case(
            "attention-kv-longer-dim-v",
            "R.nn.attention(x, y, z)",
            (q1, k5, v5),
            attention_ref(None, None),
        ),
        case(
            "attention-bias",
            "R.nn.attention(x, y, z, w)",
            (q, k, v, u(2, 2, 3, 3)),
            attention_ref(None, None),
        ),
        case(
            "attention-bias-bcast",
            "R.nn.attention(x, y, z, w)",
            (q1, k5, v5, u(1, 1, 3, 5)),
            attention_ref(None, None),
        ),
        case(
            "attention-causal-topleft",
            'R.nn.attention(x, y, z, causal_mask="TopLeft")',
            (q, k, v),
            attention_ref(None, "TopLeft"),
        ),
        case(
            "attention-causal-bottomright",
            'R.nn.attention(x, y, z, causal_mask="BottomRight")',
            (q1, k5, v5),
            attention_ref(None, "BottomRight"),
        ),
        case(
            "attention-grouped-heads",
            'R.nn.attention(x, y, z, causal_mask="TopLeft")',
            (u(2, 5, 4, 3), u(2, 6, 2, 3), u(2, 6, 2, 2)),
            attention_ref(None, "TopLeft"),
        ),
        case(
            "attention-causal-bottomright-more-queries",
            'R.nn.attention(x, y, z, causal_mask="BottomRight")',
            (u(1, 5, 2, 4), u(1, 3, 2, 4), u(1, 3, 2, 4)),
            attention_ref(None, "BottomRight"),
        ),
    ]


def _offsets(*starts: int) -> np.ndarray:
    return np.array(starts, "int32")


def _var_len_cases() -> list[Case]:
    u = G.uniform
    q, k, v = u(1, 10, 4, 8), u(1, 12, 2, 8), u(1, 12, 2, 3)  # grouped: 2 query heads a key head
    max_len = np.array(7, "int32")
    sq, sk = _offsets(0, 2, 7, 10), _offsets(0, 5, 9, 12)
    partial = _offsets(0, 3, 3, 8), _offsets(0, 4, 4, 12)  # an empty sequence, rows 8-9 unused
    call = "R.nn.attention_var_len(x, y, z, w, u, v, u{})"
    table: list[tuple[str, str, tuple[np.ndarray, np.ndarray], Ref]] = [
        ("plain", "", (sq, sk), var_len_ref(None, None)),
        ("scale", ", scale=0.25", (sq, sk), var_len_ref(0.25, None)),
        ("topleft", ', causal_mask="TopLeft"', (sq, sk), var_len_ref(None, "TopLeft")),
        ("bottomright", ', causal_mask="BottomRight"', (sq, sk), var_len_ref(None, "BottomRight")),
        (
            "window",
            ', causal_mask="BottomRight", window_size=2',
            (sq, sk),
            var_len_ref(None, "BottomRight", 2),
        ),
        ("empty-and-unused", ', causal_mask="TopLeft"', partial, var_len_ref(None, "TopLeft")),
        ("one-sequence", "", (_offsets(0, 10), _offsets(0, 12)), var_len_ref(None, None)),
    ]
    cases = [
        case(f"attention-var-len-{name}", call.format(attrs), (q, k, v, a, max_len, b), ref)
        for name, attrs, (a, b), ref in table
    ]
    half = (q.astype("float16"), k.astype("float16"), v.astype("float16"), sq, max_len, sk)
    cases.append(
        case("attention-var-len-float16", call.format(""), half, var_len_ref(None, None), tol=4e-3)
    )
    return cases


CASES: list[Case] = _attention_cases() + _var_len_cases()

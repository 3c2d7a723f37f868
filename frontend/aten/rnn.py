"""Recurrent layers (`aten.lstm`, `aten.gru`, `aten.rnn_tanh`, one layer, either
direction), unrolled over a static sequence length into matmuls and gates as TVM's
translator unrolls them.

The node's value is PyTorch's tuple: the output sequence, then the final hidden
state(s). TVM returns the sequence alone for LSTM and GRU; here the final states are
kept as calls that are bound only if the model reads them, so a model that does not
gets TVM's text."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from torch import fx

from tvmlite.dsl import relax, tir
from tvmlite.frontend.context import Converting
from tvmlite.frontend.registry import register


@dataclass
class _Direction:
    weight_ih: relax.Expr
    weight_hh: relax.Expr
    bias_ih: relax.Expr | None
    bias_hh: relax.Expr | None
    h0: relax.Expr
    c0: relax.Expr | None = None


def _dims(conv: Converting, node: fx.Node, x: relax.Expr, batch_first: bool) -> tuple[int, Any]:
    shape = conv.shape(x)
    seq, batch = (shape[1], shape[0]) if batch_first else (shape[0], shape[1])
    if not isinstance(seq, tir.IntImm):
        raise conv.error(node, "a recurrent layer needs a static sequence length")
    return seq.value, batch.value if isinstance(batch, tir.IntImm) else batch


def _step(conv: Converting, x: relax.Expr, t: int) -> relax.Var:
    return conv.emit_call("take", x, conv.const(t, "int64"), axis=0, mode="clip")


def _gate(conv: Converting, gates: relax.Expr, k: int, size: int) -> relax.Var:
    return conv.emit_call("strided_slice", gates, axes=[1], begin=[k * size], end=[(k + 1) * size])


@dataclass(frozen=True)
class Recurrent:
    """One of LSTM (4 gates), GRU (3) or tanh RNN (1)."""

    kind: str

    @property
    def gates(self) -> int:
        return {"lstm": 4, "gru": 3, "rnn_tanh": 1}[self.kind]

    def __call__(self, conv: Converting, node: fx.Node) -> Any:
        args = conv.args(node)
        x = args[0]
        hx = args[1] if len(args) > 1 else None
        params = args[2] if len(args) > 2 else None
        has_biases = args[3] if len(args) > 3 else True
        layers = args[4] if len(args) > 4 else 1
        bidirectional = args[7] if len(args) > 7 else False
        batch_first = args[8] if len(args) > 8 else False
        if layers > 1:
            raise conv.error(node, f"a {layers}-layer {self.kind} is not supported (1 layer)")
        if not params or len(params) < 2:
            raise conv.error(node, "the layer's weights are missing")
        seq, batch = _dims(conv, node, x, batch_first)
        hidden = conv.static_dim(params[0], 0) // self.gates
        dtype = conv.dtype(x)
        per_dir = 4 if has_biases else 2
        directions = []
        for d in range(2 if bidirectional else 1):
            w = params[d * per_dir : (d + 1) * per_dir]
            if len(w) < 2:
                raise conv.error(node, "the layer's backward weights are missing")
            bias_ih = w[2] if has_biases else None
            bias_hh = w[3] if has_biases else None
            directions.append(_Direction(w[0], w[1], bias_ih, bias_hh, None))
        self._initial_states(conv, hx, directions, batch, hidden, dtype)
        seq_in = conv.emit_call("permute_dims", x, axes=[1, 0, 2]) if batch_first else x
        outs, finals = [], []
        for d, direction in enumerate(directions):
            out, final = self._unroll(conv, seq_in, direction, seq, hidden, dtype, d == 1)
            outs.append(out)
            finals.append(final)
        output = outs[0] if len(outs) == 1 else conv.emit_call("concat", tuple(outs), axis=2)
        if self.kind == "rnn_tanh":
            if len(finals) == 2:
                h_n = conv.emit_call("stack", (finals[0][0], finals[1][0]), axis=0)
            else:
                h_n = conv.emit_call("expand_dims", finals[0][0], axis=0)
            if batch_first:
                output = conv.emit_call("permute_dims", output, axes=[1, 0, 2])
            return conv.emit(relax.Tuple((output, h_n)))
        if batch_first:
            output = conv.emit_call("permute_dims", output, axes=[1, 0, 2])
        states = [_stacked(conv, [f[i] for f in finals]) for i in range(len(finals[0]))]
        return (output, *states)

    def _initial_states(
        self,
        conv: Converting,
        hx: Any,
        directions: list[_Direction],
        batch: Any,
        hidden: int,
        dtype: str,
    ) -> None:
        lstm = self.kind == "lstm"
        states = list(hx) if lstm and hx is not None and len(hx) >= 2 else None
        single = hx if not lstm else None
        for d, direction in enumerate(directions):
            index = conv.const(d, "int64")
            if states is not None:
                direction.h0 = conv.emit_call("take", states[0], index, axis=0, mode="clip")
                direction.c0 = conv.emit_call("take", states[1], index, axis=0, mode="clip")
            elif single is not None:
                direction.h0 = conv.emit_call("take", single, index, axis=0, mode="clip")
            else:
                direction.h0 = conv.emit_call("zeros", (batch, hidden), dtype)
                if lstm:
                    direction.c0 = conv.emit_call("zeros", (batch, hidden), dtype)
        if states is not None:
            return
        # TVM takes the backward initial states after the forward ones; LSTM zeros come
        # forward h, forward c, then backward h, backward c (as emitted above)

    def _unroll(
        self,
        conv: Converting,
        x: relax.Expr,
        d: _Direction,
        seq: int,
        hidden: int,
        dtype: str,
        reverse: bool,
    ) -> tuple[relax.Var, tuple[Any, ...]]:
        steps = range(seq - 1, -1, -1) if reverse else range(seq)
        if self.kind == "lstm":
            return self._lstm(conv, x, d, steps, hidden, reverse)
        if self.kind == "gru":
            return self._gru(conv, x, d, steps, hidden, dtype, reverse)
        return self._rnn(conv, x, d, steps, reverse)

    def _lstm(self, conv, x, d, steps, hidden, reverse):  # noqa: ANN001, ANN202
        w_ih = conv.emit_call("permute_dims", d.weight_ih, axes=[1, 0])
        w_hh = conv.emit_call("permute_dims", d.weight_hh, axes=[1, 0])
        h, c = d.h0, d.c0
        outputs = []
        for t in steps:
            x_t = _step(conv, x, t)
            ih = conv.emit_call("matmul", x_t, w_ih)
            hh = conv.emit_call("matmul", h, w_hh)
            gates = conv.emit_call("add", ih, hh)
            if d.bias_ih is not None:
                gates = conv.emit_call("add", gates, d.bias_ih)
            if d.bias_hh is not None:
                gates = conv.emit_call("add", gates, d.bias_hh)
            i, f, g, o = (_gate(conv, gates, k, hidden) for k in range(4))
            i, f = conv.emit_call("sigmoid", i), conv.emit_call("sigmoid", f)
            g, o = conv.emit_call("tanh", g), conv.emit_call("sigmoid", o)
            c = conv.emit(
                conv.call("add", conv.call("multiply", f, c), conv.call("multiply", i, g))
            )
            h = conv.emit(conv.call("multiply", o, conv.call("tanh", c)))
            outputs.append(h)
        if reverse:
            outputs.reverse()
        return conv.emit_call("stack", tuple(outputs), axis=0), (h, c)

    def _gru(self, conv, x, d, steps, hidden, dtype, reverse):  # noqa: ANN001, ANN202
        def rows(w: relax.Expr, k: int) -> relax.Var:
            return conv.emit_call(
                "strided_slice", w, axes=[0], begin=[k * hidden], end=[(k + 1) * hidden]
            )

        parts = [rows(w, k) for k in range(3) for w in (d.weight_ih, d.weight_hh)]
        w_t = [conv.emit_call("permute_dims", p, axes=[1, 0]) for p in parts]
        (ih_r, hh_r, ih_z, hh_z, ih_n, hh_n) = w_t
        biased = d.bias_ih is not None and d.bias_hh is not None
        h = d.h0
        outputs = []
        for t in steps:
            x_t = _step(conv, x, t)

            def gate(w_i: relax.Expr, w_h: relax.Expr, k: int) -> relax.Var:
                a = conv.emit_call("matmul", x_t, w_i)  # noqa: B023
                b = conv.emit_call("matmul", h, w_h)  # noqa: B023
                if biased:
                    bi, bh = rows(d.bias_ih, k), rows(d.bias_hh, k)
                    total = conv.call("add", conv.call("add", conv.call("add", a, bi), b), bh)
                else:
                    total = conv.call("add", a, b)
                return conv.emit(conv.call("sigmoid", total))

            r = gate(ih_r, hh_r, 0)
            z = gate(ih_z, hh_z, 1)
            n_i = conv.emit_call("matmul", x_t, ih_n)
            n_h = conv.emit_call("matmul", h, hh_n)
            if biased:
                bi, bh = rows(d.bias_ih, 2), rows(d.bias_hh, 2)
                pre = conv.call(
                    "add",
                    conv.call("add", n_i, bi),
                    conv.call("multiply", r, conv.call("add", n_h, bh)),
                )
            else:
                pre = conv.call("add", n_i, conv.call("multiply", r, n_h))
            n = conv.emit(conv.call("tanh", pre))
            keep = conv.emit_call("subtract", conv.const(1.0, dtype), z)
            h = conv.emit(
                conv.call("add", conv.call("multiply", keep, n), conv.call("multiply", z, h))
            )
            outputs.append(h)
        if reverse:
            outputs.reverse()
        return conv.emit_call("stack", tuple(outputs), axis=0), (h,)

    def _rnn(self, conv, x, d, steps, reverse):  # noqa: ANN001, ANN202
        w_ih = conv.emit_call("permute_dims", d.weight_ih, axes=[1, 0])
        w_hh = conv.emit_call("permute_dims", d.weight_hh, axes=[1, 0])
        bias = None
        if d.bias_ih is not None and d.bias_hh is not None:
            bias = conv.emit_call("add", d.bias_ih, d.bias_hh)
        h = d.h0
        outputs = []
        for t in steps:
            x_t = _step(conv, x, t)
            total = conv.emit_call(
                "add", conv.emit_call("matmul", x_t, w_ih), conv.emit_call("matmul", h, w_hh)
            )
            if bias is not None:
                total = conv.emit_call("add", total, bias)
            h = conv.emit_call("tanh", total)
            outputs.append(h)
        if reverse:
            outputs.reverse()
        return conv.emit_call("stack", tuple(outputs), axis=0), (h,)


def _stacked(conv: Converting, finals: list[relax.Expr]) -> relax.Expr:
    """A final state (per direction) as PyTorch's (directions, batch, hidden): left
    unbound, so it costs nothing unless the model reads it."""
    if len(finals) == 1:
        return conv.call("expand_dims", finals[0], axis=0)
    return conv.call("stack", tuple(finals), axis=0)


register("lstm.input", Recurrent("lstm"))
register("gru.input", Recurrent("gru"))
register("rnn_tanh.input", Recurrent("rnn_tanh"))

"""Relax calls as TVMScript text (TVM's `call.cc`).

`R.<op>(args..., attr=value, ...)` for operators, with the special forms TVM
prints for destination-passing calls (`R.call_tir(f, (x,), out_sinfo=...)`),
packed calls (`R.call_packed("sym", x, sinfo_args=(...))`), `R.print` and
`R.assert_op` (whose format string is a keyword). Arguments print positionally
while the operator's Python signature reads them back in the same place, then by
name: TVM prints `R.nn.attention_var_len`'s in operator order, which its own
parser misreads (`max_seqlen_q` comes before `seqstart_k` in the signature).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tvmlite.dsl import relax
from tvmlite.dsl.ops import lookup
from tvmlite.printer.literals import string_text, tuple_text
from tvmlite.printer.names import dotted_identifier, identifier

if TYPE_CHECKING:  # relax_expr.py builds this printer: a runtime import would be a cycle
    from tvmlite.printer.relax_expr import RelaxExprPrinter


class RelaxCallPrinter:
    """Calls: operators (arguments by name where the signature puts them, attrs in
    schema order), packed and call_tir forms, `R.print`, `R.assert_op`; everything
    else through the expression printer that holds it (`exprs`)."""

    def __init__(self, exprs: RelaxExprPrinter) -> None:
        self.exprs = exprs
        self.ctx = exprs.ctx

    def call(self, call: relax.Call) -> str:
        op = call.op
        if isinstance(op, relax.Op):
            special = _SPECIAL_OPS.get(op.name)
            if special is not None:
                return getattr(self, special)(call)
            name = dotted_identifier(op.name, "the operator")
            prefix = "R." + name[len("relax.") :] if name.startswith("relax.") else f"T.{name}"
            # an operator registered outside Relax prints as TVM prints it: `T.<name>`
            self.ctx.uses_tir = self.ctx.uses_tir or not name.startswith("relax.")
            args = []
        elif isinstance(op, relax.ExternFunc):
            prefix, args = "R.call_packed", [string_text(op.global_symbol)]
        else:
            prefix, args = self.exprs.expr(op), []
        if call.args:
            args.append(self.callee(call.args[0]))
            args.extend(self.exprs.expr(a) for a in call.args[1:])
            args[len(args) - len(call.args) :] = self._by_name(call, args[-len(call.args) :])
        args.extend(self._attr_kwargs(call))
        if call.sinfo_args:
            key = "sinfo_args" if self.ctx.classic else "ty_args"
            args.append(f"{key}={tuple_text([self.exprs.sinfo(s) for s in call.sinfo_args])}")
        return f"{prefix}({', '.join(args)})"

    def callee(self, e: relax.Expr) -> str:
        """An ExternFunc in callee position prints as its bare symbol string."""
        if isinstance(e, relax.ExternFunc):
            return string_text(e.global_symbol)
        return self.exprs.expr(e)

    def _by_name(self, call: relax.Call, texts: list[str]) -> list[str]:
        """`texts` (the arguments), named from the first one a positional reading
        of the operator's signature would put elsewhere."""
        op = lookup(call.op.name) if isinstance(call.op, relax.Op) else None
        if op is None or op.signature is None or op.variadic_names:
            return texts
        names = [a.name for a in op.arg_names]
        in_place = 0
        while in_place < len(texts) and op.positional[in_place : in_place + 1] == (
            names[in_place],
        ):
            in_place += 1
        named = [f"{n}={t}" for n, t in zip(names[in_place:], texts[in_place:], strict=False)]
        return texts[:in_place] + named

    def _attr_kwargs(self, call: relax.Call) -> list[str]:
        """Operator attrs in schema order; a packed call's attrs are a DictAttrs,
        which TVM prints sorted after its type key."""
        attrs: list[tuple[str, Any]] = list(call.attrs)
        out = []
        if isinstance(call.op, relax.ExternFunc) and attrs:
            out.append('attrs_type_key="ir.DictAttrs"')
            attrs.sort(key=_first)
        out.extend(
            f"{identifier(key, 'the attribute')}={self.exprs.value(value)}" for key, value in attrs
        )
        return out

    def _dps_call(self, call: relax.Call) -> str:
        """`R.call_tir(f, (args), out_sinfo=...)`: several outputs print as a list."""
        name = call.op.name  # type: ignore[union-attr]
        args = [self.callee(call.args[0]), self.exprs.expr(call.args[1])]
        out = call.sinfo_args[0]
        if isinstance(out, relax.TupleStructInfo):
            out_text = f"[{', '.join(self.exprs.sinfo(f) for f in out.fields)}]"
        else:
            out_text = self.exprs.sinfo(out)
        args.append(f"{'out_sinfo' if self.ctx.classic else 'out_ty'}={out_text}")
        attrs = dict(call.attrs)
        if name == "relax.call_tir_inplace":
            indices = attrs.get("inplace_indices", ())
            args.append(f"inplace_indices=[{', '.join(str(int(i)) for i in indices)}]")
        if name == "relax.call_tir_with_grad":
            args.append(f"te_grad_name={self.exprs.value(attrs['te_grad_name'])}")
            if attrs.get("te_grad_kwargs"):  # TVM leaves out an empty dict
                args.append(f"te_grad_kwargs={self.exprs.value(attrs['te_grad_kwargs'])}")
        if name != "relax.call_dps_packed" and len(call.args) == 3:
            args.append(f"tir_vars={self.exprs.expr(call.args[2])}")
        return f"R.{name[len('relax.') :]}({', '.join(args)})"

    def _print_call(self, call: relax.Call) -> str:
        """`R.print(x, format=R.str("..."))`: the format string is the first arg."""
        args = [self.exprs.expr(a) for a in call.args[1:]]
        args.append(f"format={self.exprs.expr(call.args[0])}")
        return f"R.print({', '.join(args)})"

    def _assert_call(self, call: relax.Call) -> str:
        """`R.assert_op(cond, x, format=R.str("..."))`: the format string is the second arg."""
        cond = self.exprs.expr(call.args[0])
        fmt = self.exprs.expr(call.args[1])
        args = [cond, *(self.exprs.expr(a) for a in call.args[2:]), f"format={fmt}"]
        return f"R.assert_op({', '.join(args)})"

    def _hint_on_device_call(self, call: relax.Call) -> str:
        """`R.hint_on_device(x, R.device(device_type=1, index=0), "global")`."""
        attrs = dict(call.attrs)
        device = f"R.device(device_type={attrs['device_type']}, index={attrs['index']})"
        scope = string_text(attrs["memory_scope"])
        return f"R.hint_on_device({self.exprs.expr(call.args[0])}, {device}, {scope})"


def _first(item: tuple[str, Any]) -> str:
    return item[0]


# Calls whose output struct info is the `out_sinfo` / `out_ty` keyword.
DPS_CALLS = (
    "relax.call_tir",
    "relax.call_tir_inplace",
    "relax.call_tir_with_grad",
    "relax.call_dps_packed",
    "relax.dist.call_tir",
    "relax.dist.call_tir_local_view",
)

_SPECIAL_OPS = dict.fromkeys(DPS_CALLS, "_dps_call") | {
    "relax.print": "_print_call",
    "relax.assert_op": "_assert_call",
    "relax.hint_on_device": "_hint_on_device_call",
}

"""Drawing well-formed Relax: struct info, bindings and graph functions.

Operator calls come from the registry: a call is built with `ops.make_call` over
vars already in scope and kept only if `ops.infer_struct_info` accepts it, so the
bound var carries exactly the struct info the parser will infer again.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import dtype as dt
from tvmlite.dsl import ops, relax, tir
from tvmlite.dsl.call_tir import call_tir
from tvmlite.dsl.ops.registry import REQUIRED
from tvmlite.testing.draws import BOOLS, ints, pick
from tvmlite.testing.options import Options
from tvmlite.testing.tir_func import draw_prim_func
from tvmlite.testing.tir_gen import VAR_NAMES, Draw

I64 = "int64"
# Operators whose default attributes do not describe a call worth drawing here
# (they need companion data: indices, grids, quantization scales, ...).
SKIPPED_OPS = frozenset(
    {
        "relax.builtin.stop_lift_params",
        "relax.grad.avg_pool2d_backward",
        "relax.grad.end_checkpoint",
        "relax.grad.max_pool2d_backward",
        "relax.grad.nll_loss_backward",
        "relax.grad.start_checkpoint",
        "relax.grad.take_backward",
        "relax.memory.ensure_zero_offset",
        "relax.memory.view",
        "relax.null_value",
        "relax.wrap_param",
        "relax.multinomial_from_uniform",
    }
)
# Operators drawn with explicit attributes: name -> attribute builder.
FLOAT_TENSOR_DTYPES = ("float32", "float16", "float64")


def simple_ops() -> list[ops.OpDef]:
    """Registry operators callable with tensors alone: every required argument a
    tensor, every attribute defaulted."""
    found = []
    for op in ops.all_ops():
        if op.name in SKIPPED_OPS or op.sinfo_keywords:
            continue
        required = [a for a in op.arg_names if not a.optional]
        if any(a.kind != "tensor" or a.variadic for a in required):
            continue
        if any(a.default is REQUIRED for a in op.attrs) or not required:
            continue
        found.append(op)
    return found


class RelaxGen:
    """Draws the parts of one graph function; `env` holds the vars in scope."""

    def __init__(self, draw: Draw, options: Options) -> None:
        self.draw = draw
        self.options = options
        self.shape_vars: list[tir.Var] = []
        numeric = [d for d in options.dtypes if not dt.is_bool(d)]
        floats = [d for d in numeric if dt.is_float(d)]
        self.tensor_dtypes = tuple(floats or numeric or ["float32"])
        self.ops = simple_ops()
        self.named = 0

    def name(self) -> str:
        base = pick(self.draw, VAR_NAMES)
        if not self.options.unique_names:
            return base
        self.named += 1
        return f"{base}{self.named}"

    def has(self, construct: str) -> bool:
        return self.options.has(construct)

    # ------------------------------------------------------------ struct info

    def dim(self, static: bool = False) -> tir.PrimExpr:
        if not static and self.shape_vars and self.draw(ints(0, 3)) == 0:
            return pick(self.draw, self.shape_vars)
        return tir.IntImm(I64, self.draw(ints(1, 4)))

    def tensor(self, static: bool = False, ndim: int | None = None) -> relax.TensorStructInfo:
        rank = self.draw(ints(0, 3)) if ndim is None else ndim
        shape = tuple(self.dim(static) for _ in range(rank))
        dtype = pick(self.draw, self.tensor_dtypes)
        return relax.TensorStructInfo(shape=shape, dtype=dtype, ndim=rank)

    # ------------------------------------------------------------ bindings

    def binding(self, env: list[relax.Var], dataflow: bool, output: bool) -> relax.Binding:
        var_class = relax.DataflowVar if dataflow and not output else relax.Var
        kinds = ["op", "op", "op"]
        tensors = [v for v in env if isinstance(v.struct_info, relax.TensorStructInfo)]
        if self.has("tuples") and env:
            kinds.append("tuple")
            if any(
                isinstance(v.struct_info, relax.TupleStructInfo) and v.struct_info.fields
                for v in env
            ):
                kinds.append("get_item")
        if self.has("match_cast") and tensors:
            kinds.append("match_cast")
        if self.has("constants"):
            kinds.append("constant")
        kind = pick(self.draw, kinds)
        if kind == "match_cast":
            value = pick(self.draw, tensors)
            target = self.cast_target(value.struct_info)
            return relax.MatchCast(var_class(self.name(), target), value, target)
        value = getattr(self, "_" + kind)(env)
        return relax.VarBinding(var_class(self.name(), ops.sinfo_of(value)), value)

    def _op(self, env: list[relax.Var]) -> relax.Expr:
        tensors = [v for v in env if isinstance(v.struct_info, relax.TensorStructInfo)]
        if not tensors:
            return self._constant(env)
        for _ in range(4):
            op = pick(self.draw, self.ops)
            count = sum(1 for a in op.arg_names if not a.optional)
            first = pick(self.draw, tensors)
            same = [v for v in tensors if v.struct_info == first.struct_info]
            args = [first] + [pick(self.draw, same) for _ in range(count - 1)]
            call = _try_call(op.name, args)
            if call is not None:
                return call
        first = pick(self.draw, tensors)
        call = _try_call("relax.add", [first, first]) or _try_call("relax.abs", [first])
        return call if call is not None else relax.Tuple((first,))

    def _tuple(self, env: list[relax.Var]) -> relax.Expr:
        fields = self.draw(st.lists(st.sampled_from(env), min_size=1, max_size=3))
        return relax.Tuple(tuple(fields))

    def _get_item(self, env: list[relax.Var]) -> relax.Expr:
        tuples = [
            v
            for v in env
            if isinstance(v.struct_info, relax.TupleStructInfo) and v.struct_info.fields
        ]
        var = pick(self.draw, tuples)
        index = self.draw(ints(0, len(var.struct_info.fields) - 1))
        return relax.TupleGetItem(var, index)

    def _constant(self, env: list[relax.Var]) -> relax.Expr:
        dtype = pick(self.draw, self.tensor_dtypes)
        value = self.draw(
            ints(-8, 8) if not dt.is_float(dtype) else st.sampled_from([0.0, -0.0, 0.5, 1.25, -3.0])
        )
        return relax.Constant(np.array(value, dtype=dtype))

    def cast_target(self, sinfo: relax.TensorStructInfo) -> relax.TensorStructInfo:
        """The struct info a match_cast checks: the same rank, with some dims
        replaced by fresh symbolic vars (defined by the cast)."""
        dims: tuple[tir.PrimExpr | None, ...]
        if isinstance(sinfo.shape, tuple):
            dims = sinfo.shape
        else:  # unknown shape: the cast states one
            dims = (None,) * (sinfo.ndim if sinfo.ndim >= 0 else self.draw(ints(0, 2)))
        shape: list[tir.PrimExpr] = []
        for dim in dims:
            if dim is None and not self.options.symbolic:
                shape.append(self.dim(static=True))
            elif self.options.symbolic and (dim is None or self.draw(BOOLS)):
                var = tir.Var(self.name(), I64)
                self.shape_vars.append(var)
                shape.append(var)
            else:
                shape.append(dim)
        return relax.TensorStructInfo(shape=tuple(shape), dtype=sinfo.dtype, ndim=len(shape))


def _try_call(name: str, args: list[relax.Expr]) -> relax.Call | None:
    try:
        call = ops.make_call(name, args, {})
        ops.infer_struct_info(call)
    except (TVMLiteError, ValueError, TypeError, IndexError, KeyError):
        return None
    return call


def struct_info_strategy(gen: RelaxGen, depth: int) -> st.SearchStrategy[relax.StructInfo]:
    """Struct info of every kind, nested up to `depth` tuples."""

    @st.composite
    def build(draw: Draw) -> relax.StructInfo:
        gen.draw = draw
        kinds = ["tensor", "tensor", "shape", "prim", "object", "unknown"]
        if depth > 0:
            kinds.append("tuple")
        kind = pick(draw, kinds)
        if kind == "tensor":
            return gen.tensor()
        if kind == "unknown":
            ndim = draw(ints(-1, 3))
            return relax.TensorStructInfo(
                shape=None, dtype=pick(draw, gen.tensor_dtypes), ndim=ndim
            )
        if kind == "shape":
            values = tuple(gen.dim() for _ in range(draw(ints(0, 3))))
            return relax.ShapeStructInfo(values=values, ndim=len(values))
        if kind == "prim":
            return relax.PrimStructInfo(pick(draw, gen.options.dtypes))
        if kind == "object":
            return relax.ObjectStructInfo()
        fields = draw(st.lists(struct_info_strategy(gen, depth - 1), max_size=3))
        return relax.TupleStructInfo(tuple(fields))

    return build()


# ---------------------------------------------------------------- functions


def draw_relax_function(
    draw: Draw,
    options: Options,
    name: str,
    public: bool,
    module: dict[str, Any] | None = None,
    callees: dict[str, relax.Function] | None = None,
) -> relax.Function:
    """A graph function: tensor params (static and symbolic dims), an optional
    dataflow block, ordinary bindings (if/else, match_cast, calls into `module`).
    Prim functions that `R.call_tir` needs are added to `module`."""
    gen = RelaxGen(draw, options)
    if options.symbolic:
        gen.shape_vars = [tir.Var(gen.name(), I64) for _ in range(draw(ints(0, 2)))]
    params = [relax.Var(gen.name(), gen.tensor()) for _ in range(draw(ints(1, 3)))]
    for var in list(gen.shape_vars):  # a shape var must be defined by some param
        if not any(var in _dims(p.struct_info) for p in params):
            params.append(
                relax.Var(gen.name(), relax.TensorStructInfo((var,), gen.tensor_dtypes[0], 1))
            )
    if options.has("relax_if") and draw(BOOLS):
        params.append(relax.Var(gen.name(), relax.PrimStructInfo("bool")))
    env: list[relax.Var] = list(params)
    blocks: list[relax.BindingBlock] = []
    if options.has("dataflow") and draw(BOOLS):
        blocks.append(_dataflow_block(gen, env))
    bindings = []
    for _ in range(draw(ints(0, options.max_stmts))):
        binding = _plain_binding(gen, env, module, callees)
        bindings.append(binding)
        env.append(binding.var)
    if bindings:
        blocks.append(relax.BindingBlock(tuple(bindings)))
    body: relax.Expr = draw(
        st.sampled_from([v for v in env if not isinstance(v, relax.DataflowVar)])
    )
    attrs = (("global_symbol", name),) if public else ()
    return relax.Function(
        tuple(params), relax.SeqExpr(tuple(blocks), body), ops.sinfo_of(body), attrs=attrs
    )


def _dims(sinfo: relax.StructInfo) -> tuple[tir.PrimExpr, ...]:
    if isinstance(sinfo, relax.TensorStructInfo) and isinstance(sinfo.shape, tuple):
        return sinfo.shape
    return ()


def _dataflow_block(gen: RelaxGen, env: list[relax.Var]) -> relax.BindingBlock:
    count = gen.draw(ints(1, gen.options.max_stmts))
    outputs = gen.draw(ints(1, count))
    local = list(env)
    bindings = []
    for index in range(count):
        binding = gen.binding(local, dataflow=True, output=index >= count - outputs)
        bindings.append(binding)
        local.append(binding.var)
    env.extend(b.var for b in bindings if not isinstance(b.var, relax.DataflowVar))
    return relax.BindingBlock(tuple(bindings), is_dataflow=True)


def _plain_binding(
    gen: RelaxGen,
    env: list[relax.Var],
    module: dict[str, Any] | None,
    callees: dict[str, relax.Function] | None,
) -> relax.Binding:
    kinds = ["binding", "binding"]
    if gen.has("relax_if") and any(_is_bool(v) for v in env):
        kinds.append("if")
    static = [v for v in env if _static_tensor(v.struct_info)]
    if module is not None and gen.has("call_tir") and static:
        kinds.append("call_tir")
    if callees:
        kinds.append("call")
    kind = pick(gen.draw, kinds)
    if kind == "if":
        return _if_binding(gen, env)
    if kind == "call_tir":
        assert module is not None
        return _call_tir(gen, static, module)
    if kind == "call":
        assert callees
        callee_name = pick(gen.draw, sorted(callees))
        callee = callees[callee_name]
        args = []
        for param in callee.params:
            same = [
                v for v in env if v.struct_info == param.struct_info and _static(param.struct_info)
            ]
            if not same:
                return gen.binding(env, dataflow=False, output=True)
            args.append(pick(gen.draw, same))
        call = relax.Call(relax.GlobalVar(callee_name), tuple(args))
        return relax.VarBinding(relax.Var(gen.name(), callee.ret_struct_info), call)
    return gen.binding(env, dataflow=False, output=True)


def _if_binding(gen: RelaxGen, env: list[relax.Var]) -> relax.Binding:
    cond = pick(gen.draw, [v for v in env if _is_bool(v)])
    tensors = [v for v in env if isinstance(v.struct_info, relax.TensorStructInfo)]
    chosen = pick(gen.draw, tensors or env)
    branches = []
    for _ in range(2):
        branch_env = list(env)
        bindings = []
        if gen.draw(BOOLS):
            binding = gen.binding(branch_env, dataflow=False, output=True)
            bindings.append(binding)
        same = [v for v in env if v.struct_info == chosen.struct_info]
        result = pick(gen.draw, same)
        blocks = (relax.BindingBlock(tuple(bindings)),) if bindings else ()
        branches.append(relax.SeqExpr(blocks, result))
    value = relax.If(cond, branches[0], branches[1])
    return relax.VarBinding(relax.Var(gen.name(), chosen.struct_info), value)


def _call_tir(gen: RelaxGen, static: list[relax.Var], module: dict[str, Any]) -> relax.Binding:
    args = gen.draw(st.lists(st.sampled_from(static), min_size=1, max_size=2))
    out = gen.tensor(static=True, ndim=gen.draw(ints(1, 2)))
    name = f"tir_{len(module)}"
    while name in module:
        name += "_"
    params = tuple((_shape_ints(a.struct_info), a.struct_info.dtype) for a in args)
    params += ((_shape_ints(out), out.dtype),)
    module[name] = draw_prim_func(gen.draw, gen.options, name, public=False, tensor_params=params)
    call = call_tir(relax.GlobalVar(name), args, out)
    return relax.VarBinding(relax.Var(gen.name(), out), call)


def _shape_ints(sinfo: relax.StructInfo) -> tuple[int, ...]:
    return tuple(int(d.value) for d in _dims(sinfo))  # type: ignore[attr-defined]


def _is_bool(var: relax.Var) -> bool:
    return isinstance(var.struct_info, relax.PrimStructInfo) and var.struct_info.dtype == "bool"


def _static(sinfo: relax.StructInfo) -> bool:
    return isinstance(sinfo, relax.TensorStructInfo) and _static_tensor(sinfo)


def _static_tensor(sinfo: relax.StructInfo) -> bool:
    return (
        isinstance(sinfo, relax.TensorStructInfo)
        and isinstance(sinfo.shape, tuple)
        and all(isinstance(d, tir.IntImm) for d in sinfo.shape)
    )

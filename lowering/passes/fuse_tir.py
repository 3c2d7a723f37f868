"""FuseTIR: turn every `Primitive` Relax function into one prim function.

This pass owns the TIR side of fusion. For each lifted group (made by FuseOps)
it inlines the kernels the group calls, in binding order, into a single
block-style prim function: the group's inputs and outputs become its buffer
parameters, every intermediate tensor a root-block `alloc_buffer` (so the
Relax-level allocations between the kernels disappear), symbolic dims are
unified through the buffers they describe, and every loop, block and local
buffer is copied fresh so a kernel used twice stays well scoped. Each call of
the group becomes a single `R.call_tir` and the Relax function, now unused, is
replaced by the prim function under the same name (`fused_matmul_add_relu`).
The fused kernel keeps what it is made of: `op_names` in order, their
`op_attrs_list`, and the fused `op_pattern`. A group this pass cannot fuse (or
that is referenced other than by direct calls) is left as it was.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from tvmlite.dsl import relax, tir
from tvmlite.dsl.analysis import substitute, with_root
from tvmlite.dsl.call_tir import CallTIR, call_tir
from tvmlite.dsl.module import IRModule
from tvmlite.dsl.ops import sinfo_of
from tvmlite.dsl.relax_functor import ExprVisitor
from tvmlite.dsl.relax_mutator import ExprMutator
from tvmlite.dsl.tir_mutator import replace
from tvmlite.lowering.analysis.kernel_inline import KernelInliner
from tvmlite.lowering.analysis.op_pattern import analyze_op_pattern
from tvmlite.lowering.analysis.relax_util import tir_vars
from tvmlite.lowering.legalize.registry import OP_ATTRS, op_name_of
from tvmlite.lowering.transform import EXTERNAL_COMPILER, PRIMITIVE, Pass

INDEX = "int64"


class FusionUnsupported(Exception):
    """The group holds something other than call_tir of compact-buffer kernels."""


@dataclass(frozen=True)
class FuseTIR(Pass):
    """Fuse each Primitive Relax function into a prim function of the same name."""

    name: str = "FuseTIR"

    def run(self, mod: IRModule) -> IRModule:
        pinned = _pinned(mod)
        fused: dict[str, FusedKernel] = {}
        for gname, func in mod.functions.items():
            if isinstance(func, relax.Function) and _fusible(func) and gname not in pinned:
                try:
                    fused[gname] = FusedKernelBuilder(mod, func).build()
                except FusionUnsupported:
                    continue
        if not fused:
            return mod
        functions: dict[str, Any] = {}
        for gname, func in mod.functions.items():
            if gname in fused:
                functions[gname] = fused[gname].func
            elif isinstance(func, relax.Function) and not func.attr(PRIMITIVE):
                functions[gname] = _CallRewriter(fused).visit_expr(func)
            else:
                functions[gname] = func
        return mod.with_functions(functions)


def _fusible(func: relax.Function) -> bool:
    return bool(func.attr(PRIMITIVE)) and not any(func.attr(k) for k in EXTERNAL_COMPILER)


def _pinned(mod: IRModule) -> set[str]:
    """Groups referenced other than as the callee of a binding, and public ones: a
    caller of the module may call those (TVM keeps them, as graph functions)."""
    refs = _References()
    for func in mod.functions.values():
        if isinstance(func, relax.Function):
            refs.visit_expr(func)
    public = {
        name
        for name, f in mod.functions.items()
        if isinstance(f, relax.Function) and f.attr("global_symbol") is not None
    }
    return {name for name, n in refs.refs.items() if refs.calls[name] != n} | public


class _References(ExprVisitor):
    """How often each module function is referenced, and called by a binding."""

    def __init__(self) -> None:
        self.refs: Counter[str] = Counter()
        self.calls: Counter[str] = Counter()

    def visit_GlobalVar(self, e: relax.GlobalVar) -> None:
        self.refs[e.name] += 1

    def visit_VarBinding(self, b: relax.VarBinding) -> None:
        if isinstance(b.value, relax.Call) and isinstance(b.value.op, relax.GlobalVar):
            self.calls[b.value.op.name] += 1
        super().visit_VarBinding(b)


@dataclass
class FusedKernel:
    """The fused prim function and how a call of the group maps onto it: which
    Relax params are tensors passed on, and which symbolic vars are scalar args."""

    func: tir.PrimFunc
    group_params: tuple[relax.Var, ...]
    tensor_params: list[int]
    scalar_vars: list[tir.Var]


class FusedKernelBuilder:
    """Builds the prim function of one Primitive Relax function."""

    def __init__(self, mod: IRModule, group: relax.Function) -> None:
        self.mod = mod
        self.group = group
        self.env: dict[int, tir.Buffer | tuple[tir.Buffer, ...]] = {}
        self.fmap: dict[tir.Var, tir.PrimExpr] = {}  # group-level tir var -> fused var
        self.allocs: list[tir.Buffer] = []
        self.body: list[tir.Stmt] = []
        self.block_names: set[str] = set()
        self.kernels: list[tuple[str, tir.PrimFunc]] = []

    def build(self) -> FusedKernel:
        group = self.group
        params: list[tir.Var] = []
        buffer_map: list[tuple[tir.Var, tir.Buffer]] = []
        tensor_params: list[int] = []
        for i, p in enumerate(group.params):
            si = p.struct_info
            if isinstance(si, relax.ShapeStructInfo) and si.values is not None:
                for value in si.values:
                    self._dim(value)
                continue
            buf = self._new_buffer(p.name, si)
            handle = tir.Var(f"p_{p.name}", "handle")
            params.append(handle)
            buffer_map.append((handle, buf))
            tensor_params.append(i)
            self.env[id(p)] = buf
        outputs = self._output_slots()
        out_buffers: dict[int, tir.Buffer] = {}
        for block in group.body.blocks:
            for b in block.bindings:
                self._binding(b, outputs, out_buffers)
        for slot in range(len(outputs.order)):
            if slot not in out_buffers:
                raise FusionUnsupported("a group output is not computed inside the group")
            buf = out_buffers[slot]
            handle = tir.Var(f"p_{buf.name}", "handle")
            params.append(handle)
            buffer_map.append((handle, buf))
        scalar_vars = self._scalar_params([b for _, b in buffer_map])
        params.extend(self.fmap[v] for v in scalar_vars)  # type: ignore[misc]
        body = with_root(tir.seq(self.body), tuple(self.allocs))
        func = tir.PrimFunc(
            tuple(params),
            tuple(buffer_map),
            body,
            None,
            self._attrs(),
            any(k.s_tir for _, k in self.kernels),
        )
        return FusedKernel(func, group.params, tensor_params, scalar_vars)

    # ------------------------------------------------------------ buffers and vars

    def _dim(self, d: tir.PrimExpr) -> tir.PrimExpr:
        for v in tir_vars(d):
            if v not in self.fmap:
                self.fmap[v] = tir.Var(v.name, v.dtype)
        return substitute(d, self.fmap)

    def _new_buffer(self, name: str, si: relax.StructInfo) -> tir.Buffer:
        if not (isinstance(si, relax.TensorStructInfo) and isinstance(si.shape, tuple)):
            raise FusionUnsupported(f"{name}: only tensors of known rank can be fused")
        data = tir.Var(name, "handle", (si.dtype, "global"))
        return tir.Buffer(name, data, si.dtype, tuple(self._dim(d) for d in si.shape))

    def _scalar_params(self, buffers: list[tir.Buffer]) -> list[tir.Var]:
        """Group-level vars no buffer dim defines: the kernel takes them as scalars."""
        bare = {d for b in buffers for d in b.shape if isinstance(d, tir.Var)}
        used: dict[tir.Var, None] = {}
        for b in buffers:
            used.update(tir_vars(b.shape))
        inverse = {fv: gv for gv, fv in self.fmap.items()}
        for fv in list(inverse):
            if fv not in bare:
                used.setdefault(fv, None)
        return [inverse[v] for v in used if v not in bare and v in inverse]

    def _output_slots(self) -> _Outputs:
        body = self.group.body.body
        items = body.fields if isinstance(body, relax.Tuple) else (body,)
        outputs = _Outputs([])
        for slot, item in enumerate(items):
            if not isinstance(item, relax.Var):
                raise FusionUnsupported("a group must return vars")
            outputs.order.append(item)
            outputs.slot_of[id(item)] = slot
        for block in self.group.body.blocks:  # an output read out of a multi-output call
            for b in block.bindings:
                v = b.value
                if isinstance(v, relax.TupleGetItem) and id(b.var) in outputs.slot_of:
                    key = (id(v.tuple_value), v.index)
                    outputs.item_slot[key] = outputs.slot_of[id(b.var)]
        return outputs

    # ------------------------------------------------------------ bindings

    def _binding(
        self, b: relax.Binding, outs: _Outputs, out_buffers: dict[int, tir.Buffer]
    ) -> None:
        v = b.value
        if isinstance(v, relax.TupleGetItem) and isinstance(v.tuple_value, relax.Var):
            bufs = self.env.get(id(v.tuple_value))
            if not isinstance(bufs, tuple):
                raise FusionUnsupported("tuple item of something that is not a kernel result")
            self.env[id(b.var)] = bufs[v.index]
            return
        view = CallTIR.of(v) if isinstance(b, relax.VarBinding) else None
        if view is None:
            raise FusionUnsupported("only call_tir bindings can be fused")
        kernel = view.kernel(self.mod.functions)
        if kernel is None:
            raise FusionUnsupported(f"{view.callee.name} is not a prim function")
        self.kernels.append((view.callee.name, kernel))
        fields = view.outputs
        results: list[tir.Buffer] = []
        for j, si in enumerate(fields):
            slot = outs.item_slot.get((id(b.var), j)) if len(fields) > 1 else None
            if len(fields) == 1:
                slot = outs.slot_of.get(id(b.var))
            name = _out_name(kernel, len(view.args) + j)
            buf = self._new_buffer(f"{name}_intermediate", si)
            if slot is None:
                self.allocs.append(buf)
            else:
                out_buffers[slot] = buf
            results.append(buf)
        inputs = []
        for arg in view.args:
            buf = self.env.get(id(arg))
            if not isinstance(buf, tir.Buffer):
                raise FusionUnsupported("a kernel argument is not a tensor of the group")
            inputs.append(buf)
        scalars = []
        if isinstance(view.tir_vars, relax.ShapeExpr):
            scalars = [self._dim(d) for d in view.tir_vars.values]
        self._inline(kernel, inputs + results, scalars)
        self.env[id(b.var)] = results[0] if len(results) == 1 else tuple(results)

    def _inline(self, kernel: tir.PrimFunc, buffers: list[tir.Buffer], scalars: list) -> None:
        bmap = dict(kernel.buffer_map)
        vmap: dict[tir.Var, tir.PrimExpr] = {}
        buf_map: dict[tir.Buffer, tir.Buffer] = {}
        handles = [p for p in kernel.params if p in bmap]
        others = [p for p in kernel.params if p not in bmap]
        if len(handles) != len(buffers) or len(others) != len(scalars):
            raise FusionUnsupported("kernel signature does not match its call")
        vmap.update(zip(others, scalars, strict=True))
        for handle, actual in zip(handles, buffers, strict=True):
            kb = bmap[handle]
            if kb.strides or kb.elem_offset is not None or len(kb.shape) != len(actual.shape):
                raise FusionUnsupported("only compact buffers of the call's rank can be fused")
            if kb.dtype != actual.dtype:
                raise FusionUnsupported("kernel buffer dtype differs from the tensor's")
            for kd, ad in zip(kb.shape, actual.shape, strict=True):
                if isinstance(kd, tir.Var) and kd not in vmap:
                    vmap[kd] = ad
            buf_map[kb] = actual
        unbound = [v for _, b in kernel.buffer_map for v in tir_vars(b.shape) if v not in vmap]
        if unbound:
            raise FusionUnsupported(f"cannot bind {unbound[0].name} of a kernel")
        inliner = KernelInliner(vmap, buf_map, self.block_names)
        body = kernel.body
        if isinstance(body, tir.BlockRealize) and body.block.name == "root":
            root = body.block
            self.allocs.extend(inliner.visit_buffer_def(a) for a in root.alloc_buffers)
            body = root.body
        self.body.append(inliner.visit_stmt(body))

    def _attrs(self) -> tuple[tuple[str, Any], ...]:
        names = tuple(op_name_of(k) or name for name, k in self.kernels)
        op_attrs = tuple(k.attr(OP_ATTRS, ()) for _, k in self.kernels)
        pattern = max(_pattern(k) for _, k in self.kernels)
        noalias = next(
            (key for _, k in self.kernels for key, _ in k.attrs if key.endswith(".noalias")),
            "tir.noalias",
        )
        attrs: list[tuple[str, Any]] = [("op_names", names)]
        if any(op_attrs):
            attrs.append(("op_attrs_list", op_attrs))
        attrs += [("op_pattern", pattern), (noalias, True)]
        return tuple(sorted(attrs, key=itemgetter(0)))


@dataclass
class _Outputs:
    """The group's results in return order, by var and by (tuple var, item)."""

    order: list[relax.Var]
    slot_of: dict[int, int] = field(default_factory=dict)
    item_slot: dict[tuple[int, int], int] = field(default_factory=dict)


def _pattern(kernel: tir.PrimFunc) -> int:
    value = kernel.attr("op_pattern")
    return int(value) if value is not None else int(analyze_op_pattern(kernel))


def _out_name(kernel: tir.PrimFunc, position: int) -> str:
    bmap = dict(kernel.buffer_map)
    handles = [p for p in kernel.params if p in bmap]
    return bmap[handles[position]].name if position < len(handles) else "out"


# ---------------------------------------------------------------- call sites


class _CallRewriter(ExprMutator):
    """Replaces `x = fused_group(args)` with `x = R.call_tir(fused_group, ...)`."""

    def __init__(self, fused: dict[str, FusedKernel]) -> None:
        super().__init__()
        self.fused = fused

    def visit_VarBinding(self, b: relax.VarBinding) -> relax.Binding | None:
        new = super().visit_VarBinding(b)
        v = new.value if new is not None else None
        if not (isinstance(v, relax.Call) and isinstance(v.op, relax.GlobalVar)):
            return new
        fk = self.fused.get(v.op.name)
        if fk is None:
            return new
        args = tuple(v.args[i] for i in fk.tensor_params)
        scalars = relax.ShapeExpr(tuple(_bind_scalars(fk, v))) if fk.scalar_vars else None
        call = call_tir(relax.GlobalVar(v.op.name), args, new.var.struct_info, scalars)
        return replace(new, value=call)


def _bind_scalars(fk: FusedKernel, call: relax.Call) -> list[tir.PrimExpr]:
    """The caller-side values of the group's scalar vars, matched from the args."""
    bound: dict[tir.Var, tir.PrimExpr] = {}
    for param, arg in zip(fk.group_params, call.args, strict=True):
        si = param.struct_info
        if isinstance(si, relax.ShapeStructInfo) and isinstance(arg, relax.ShapeExpr):
            pairs = zip(si.values or (), arg.values, strict=False)
        elif isinstance(si, relax.TensorStructInfo) and isinstance(si.shape, tuple):
            arg_si = sinfo_of(arg)
            shape = arg_si.shape if isinstance(arg_si, relax.TensorStructInfo) else None
            pairs = zip(si.shape, shape if isinstance(shape, tuple) else (), strict=False)
        else:
            continue
        for dim, value in pairs:
            if isinstance(dim, tir.Var):
                bound.setdefault(dim, value)
    return [bound.get(v, v) for v in fk.scalar_vars]

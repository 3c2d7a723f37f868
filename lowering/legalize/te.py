"""A small tensor-expression builder that emits block-style prim functions the way
TVM's `te.create_prim_func` does.

A `KernelBuilder` holds one kernel's tensors: placeholders (the inputs) and
stages (`compute`), each stage owning its output buffers. `build` orders the
stages as TVM does (post-order from the outputs), gives each a loop nest of its
spatial then reduction axes, and one block with `v_`-named iter vars, reads and
writes regions and, for reductions, an init statement. Intermediate stages
become root-block allocations. No state outlives a builder.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypedDict, Unpack

from tvmlite.dsl import tir
from tvmlite.dsl.analysis import loads, substitute, with_root
from tvmlite.dsl.regions import infer_regions
from tvmlite.lowering.legalize import texpr as E

INDEX = E.INDEX


@dataclass(frozen=True, slots=True)
class RAxis:
    """A reduction axis: its var (use `.var` in expressions) and extent."""

    var: tir.Var
    extent: tir.PrimExpr


def reduce_axis(extent: E.Expr, name: str) -> RAxis:
    return RAxis(tir.Var(name, INDEX), E.idx(extent))


Combiner = Callable[[Sequence[tir.PrimExpr], Sequence[tir.PrimExpr]], Sequence[tir.PrimExpr]]


@dataclass(frozen=True, slots=True)
class Reduce:
    """A commutative reduction of `source` over `axes`. `combiner` is an arithmetic
    kind (`add`, `max`, `min`, `mul`) for one value, or a function over tuples
    (lhs values, rhs values) -> new values for tuple reductions (argmax)."""

    combiner: str | Combiner
    source: tuple[tir.PrimExpr, ...]
    axes: tuple[RAxis, ...]
    identity: tuple[tir.PrimExpr, ...]


def _as_axes(axis: RAxis | Sequence[RAxis]) -> tuple[RAxis, ...]:
    return (axis,) if isinstance(axis, RAxis) else tuple(axis)


def sum_(source: tir.PrimExpr, axis: RAxis | Sequence[RAxis]) -> Reduce:
    return Reduce("add", (source,), _as_axes(axis), (E.const(0, source.dtype),))


def max_(source: tir.PrimExpr, axis: RAxis | Sequence[RAxis]) -> Reduce:
    return Reduce("max", (source,), _as_axes(axis), (E.min_value(source.dtype),))


def min_(source: tir.PrimExpr, axis: RAxis | Sequence[RAxis]) -> Reduce:
    return Reduce("min", (source,), _as_axes(axis), (E.max_value(source.dtype),))


def prod_(source: tir.PrimExpr, axis: RAxis | Sequence[RAxis]) -> Reduce:
    return Reduce("mul", (source,), _as_axes(axis), (E.const(1, source.dtype),))


@dataclass(eq=False)
class Tensor:
    """A placeholder (`stage` None) or one output of a stage; indexing loads it."""

    buffer: tir.Buffer
    stage: Stage | None = None

    @property
    def shape(self) -> tuple[tir.PrimExpr, ...]:
        return self.buffer.shape

    @property
    def dtype(self) -> str:
        return self.buffer.dtype

    @property
    def name(self) -> str:
        return self.buffer.name

    @property
    def ndim(self) -> int:
        return len(self.buffer.shape)

    def __getitem__(self, indices: Any) -> tir.BufferLoad:
        if not isinstance(indices, tuple):
            indices = (indices,)
        return tir.BufferLoad(self.buffer, tuple(E.idx(i) for i in indices), self.dtype)

    def load(self, indices: Sequence[E.Expr]) -> tir.BufferLoad:
        return self[tuple(indices)]


@dataclass(eq=False)
class Stage:
    """One TE operation: spatial `axis` vars over `shape`, and either plain bodies
    (one per output) or a `Reduce`; or an extern operation (`te.extern`), whose
    `extern` statement reads `extern_inputs` and writes the outputs itself."""

    name: str
    axis: tuple[tir.Var, ...]
    shape: tuple[tir.PrimExpr, ...]
    bodies: tuple[tir.PrimExpr, ...] | Reduce
    outputs: list[Tensor] = field(default_factory=list)
    annotations: tuple[tuple[str, Any], ...] = ()
    extern: tir.Stmt | None = None
    extern_inputs: tuple[Tensor, ...] = ()


def make_buffer(name: str, shape: Sequence[E.Expr], dtype: str) -> tir.Buffer:
    data = tir.Var(name, "handle", (dtype, "global"))
    return tir.Buffer(name, data, dtype, tuple(E.idx(d) for d in shape))


class ComputeOptions(TypedDict, total=False):
    """The optional arguments of `KernelBuilder.compute_multi`."""

    names: Sequence[str] | None
    prefix: str
    annotations: tuple[tuple[str, Any], ...]


class KernelBuilder:
    """Builds one prim function from placeholders and compute stages."""

    def __init__(self) -> None:
        self._by_buffer: dict[tir.Buffer, Tensor] = {}

    def placeholder(self, shape: Sequence[E.Expr], dtype: str, name: str) -> Tensor:
        t = Tensor(make_buffer(name, shape, dtype))
        self._by_buffer[t.buffer] = t
        return t

    def compute(
        self,
        shape: Sequence[E.Expr],
        fcompute: Callable[..., Any],
        name: str,
        **options: Unpack[ComputeOptions],
    ) -> Tensor:
        """The first output of `compute_multi` (which takes the same `options`)."""
        return self.compute_multi(shape, fcompute, name, **options)[0]

    def compute_multi(
        self,
        shape: Sequence[E.Expr],
        fcompute: Callable[..., Any],
        name: str,
        names: Sequence[str] | None = None,
        prefix: str = "ax",
        annotations: tuple[tuple[str, Any], ...] = (),
    ) -> list[Tensor]:
        """`fcompute(*axis_vars)` gives an expression, a `Reduce`, or a tuple of
        expressions (several outputs named `name_v0`, ...); `names` (or `prefix`
        and the position) name the axis vars."""
        shape = tuple(E.idx(d) for d in shape)
        names = list(names) if names is not None else [f"{prefix}{i}" for i in range(len(shape))]
        axis = tuple(tir.Var(n, INDEX) for n in names)
        result = fcompute(*axis)
        if isinstance(result, Reduce):
            bodies: tuple[tir.PrimExpr, ...] | Reduce = result
            dtypes = [s.dtype for s in result.source]
        else:
            bodies = tuple(result) if isinstance(result, (tuple, list)) else (result,)
            bodies = tuple(E.as_expr(b, "int64") for b in bodies)
            dtypes = [b.dtype for b in bodies]
        stage = Stage(name, axis, shape, bodies, annotations=annotations)
        multi = len(dtypes) > 1
        for i, dtype in enumerate(dtypes):
            out = Tensor(make_buffer(f"{name}_v{i}" if multi else name, shape, dtype), stage)
            stage.outputs.append(out)
            self._by_buffer[out.buffer] = out
        return stage.outputs

    # ------------------------------------------------------------ emission

    def extern(
        self,
        name: str,
        outputs: Sequence[tuple[str, Sequence[E.Expr], str, bool]],
        inputs: Sequence[Tensor],
        fbody: Callable[[list[tir.Buffer], list[tir.Buffer]], tir.Stmt],
    ) -> list[Tensor]:
        """A `te.extern` stage: `outputs` are (name, shape, dtype, has_offset);
        `fbody(input buffers, output buffers)` gives the statement. Inputs that
        are placeholders get a symbolic `elem_offset`, as TVM declares them."""
        for t in inputs:
            if t.stage is None and t.buffer.elem_offset is None:
                del self._by_buffer[t.buffer]
                t.buffer = replace(t.buffer, elem_offset=tir.Var("elem_offset", INDEX))
                self._by_buffer[t.buffer] = t
        stage = Stage(name, (), (), (), extern_inputs=tuple(inputs))
        for bname, shape, dtype, offset in outputs:
            buf = make_buffer(bname, shape, dtype)
            if offset:
                buf = replace(buf, elem_offset=tir.Var("elem_offset", INDEX))
            out = Tensor(buf, stage)
            stage.outputs.append(out)
            self._by_buffer[buf] = out
        stage.extern = fbody([t.buffer for t in inputs], [o.buffer for o in stage.outputs])
        return stage.outputs

    def _inputs(self, stage: Stage) -> list[Tensor]:
        if stage.extern is not None:
            return list(stage.extern_inputs)
        exprs = stage.bodies.source if isinstance(stage.bodies, Reduce) else stage.bodies
        found: list[Tensor] = []
        for load in loads(exprs, post_order=True):
            t = self._by_buffer.get(load.buffer)
            if t is not None and t.stage is not stage and t not in found:
                found.append(t)
        return found

    def _ordered_stages(self, outputs: list[Tensor]) -> list[Stage]:
        order: list[Stage] = []
        seen: set[int] = set()
        stack: list[tuple[Stage, bool]] = [(t.stage, False) for t in reversed(outputs) if t.stage]
        while stack:
            stage, expanded = stack.pop()
            if expanded:
                if id(stage) not in seen:
                    seen.add(id(stage))
                    order.append(stage)
                continue
            if id(stage) in seen:
                continue
            stack.append((stage, True))
            for t in reversed(self._inputs(stage)):
                if t.stage is not None and id(t.stage) not in seen:
                    stack.append((t.stage, False))
        return order

    def build(
        self,
        params: Sequence[Tensor | tir.Var],
        attrs: tuple[tuple[str, Any], ...] = (("tir.noalias", True),),
        s_tir: bool = True,
    ) -> tir.PrimFunc:
        """The prim function taking `params` (buffers and scalar vars) in order."""
        tensors = [p for p in params if isinstance(p, Tensor)]
        outputs = [t for t in tensors if t.stage is not None]
        stages = self._ordered_stages(outputs)
        out_buffers = {t.buffer for t in tensors}
        allocs = [o.buffer for s in stages for o in s.outputs if o.buffer not in out_buffers]
        nests = [emit_stage(s, n) for s, n in zip(stages, _block_names(stages), strict=True)]
        body = nests[0] if len(nests) == 1 else tir.SeqStmt(tuple(nests))
        realize = with_root(body, tuple(allocs))
        vars_: list[tir.Var] = []
        buffer_map: list[tuple[tir.Var, tir.Buffer]] = []
        for p in params:
            if isinstance(p, Tensor):
                handle = tir.Var(f"{p.name}_handle", "handle")
                vars_.append(handle)
                buffer_map.append((handle, p.buffer))
            else:
                vars_.append(p)
        return tir.PrimFunc(tuple(vars_), tuple(buffer_map), realize, None, attrs, s_tir)


def _block_names(stages: list[Stage]) -> list[str]:
    """Stage names made unique in order (`T_divide`, `T_divide_1`), as TVM does."""
    seen: dict[str, int] = {}
    names = []
    for s in stages:
        n = seen.get(s.name, 0)
        seen[s.name] = n + 1
        names.append(s.name if n == 0 else f"{s.name}_{n}")
    return names


def emit_stage(stage: Stage, block_name: str) -> tir.Stmt:
    """The loop nest and block of one stage."""
    if stage.extern is not None:
        block = tir.Block(block_name, (), (), (), stage.extern)
        return tir.BlockRealize((), tir.IntImm("bool", 1), block)
    reduce = stage.bodies if isinstance(stage.bodies, Reduce) else None
    raxes = reduce.axes if reduce else ()
    loop_vars = [*stage.axis, *(r.var for r in raxes)]
    extents = [*stage.shape, *(r.extent for r in raxes)]
    block_vars = [tir.Var(f"v_{v.name}", INDEX) for v in loop_vars]
    sub = dict(zip(loop_vars, block_vars, strict=True))
    iter_vars = tuple(
        tir.IterVar(
            bv, tir.Range(E.idx(0), ext), tir.REDUCE if i >= len(stage.axis) else tir.SPATIAL
        )
        for i, (bv, ext) in enumerate(zip(block_vars, extents, strict=True))
    )
    spatial = tuple(block_vars[: len(stage.axis)])
    outs = [o.buffer for o in stage.outputs]
    init: tir.Stmt | None = None
    if reduce is None:
        values = [substitute(b, sub) for b in stage.bodies]  # type: ignore[union-attr]
        stores = [tir.BufferStore(buf, v, spatial) for buf, v in zip(outs, values, strict=True)]
        body: tir.Stmt = stores[0] if len(stores) == 1 else tir.SeqStmt(tuple(stores))
    else:
        sources = [substitute(s, sub) for s in reduce.source]
        body, init = _reduce_body(reduce, outs, sources, spatial)
    reads, writes = infer_regions(body, None, (), ())
    # TVM does not count a reduction's read of its own output.
    reads = tuple(r for r in reads if r.buffer not in outs)
    values: tuple[tir.PrimExpr, ...] = tuple(loop_vars)
    if not loop_vars:  # a scalar stage: TVM gives it one unit iter var and no loop
        iter_vars = (tir.IterVar(tir.Var("vi", INDEX), tir.Range(E.idx(0), E.idx(1)), tir.SPATIAL),)
        values = (E.idx(0),)
    block = tir.Block(
        block_name, iter_vars, reads, writes, body, init, annotations=stage.annotations
    )
    stmt: tir.Stmt = tir.BlockRealize(values, tir.IntImm("bool", 1), block)
    for var, ext in reversed(list(zip(loop_vars, extents, strict=True))):
        stmt = tir.For(var, E.idx(0), ext, tir.SERIAL, stmt)
    return stmt


def _reduce_body(
    reduce: Reduce,
    outs: list[tir.Buffer],
    sources: list[tir.PrimExpr],
    spatial: tuple[tir.Var, ...],
) -> tuple[tir.Stmt, tir.Stmt]:
    lhs = [tir.BufferLoad(b, spatial, b.dtype) for b in outs]
    inits = [tir.BufferStore(b, v, spatial) for b, v in zip(outs, reduce.identity, strict=True)]
    init = inits[0] if len(inits) == 1 else tir.SeqStmt(tuple(inits))
    if isinstance(reduce.combiner, str):
        value = E.binary(reduce.combiner, lhs[0], sources[0])
        return tir.BufferStore(outs[0], value, spatial), init
    values = reduce.combiner(lhs, sources)
    lets = [tir.Var(f"v_{b.name}", b.dtype) for b in outs]
    stores = [tir.BufferStore(b, v, spatial) for b, v in zip(outs, lets, strict=True)]
    stmt: tir.Stmt = tir.SeqStmt(tuple(stores))
    for var, value in reversed(list(zip(lets, values, strict=True))):
        stmt = tir.LetStmt(var, value, stmt)
    return stmt, init

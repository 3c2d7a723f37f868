"""Drawing blocks and whole prim functions (signature, buffers, root block)."""

from __future__ import annotations

from hypothesis import strategies as st

from tvmlite.dsl import arith, tir
from tvmlite.dsl.analysis import with_root
from tvmlite.testing import tir_runnable as runnable
from tvmlite.testing.draws import BOOLS, ints, pick
from tvmlite.testing.options import Options
from tvmlite.testing.tir_gen import BUFFER_NAMES, TRUE, Draw, Scope, TIRGen, is_modern

BLOCK_NAMES = ("compute", "b", "compute")


def i32(value: int) -> tir.IntImm:
    return tir.IntImm("int32", value)


def make_buffer(name: str, dtype: str, shape: tuple[tir.PrimExpr, ...], **kw: object) -> tir.Buffer:
    """A buffer as the parser builds it: its data var typed with the element dtype."""
    data = tir.Var(name, "handle", pointee=(dtype, "global"))
    return tir.Buffer(name, data, dtype, shape, **kw)  # type: ignore[arg-type]


# ---------------------------------------------------------------- blocks


def draw_block(gen: TIRGen, scope: Scope, depth: int) -> tir.Stmt:
    """A block under the enclosing loops: some loops bound to axes one to one (printed
    with `T.axis.remap`), others to a wider domain (single `T.axis.*` lines)."""
    draw = gen.draw
    loops = [loop for loop in scope.loops if isinstance(loop.min, tir.IntImm)]
    chosen = draw(st.lists(st.sampled_from(loops), min_size=1, max_size=3, unique_by=id))
    init_wanted = draw(BOOLS)
    iter_vars, values = [], []
    for index, loop in enumerate(chosen):
        kind = pick(draw, (tir.SPATIAL, tir.REDUCE))
        if init_wanted and index == 0:
            kind = tir.REDUCE
        var = tir.Var("v" + loop.loop_var.name, "int32")
        dom = tir.Range(loop.min, loop.extent)
        if isinstance(loop.extent, tir.IntImm) and draw(BOOLS):
            dom = tir.Range(i32(0), i32(loop.min.value + loop.extent.value + draw(ints(0, 3))))
        iter_vars.append(tir.IterVar(var, dom, kind))
        values.append(loop.loop_var)
    predicate: tir.PrimExpr = TRUE
    if draw(BOOLS):
        bound = i32(draw(ints(1, 6)))
        predicate = tir.BinaryOp("lt", chosen[0].loop_var, bound, "bool")
    # An iter var takes its loop var's values (when the program is runnable).
    ranges = {
        iv.var: scope.ranges[loop.loop_var]
        for iv, loop in zip(iter_vars, chosen, strict=True)
        if loop.loop_var in scope.ranges
    }
    inner = Scope(
        [*scope.func_vars, *(iv.var for iv in iter_vars)],
        list(scope.buffers),
        [],
        True,
        scope.func_vars,
        ranges,
    )
    reduce_vars = [iv.var for iv in iter_vars if iv.kind == tir.REDUCE]
    read_scope = inner
    if init_wanted:  # a spatial axis that is only read would have to be a reduce axis
        read_scope = Scope([*scope.func_vars, *reduce_vars], inner.buffers, [], True, (), ranges)
    reads = tuple(_region(gen, read_scope) for _ in range(draw(ints(0, 2))) if inner.buffers)
    writes = (_region(gen, inner),) if inner.buffers else ()
    init = gen._store(inner, 1) if init_wanted else None
    body = gen.seq(inner, depth)
    name = pick(draw, BLOCK_NAMES)
    block = tir.Block(name, tuple(iter_vars), reads, writes, body, init=init)
    return tir.BlockRealize(tuple(values), predicate, block)


def _region(gen: TIRGen, scope: Scope) -> tir.BufferRegion:
    buffer = pick(gen.draw, scope.buffers)
    ranges = []
    for dim in buffer.shape:
        if isinstance(dim, tir.IntImm) and dim.value > 1 and gen.draw(BOOLS):
            ranges.append(tir.Range(tir.IntImm(dim.dtype, 0), dim))
        else:
            ranges.append(tir.Range(gen.index(scope, 0), i32(1)))
    return tir.BufferRegion(buffer, tuple(ranges))


# ---------------------------------------------------------------- functions


def draw_prim_func(
    draw: Draw,
    options: Options,
    name: str = "main",
    public: bool = True,
    tensor_params: tuple[tuple[tuple[int, ...], str], ...] | None = None,
) -> tir.PrimFunc:
    """A prim function. `tensor_params` fixes the buffer params (static shape and
    dtype each, as a `call_tir` caller needs); otherwise they are drawn."""
    gen = TIRGen(draw, options)
    shape_vars: list[tir.Var] = []
    if tensor_params is None and options.symbolic and not options.runnable:
        count = draw(ints(0, 2))
        shape_vars = [tir.Var(gen.name(), pick(draw, ("int64", "int32"))) for _ in range(count)]
    buffers = _param_buffers(gen, shape_vars, tensor_params)
    scalars: list[tir.Var] = []
    if tensor_params is None:
        for _ in range(draw(ints(0, 2))):
            scalars.append(tir.Var(gen.name(), pick(draw, gen.dtypes)))
    handles = [tir.Var(b.name, "handle") for b in buffers]
    params: list[tir.Var] = handles + scalars
    if tensor_params is None:
        params = draw(st.permutations(params))
    allocs: list[tir.Buffer] = []
    if options.has("alloc") and draw(BOOLS):
        shape = tuple(i32(draw(ints(1, 4))) for _ in range(draw(ints(1, 2))))
        allocs.append(make_buffer(gen.name(BUFFER_NAMES), pick(draw, gen.dtypes), shape))
    func_vars = tuple(scalars + shape_vars)
    scope = Scope(list(func_vars), buffers + allocs, [], False, func_vars)
    body = gen.seq(scope, options.max_depth)
    if options.runnable and allocs:  # scratch memory is written before anything reads it
        fills = [runnable.fill(b, arith.const(0, b.dtype), ["i", "j"]) for b in allocs]
        rest = body.seq if isinstance(body, tir.SeqStmt) else (body,)
        body = tir.SeqStmt((*fills, *rest))
    rooted = gen.saw_block or bool(allocs)
    body = with_root(body, tuple(allocs))
    attrs: list[tuple[str, object]] = [("global_symbol", name)] if public else []
    if draw(BOOLS):
        # keys are stored as written, so in the dialect's own prefix
        attrs.append(("tirx.noalias" if is_modern(options) else "tir.noalias", True))
    by_handle = {id(h): b for h, b in zip(handles, buffers, strict=True)}
    # a block-free 0.27 function may still say `s_tir=True` (and keeps no root block)
    s_tir = is_modern(options) and (rooted or draw(BOOLS))
    return tir.PrimFunc(
        tuple(params),
        tuple((p, by_handle[id(p)]) for p in params if id(p) in by_handle),  # in param order
        body,
        attrs=tuple(attrs),
        s_tir=s_tir,
    )


def _param_buffers(
    gen: TIRGen,
    shape_vars: list[tir.Var],
    tensor_params: tuple[tuple[tuple[int, ...], str], ...] | None,
) -> list[tir.Buffer]:
    draw = gen.draw
    if tensor_params is not None:
        return [
            make_buffer(
                gen.name(BUFFER_NAMES),
                dtype,
                tuple(tir.IntImm("int64", d) for d in shape),
            )
            for shape, dtype in tensor_params
        ]
    buffers = []
    pending = list(shape_vars)  # every shape var appears in some shape
    for _ in range(draw(ints(1, 3))):
        ndim = draw(ints(1, 3))
        shape: list[tir.PrimExpr] = []
        for _ in range(ndim):
            if pending:
                shape.append(pending.pop())
            elif shape_vars and draw(BOOLS):
                shape.append(pick(draw, shape_vars))
            else:
                shape.append(i32(draw(ints(1, 8))))
        strides: tuple[tir.PrimExpr, ...] = ()
        if gen.has("strides") and draw(BOOLS):
            strides = tuple(tir.IntImm("int64", draw(ints(1, 16))) for _ in shape)
        dtype = pick(draw, gen.dtypes)
        buffers.append(make_buffer(gen.name(BUFFER_NAMES), dtype, tuple(shape), strides=strides))
    for var in pending:  # more vars than dims: widen the first buffer
        first = buffers[0]
        buffers[0] = make_buffer(
            first.name,
            first.dtype,
            (*first.shape, var),
            strides=first.strides and (*first.strides, tir.IntImm("int64", 1)),
        )
    return buffers

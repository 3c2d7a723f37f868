"""Recognising a contraction from a block's structure: matmul, batch matmul, dense
and conv2d all have the form

    with T.init(): C[s...] = 0
    C[s...] = C[s...] + X[f(s, r)] * Y[g(s, r)]        (loads possibly cast)

with spatial iteration variables `s` (C indexed by exactly them, in order) and
reduction variables `r`. What the rules need from it: the two operands, which
spatial variables each operand reads along, and the loops that run each variable.
Nothing here looks at names: a hand-written or fused kernel of that form is
recognised the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

from tvmlite.dsl import arith, tir
from tvmlite.dsl.analysis import uses
from tvmlite.lowering.schedule import BlockRV, LoopRV, Schedule
from tvmlite.lowering.schedule.tree import Tree
from tvmlite.lowering.schedule_rules.kernel import estimate


@dataclass(frozen=True)
class Operand:
    """One factor of the product: the buffer and its index expressions."""

    load: tir.BufferLoad

    @property
    def buffer(self) -> tir.Buffer:
        return self.load.buffer

    def plain_axes(self) -> dict[tir.Var, int]:
        """Iteration variables the operand is indexed by directly: var -> axis."""
        return {i: axis for axis, i in enumerate(self.load.indices) if isinstance(i, tir.Var)}

    def reads(self, var: tir.Var) -> bool:
        return any(uses(i, {var}) for i in self.load.indices)

    def is_plain(self) -> bool:
        """Every index is one iteration variable or a constant, each variable once."""
        found = [i for i in self.load.indices if not isinstance(i, tir.IntImm)]
        return all(isinstance(i, tir.Var) for i in found) and len(set(found)) == len(found)


@dataclass(frozen=True)
class Roles:
    """Which spatial variable is vectorized (columns) and which unrolled (rows)."""

    vector: tir.Var
    row: tir.Var


@dataclass(frozen=True)
class Contraction:
    output: tir.Buffer
    operands: tuple[Operand, Operand]
    spatial: tuple[tir.Var, ...]  # in the order they index the output
    reduce: tuple[tir.Var, ...]  # in loop order
    # Iterations of each variable's loop; a symbolic extent counts as
    # SYMBOLIC_EXTENT (for choosing tiles) and its variable is in `symbolic`.
    extents: dict[tir.Var, int]
    position: dict[tir.Var, int]  # depth of the loop running each variable
    symbolic: frozenset[tir.Var] = frozenset()

    def loops(self, sch: Schedule, block: BlockRV) -> dict[tir.Var, LoopRV]:
        """The loop handle of each variable, before any loop is changed."""
        handles = sch.get_loops(block)
        return {v: handles[n] for v, n in self.position.items()}

    def readers(self, var: tir.Var) -> list[Operand]:
        return [op for op in self.operands if op.reads(var)]


def _strip_cast(e: tir.PrimExpr) -> tir.PrimExpr:
    return e.value if isinstance(e, tir.Cast) else e


def function_name(sch: Schedule) -> str:
    """The prim function the schedule works on."""
    name = sch.func_working_on
    if name is None:
        (name,) = [k for k, f in sch.mod.functions.items() if isinstance(f, tir.PrimFunc)]
    return name


def block_realize(sch: Schedule, block: BlockRV) -> tir.BlockRealize:
    """The realize of the block `block` names in the schedule's current function."""
    return Tree(sch.mod[function_name(sch)]).realize_of[id(sch.get(block))]


def match_contraction(sch: Schedule, block: BlockRV) -> Contraction | None:
    """The contraction `block` computes, or None when it is not one (or has been
    scheduled already: its loops must be its iteration variables, one each)."""
    realize = block_realize(sch, block)
    loops = [sch.get(lp) for lp in sch.get_loops(block)]
    return contraction_of(realize, loops)


def contraction_of(realize: tir.BlockRealize, loops: list[tir.For]) -> Contraction | None:
    """The contraction of the block `realize` instantiates under `loops` (outermost
    first), or None when it is not one or its loops are not its iteration
    variables, one each, from 0."""
    blk = realize.block
    store = blk.body
    if not isinstance(store, tir.BufferStore) or not isinstance(blk.init, tir.BufferStore):
        return None
    if arith.as_bool(realize.predicate) is not True:
        return None
    kinds = {iv.var: iv.kind for iv in blk.iter_vars}
    if any(k not in (tir.SPATIAL, tir.REDUCE) for k in kinds.values()):
        return None
    spatial = tuple(v for v, k in kinds.items() if k == tir.SPATIAL)
    reduce = tuple(v for v, k in kinds.items() if k == tir.REDUCE)
    if not reduce or tuple(store.indices) != spatial:
        return None
    init = blk.init
    if init.buffer is not store.buffer or tuple(init.indices) != spatial:
        return None
    zero = _strip_cast(init.value)
    if not (isinstance(zero, (tir.IntImm, tir.FloatImm)) and zero.value == 0):
        return None
    operands = _operands(blk, store)
    if operands is None or len(loops) != len(blk.iter_vars):
        return None
    position: dict[tir.Var, int] = {}
    extents: dict[tir.Var, int] = {}
    symbolic: set[tir.Var] = set()
    for n, (iv, value, loop) in enumerate(
        zip(blk.iter_vars, realize.iter_values, loops, strict=True)
    ):
        if value is not loop.loop_var or arith.as_int(loop.min) != 0:
            return None
        if arith.as_int(iv.dom.min) != 0:
            return None
        if arith.as_int(arith.difference(loop.extent, iv.dom.extent)) != 0:
            return None
        extent = arith.as_int(iv.dom.extent)
        if extent is None:
            symbolic.add(iv.var)
        position[iv.var], extents[iv.var] = n, estimate(iv.dom.extent if extent is None else extent)
    return Contraction(
        store.buffer, operands, spatial, reduce, extents, position, frozenset(symbolic)
    )


def _operands(blk: tir.Block, store: tir.BufferStore) -> tuple[Operand, Operand] | None:
    """The factors of `C = C + X * Y` (either order, loads possibly cast)."""
    value = store.value
    if not (isinstance(value, tir.BinaryOp) and value.kind == "add"):
        return None
    acc, product = value.a, _strip_cast(value.b)
    if not (isinstance(acc, tir.BufferLoad) and acc.buffer is store.buffer):
        acc, product = value.b, _strip_cast(value.a)
    if not (isinstance(acc, tir.BufferLoad) and acc.buffer is store.buffer):
        return None
    if tuple(acc.indices) != tuple(store.indices):
        return None
    if not (isinstance(product, tir.BinaryOp) and product.kind == "mul"):
        return None
    loads = [_strip_cast(product.a), _strip_cast(product.b)]
    read_buffers = [r.buffer for r in blk.reads]
    operands = []
    for load in loads:
        if not isinstance(load, tir.BufferLoad):
            return None
        if load.buffer is store.buffer or load.buffer not in read_buffers:
            return None
        operands.append(Operand(load))
    if operands[0].buffer is operands[1].buffer:
        return None  # A @ A: one cache_read would serve both factors
    return operands[0], operands[1]

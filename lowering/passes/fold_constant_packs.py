"""FoldConstantPacks: a weight a kernel re-lays-out on every call, when it is a
constant (an imported model's weight, a parameter bound by `params=`), is laid
out once, at build time.

The default schedule packs the operand of a contraction read along the vector
axis into column panels (lowering/schedule_rules/packing.py): a copy at the
start of the kernel, marked with TVM's `meta_schedule.layout_rewrite_preproc`.
For a weight that copy is the same on every call: a dense layer of 1376 x 512
floats copies 2.8 MB before each product, and holds the copy while it runs.
Here, for each kernel call whose argument to such a copy is a `relax.Constant`,
the copy is computed with NumPy from the constant (the copy's loops, bindings,
predicate and indices evaluated over every iteration at once), and the call
passes the packed array instead: the kernel's variant without the copy takes
the packed buffer in the weight's place (TVM's SplitLayoutRewritePreproc and
FoldConstant, in one step). Calls with a non-constant weight keep the kernel
as it is. A copy this evaluator cannot read (a construct it does not know)
stays in the kernel: the result is the same, only later.

It runs at the schedule point, after DefaultCPUSchedule.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from tvmlite.dsl import relax, tir
from tvmlite.dsl.call_tir import CallTIR
from tvmlite.dsl.module import IRModule
from tvmlite.dsl.relax_mutator import ExprMutator
from tvmlite.dsl.walk import walk
from tvmlite.lowering.schedule_rules.packing import PREPROC
from tvmlite.lowering.transform import Pass, is_external


@dataclass(frozen=True)
class _Pack:
    """A kernel's copy of parameter `param` (a position in its params) into the
    buffer `packed`, the root statement `stmt` of the copy's loops."""

    param: int
    stmt: int
    packed: tir.Buffer


@dataclass(frozen=True)
class FoldConstantPacks(Pass):
    name: str = "FoldConstantPacks"

    def run(self, mod: IRModule) -> IRModule:
        # Only kernels some call gives a constant can fold: the others are not
        # searched for copies (a model's weights are mostly parameters).
        given = _given_constants(mod)
        packs = {
            name: found
            for name, func in mod.functions.items()
            if name in given and isinstance(func, tir.PrimFunc) and (found := _packs(func))
        }
        if not packs:
            return mod
        folder = _Folder(mod, packs)
        functions = {
            name: folder.visit_expr(func)
            if isinstance(func, relax.Function) and not is_external(func)
            else func
            for name, func in mod.functions.items()
        }
        if not folder.variants:
            return mod
        functions.update(folder.variants)
        called = {
            node.name
            for func in functions.values()
            if isinstance(func, relax.Function)
            for node in walk(func)
            if isinstance(node, relax.GlobalVar)
        }
        kept = {n: f for n, f in functions.items() if n not in packs or n in called}
        return mod.with_functions(kept)


# ---------------------------------------------------------------- finding copies


def _given_constants(mod: IRModule) -> set[str]:
    """The kernels some call of a graph function passes a constant argument."""
    names = set()
    for func in mod.functions.values():
        if isinstance(func, relax.Function) and not is_external(func):
            for node in walk(func):
                view = CallTIR.of(node) if isinstance(node, relax.Call) else None
                if view is not None and any(isinstance(a, relax.Constant) for a in view.args):
                    names.add(view.callee.name)
    return names


def has_foldable_copies(func: tir.PrimFunc) -> bool:
    """Whether the pass could take a weight copy out of `func` (when a call gives
    it a constant weight): the lowered-function cache keeps such functions'
    scheduled form for it (lowering/incremental.py)."""
    return bool(_packs(func))


def _packs(func: tir.PrimFunc) -> tuple[_Pack, ...]:
    """The copies of a parameter into a buffer of the root block that the kernel
    could take ready-made: a root statement holding only the marked copy, of
    constant loops, reading a parameter nothing else in the kernel reads."""
    root = func.body
    if not isinstance(root, tir.BlockRealize):
        return ()
    body = root.block.body
    stmts = body.seq if isinstance(body, tir.SeqStmt) else (body,)
    params = {buf: k for k, (_, buf) in enumerate(func.buffer_map)}
    found = []
    for k, stmt in enumerate(stmts):
        blocks = [n for n in walk(stmt) if isinstance(n, tir.Block)]
        if len(blocks) != 1 or dict(blocks[0].annotations).get(PREPROC) is not True:
            continue
        block = blocks[0]
        if not (isinstance(block.body, tir.BufferStore) and len(block.writes) == 1):
            continue
        packed = block.body.buffer
        sources = {load.buffer for load in _loads(block.body)}
        if packed not in root.block.alloc_buffers or len(sources) != 1:
            continue
        (source,) = sources
        others = [s for j, s in enumerate(stmts) if j != k]
        if source not in params or any(source in _read_buffers(s) for s in others):
            continue
        if _nest(stmt) is None:
            continue
        found.append(_Pack(params[source], k, packed))
    return tuple(found)


def _loads(node: Any) -> list[tir.BufferLoad]:
    return [n for n in walk(node) if isinstance(n, tir.BufferLoad)]


def _read_buffers(node: Any) -> set[tir.Buffer]:
    return {load.buffer for load in _loads(node)}


def _nest(stmt: tir.Stmt) -> tuple[list[tir.For], tir.BlockRealize] | None:
    """The perfect nest of constant loops down to a block, or None."""
    loops = []
    while isinstance(stmt, tir.For):
        if not (isinstance(stmt.min, tir.IntImm) and isinstance(stmt.extent, tir.IntImm)):
            return None
        if stmt.step is not None:
            return None
        loops.append(stmt)
        stmt = stmt.body
    return (loops, stmt) if isinstance(stmt, tir.BlockRealize) else None


# ---------------------------------------------------------------- evaluating one


class _Unsupported(Exception):
    """The copy uses a construct the evaluator does not read."""


_ARITH = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "floordiv": np.floor_divide,
    "floormod": np.mod,
    "min": np.minimum,
    "max": np.maximum,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
    "eq": np.equal,
    "ne": np.not_equal,
    "and": np.logical_and,
    "or": np.logical_or,
}


def evaluate_pack(func: tir.PrimFunc, pack: _Pack, weight: np.ndarray) -> np.ndarray:
    """The packed buffer the copy of `func` writes from `weight`."""
    root = func.body
    assert isinstance(root, tir.BlockRealize)
    body = root.block.body
    stmts = body.seq if isinstance(body, tir.SeqStmt) else (body,)
    nest = _nest(stmts[pack.stmt])
    assert nest is not None
    loops, realize = nest
    grids = np.meshgrid(
        *(np.arange(lp.min.value, lp.min.value + lp.extent.value) for lp in loops),  # type: ignore[union-attr]
        indexing="ij",
    )
    env: dict[tir.Var, np.ndarray] = {
        lp.loop_var: g.ravel() for lp, g in zip(loops, grids, strict=True)
    }
    source = func.buffer_map[pack.param][1]
    arrays = {source: weight}
    block = realize.block
    for iv, value in zip(block.iter_vars, realize.iter_values, strict=True):
        env[iv.var] = _eval(value, env, arrays)
    store = block.body
    assert isinstance(store, tir.BufferStore)
    mask = np.broadcast_to(_eval(realize.predicate, env, arrays), env[loops[-1].loop_var].shape)
    index = [np.broadcast_to(_eval(i, env, arrays), mask.shape)[mask] for i in store.indices]
    values = np.broadcast_to(_eval(store.value, env, arrays), mask.shape)[mask]
    shape = tuple(d.value if isinstance(d, tir.IntImm) else -1 for d in pack.packed.shape)
    if min(shape) < 0:
        raise _Unsupported("a packed buffer of symbolic shape")
    out = np.zeros(shape, dtype=pack.packed.dtype)
    out[tuple(index)] = values
    return out


def _eval(e: tir.PrimExpr, env: dict[tir.Var, np.ndarray], arrays: dict) -> np.ndarray:
    if isinstance(e, (tir.IntImm, tir.FloatImm)):
        return np.array(e.value, dtype=e.dtype)
    if isinstance(e, tir.Var):
        if e not in env:
            raise _Unsupported(f"var {e.name}")
        return env[e]
    if isinstance(e, tir.Cast):
        return _eval(e.value, env, arrays).astype(e.dtype)
    if isinstance(e, tir.BinaryOp) and e.kind in _ARITH:
        return _ARITH[e.kind](_eval(e.a, env, arrays), _eval(e.b, env, arrays))
    if isinstance(e, tir.Select):
        cond = _eval(e.condition, env, arrays)
        return np.where(cond, _eval(e.true_value, env, arrays), _eval(e.false_value, env, arrays))
    if isinstance(e, tir.Call) and e.op == "if_then_else" and len(e.args) == 3:
        cond, yes, no = (_eval(a, env, arrays) for a in e.args)
        return np.where(cond, yes, no)
    if isinstance(e, tir.BufferLoad) and e.buffer in arrays:
        array = arrays[e.buffer]
        # Clipped: a load under a false condition is computed, then not used.
        index = [
            np.clip(_eval(i, env, arrays), 0, n - 1)
            for i, n in zip(e.indices, array.shape, strict=True)
        ]
        return array[tuple(np.broadcast_arrays(*index))]
    raise _Unsupported(type(e).__name__)


# ---------------------------------------------------------------- rewriting calls


class _Folder(ExprMutator):
    """Calls of kernels with copies of constant arguments: the copies done here."""

    def __init__(self, mod: IRModule, packs: dict[str, tuple[_Pack, ...]]) -> None:
        super().__init__()
        self.mod = mod
        self.packs = packs
        self.variants: dict[str, tir.PrimFunc] = {}
        self.done: dict[tuple[int, str, int], relax.Constant] = {}

    def visit_Call(self, e: relax.Call) -> relax.Expr:
        call = super().visit_Call(e)
        view = CallTIR.of(call)
        if view is None or view.callee.name not in self.packs:
            return call
        func = self.mod.functions[view.callee.name]
        assert isinstance(func, tir.PrimFunc)
        folded = []
        args = list(view.args)
        for pack in self.packs[view.callee.name]:
            arg = args[pack.param] if pack.param < len(args) else None
            if not isinstance(arg, relax.Constant):
                continue
            key = (id(arg.data), view.callee.name, pack.param)
            if key not in self.done:
                try:
                    packed = evaluate_pack(func, pack, arg.data)
                except (_Unsupported, IndexError, ValueError, TypeError):
                    continue
                self.done[key] = relax.Constant(packed)
            args[pack.param] = self.done[key]
            folded.append(pack)
        if not folded:
            return call
        name = self._variant(view.callee.name, func, tuple(folded))
        callee_args = (relax.GlobalVar(name), relax.Tuple(tuple(args)), *call.args[2:])
        return replace(call, args=callee_args)

    def _variant(self, name: str, func: tir.PrimFunc, folded: tuple[_Pack, ...]) -> str:
        """The kernel without the copies `folded`, taking their results instead."""
        variant = f"{name}_prepacked"
        if len(folded) < len(self.packs[name]):  # another call folds other copies
            variant += "".join(f"_{p.param}" for p in folded)
        if variant in self.variants:
            return variant
        root = func.body
        assert isinstance(root, tir.BlockRealize)
        body = root.block.body
        stmts = body.seq if isinstance(body, tir.SeqStmt) else (body,)
        dropped = {p.stmt for p in folded}
        rest = [s for k, s in enumerate(stmts) if k not in dropped]
        packed = {p.packed for p in folded}
        block = replace(
            root.block,
            body=rest[0] if len(rest) == 1 else tir.SeqStmt(tuple(rest)),
            alloc_buffers=tuple(b for b in root.block.alloc_buffers if b not in packed),
        )
        buffer_map = list(func.buffer_map)
        params = list(func.params)
        for p in folded:
            handle, _ = buffer_map[p.param]
            new = tir.Var(p.packed.name, "handle")
            buffer_map[p.param] = (new, p.packed)
            params[params.index(handle)] = new
        self.variants[variant] = replace(
            func,
            params=tuple(params),
            buffer_map=tuple(buffer_map),
            body=replace(root, block=block),
        )
        return variant

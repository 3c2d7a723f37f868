"""The static memory plan of a graph function: which kernel outputs share storage.

Host code used to allocate every `R.call_tir` output as its own block and free it
after its last use. Here the outputs of static shape that do not escape are
placed in one arena allocated per call, and two of them share bytes when their
lives do not overlap:

- Liveness is over the top-level bindings, in order. A value is live from the
  binding that makes it to the last binding that uses it or anything that may
  alias it (a var bound to it, a tuple holding it, a `TupleGetItem` of such a
  tuple, an `R.If` or `R.match_cast` whose result may be it, the result of an
  in-place call that writes it).
- Outputs that may reach the function's result (directly or through tuples)
  escape: they keep their own block, which the caller receives without a copy.
  Outputs of shapes known only at run time keep their own block too (the block
  cache of the support code makes those cheap), as do outputs made inside
  `R.If` branches.
- Storage is assigned in binding order, best fit: the smallest free storage that
  holds the output, else the largest free one, grown (the plan is static: a
  storage's size is the largest output it ever holds), else a new one. The
  storage of a value whose last use is binding `i` is free for the outputs of
  bindings after `i`, never for binding `i`'s own outputs, which its kernel
  writes while it reads its inputs.

Each planned output also has a header of its own after the storages: a
DLManagedTensorVersioned without deleter over its bytes, which host code keeps
in a frame slot like a block it owns (releasing it does nothing), so the code
that reads, releases and returns slots needs no case for planned outputs.

The plan is data (offsets into the arena by binding); `llvm_host.py` emits it.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tvmlite.dsl import relax, tir
from tvmlite.dsl.call_tir import CallTIR
from tvmlite.lowering.codegen import llvm_types as ty
from tvmlite.lowering.codegen.llvm_host_abi import HEADER_BYTES
from tvmlite.runtime.abi import leaves

PLAN_KEY = "tvmlite.memory_plan"  # PassContext config: False allocates every output alone
ALIGN = 64  # offsets and sizes in the arena: what `tvmlite_alloc_tensor` gives data
HEADER_ROOM = -(-HEADER_BYTES // ALIGN) * ALIGN  # arena bytes of one output's header
ARENA_SLOT = 0  # the frame slot of the arena: allocated first, released last
# calls whose results are some of their arguments (`inplace_indices`)
INPLACE = frozenset({"relax.call_tir_inplace", "relax.call_inplace_packed"})


@dataclass(frozen=True)
class MemoryPlan:
    """`offsets[var][k]` is where the data of output leaf `k` of the `R.call_tir`
    bound to `var` lives in the arena (None: a block of its own), `headers[var][k]`
    where its header is; `storage[var][k]` is which storage the data is in,
    `sizes` the bytes of each storage, in arena order, then the headers."""

    offsets: dict[relax.Var, tuple[int | None, ...]] = field(default_factory=dict)
    headers: dict[relax.Var, tuple[int | None, ...]] = field(default_factory=dict)
    storage: dict[relax.Var, tuple[int | None, ...]] = field(default_factory=dict)
    sizes: tuple[int, ...] = ()
    arena_bytes: int = 0  # the storages and the headers
    planned_bytes: int = 0  # what the planned outputs would take as blocks of their own


@dataclass(frozen=True)
class _Value:
    """One static output: made by binding `at`, leaf `leaf` of `count` of `var`."""

    at: int
    var: relax.Var
    leaf: int
    count: int
    size: int


def inplace_arguments(call: relax.Call) -> list[relax.Expr]:
    """The arguments an in-place call (`INPLACE`) writes: those `inplace_indices` names."""
    args = call.args[1].fields if call.op.name == "relax.call_tir_inplace" else call.args[1:]
    found = (int(i) for i in dict(call.attrs).get("inplace_indices", ()))
    return [args[i] for i in found if 0 <= i < len(args)]


def alias_roots(e: relax.Expr, roots: Mapping[relax.Var, set[int]]) -> set[int]:
    """The storages (ids in `roots`) a value may share with earlier values, not
    counting the ones it makes."""
    if isinstance(e, relax.Var):
        return set(roots.get(e, ()))
    if isinstance(e, relax.Tuple):
        out: set[int] = set()
        for f in e.fields:
            out |= alias_roots(f, roots)
        return out
    if isinstance(e, relax.TupleGetItem):
        return alias_roots(e.tuple_value, roots)
    if isinstance(e, relax.Call) and isinstance(e.op, relax.Op) and e.op.name in INPLACE:
        out = set()  # the in-place arguments are the result: their storages live on
        for arg in inplace_arguments(e):
            out |= alias_roots(arg, roots)
        return out
    if isinstance(e, relax.If | relax.SeqExpr):
        out = set()
        for v in referenced_vars(e):
            out |= roots.get(v, set())
        return out
    return set()


def written_params(func: relax.Function) -> frozenset[int]:
    """The positions of `func`'s parameters an in-place call may write (through
    any alias, in any branch): the caller's tensors there must be writable."""
    roots: dict[relax.Var, set[int]] = {p: {k} for k, p in enumerate(func.params)}
    written: set[int] = set()

    def visit(e: relax.Expr) -> None:
        if isinstance(e, relax.SeqExpr):
            for block in e.blocks:
                for bd in block.bindings:
                    visit(bd.value)
                    roots[bd.var] = alias_roots(bd.value, roots)
        elif isinstance(e, relax.If):
            visit(e.true_branch)
            visit(e.false_branch)
        elif isinstance(e, relax.Call) and isinstance(e.op, relax.Op) and e.op.name in INPLACE:
            for arg in inplace_arguments(e):
                written.update(alias_roots(arg, roots))

    visit(func.body)
    return frozenset(written)


def last_uses(bindings: list[relax.Binding], body: relax.Expr) -> dict[relax.Var, int]:
    """The index of the last binding that mentions each var (len(bindings): the body)."""
    last: dict[relax.Var, int] = {}
    for i, bd in enumerate(bindings):
        for v in referenced_vars(bd.value):
            last[v] = i
    for v in referenced_vars(body):
        last[v] = len(bindings)
    return last


def static_bytes(sinfo: relax.StructInfo) -> int | None:
    """The data bytes of a tensor of static shape and known dtype, rounded to ALIGN."""
    if not isinstance(sinfo, relax.TensorStructInfo) or not isinstance(sinfo.shape, tuple):
        return None
    if sinfo.dtype == "void" or not all(isinstance(d, tir.IntImm) for d in sinfo.shape):
        return None
    count = 1
    for d in sinfo.shape:
        count *= d.value
    return -(-max(count * ty.byte_size(sinfo.dtype), 1) // ALIGN) * ALIGN


def _call_tir_outputs(bd: relax.Binding) -> list[int | None] | None:
    """The static byte sizes of the outputs of a top-level `R.call_tir` binding
    (not `call_tir_inplace`: its outputs are its inputs)."""
    view = None if isinstance(bd, relax.MatchCast) else CallTIR.of(bd.value)
    if view is None:
        return None
    return [static_bytes(leaf.sinfo) for leaf in leaves(view.out_sinfo, "output")]


def plan_memory(func: relax.Function) -> MemoryPlan:
    body = func.body
    if not isinstance(body, relax.SeqExpr):
        return MemoryPlan()
    bindings = [bd for block in body.blocks for bd in block.bindings]
    last = last_uses(bindings, body.body)
    roots: dict[relax.Var, set[int]] = {}
    made: list[_Value] = []
    for i, bd in enumerate(bindings):
        new: set[int] = set()
        sizes = _call_tir_outputs(bd) or []
        for k, size in enumerate(sizes):
            if size is not None:
                new.add(len(made))
                made.append(_Value(i, bd.var, k, len(sizes), size))
        roots[bd.var] = new | alias_roots(bd.value, roots)
    escaping = alias_roots(body.body, roots)
    end = [value.at for value in made]
    for v, ids in roots.items():
        for c in ids:
            end[c] = max(end[c], last.get(v, end[c]))
    planned = [c for c in range(len(made)) if c not in escaping]
    return _assign(len(bindings), made, {c: end[c] for c in planned})


def _assign(count: int, made: list[_Value], end: dict[int, int]) -> MemoryPlan:
    """Storage for the values in `end` (value -> its last binding), in binding order."""
    sizes: list[int] = []
    free: list[int] = []  # storages no live value holds
    holder: dict[int, int] = {}  # value -> storage
    born: dict[int, list[int]] = {}
    dying: dict[int, list[int]] = {}
    for c, last in end.items():
        born.setdefault(made[c].at, []).append(c)
        dying.setdefault(last, []).append(c)
    for i in range(count):
        for c in born.get(i, ()):
            holder[c] = _best_fit(made[c].size, free, sizes)
        for c in dying.get(i, ()):
            free.append(holder[c])
    starts = [sum(sizes[:s]) for s in range(len(sizes))]
    offsets: dict[relax.Var, list[int | None]] = {}
    headers: dict[relax.Var, list[int | None]] = {}
    storage: dict[relax.Var, list[int | None]] = {}
    header = sum(sizes)
    for c, s in holder.items():
        value = made[c]
        offsets.setdefault(value.var, [None] * value.count)[value.leaf] = starts[s]
        headers.setdefault(value.var, [None] * value.count)[value.leaf] = header
        storage.setdefault(value.var, [None] * value.count)[value.leaf] = s
        header += HEADER_ROOM
    return MemoryPlan(
        offsets={v: tuple(o) for v, o in offsets.items()},
        headers={v: tuple(h) for v, h in headers.items()},
        storage={v: tuple(s) for v, s in storage.items()},
        sizes=tuple(sizes),
        arena_bytes=header,
        planned_bytes=sum(made[c].size for c in holder),
    )


def _best_fit(size: int, free: list[int], sizes: list[int]) -> int:
    """Take a free storage for `size` bytes (see the module docstring)."""
    fits = [s for s in free if sizes[s] >= size]
    if fits:
        chosen = min(fits, key=lambda s: sizes[s])
    elif free:
        chosen = max(free, key=lambda s: sizes[s])
        sizes[chosen] = size
    else:
        sizes.append(size)
        return len(sizes) - 1
    free.remove(chosen)
    return chosen


def referenced_vars(node: Any) -> list[relax.Var]:
    """Every Relax var a node mentions, nested expressions included."""
    found: dict[relax.Var, None] = {}
    _walk(node, found)
    return list(found)


def _walk(node: Any, found: dict[relax.Var, None]) -> None:
    if isinstance(node, relax.Var):
        found.setdefault(node)
        return
    if isinstance(node, tuple):
        for item in node:
            _walk(item, found)
        return
    if isinstance(node, relax.Expr | relax.BindingBlock | relax.VarBinding | relax.MatchCast):
        if isinstance(node, relax.Constant | relax.Function):
            return
        for name in _walked_fields(type(node)):
            _walk(getattr(node, name), found)


@functools.cache
def _walked_fields(kind: type) -> tuple[str, ...]:
    """The fields of a node class that may hold vars (asked once per class: the
    walk runs over every binding of every function)."""
    skip = ("span", "sinfo_args", "struct_info", "attrs")
    return tuple(f.name for f in dataclasses.fields(kind) if f.name not in skip)

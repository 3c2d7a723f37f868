"""Which fusion pattern a prim function follows, read from its blocks and indices.

A port of TVM's `PatternKindAnalyzer` (relax/analysis/tir_op_pattern_kind.cc):
every non-root block must store to one place; its loads, compared with that
store's indices, make it elementwise, broadcast or injective; otherwise a block
with reduce iter vars is a reduction (a multiply-add or a non-pure reduction such
as pooling is out_ewise_fusible). The function's kind is the worst block's.
Fusion only needs this one number, so it works for hand-written kernels too.

Differences from TVM: a function with no block at all, a `while` loop, or an
extern/packed call is opaque (TVM would call the first elementwise and not look
at the others: IR its legalization never produces). And a load whose indices
read a symbolic size (`A[i // n, i % n]`, a reshape over a symbolic dim) is
injective, where TVM calls it opaque because `n` is not an index of the store:
a size is constant within the call, and the opaque kind kept every reshape of a
dynamic model out of fusion (a copy kernel each).
"""

from __future__ import annotations

from tvmlite.dsl import tir
from tvmlite.dsl.analysis import free_vars
from tvmlite.dsl.ops import OpPatternKind
from tvmlite.dsl.tir_functor import StmtExprVisitor

# Calls into code the analysis cannot see: the kernel may do anything.
OPAQUE_CALLS = frozenset(
    {
        "call_extern",
        "call_packed",
        "call_cpacked",
        "call_packed_lowered",
        "call_cpacked_lowered",
        "tvm_call_packed",
        "tvm_call_cpacked",
        "call_llvm_intrin",
    }
)


def analyze_op_pattern(func: tir.PrimFunc) -> OpPatternKind:
    """The fusion pattern of `func` (TVM's `AnalyzeOpPatternKind`)."""
    if calls_opaque_code(func):
        return OpPatternKind.kOpaque
    iterators = _Iterators()
    iterators.visit_stmt(func.body)
    analyzer = _PatternAnalyzer({buf for _, buf in func.buffer_map}, iterators.found)
    analyzer.visit_stmt(func.body)
    if not analyzer.saw_block:
        return OpPatternKind.kOpaque
    return analyzer.kind


def calls_opaque_code(func: tir.PrimFunc) -> bool:
    """Whether `func` has a `while` loop or calls code the analysis cannot see
    (extern, packed): then it may have effects that loops must not reorder."""
    opaque = _OpaqueConstructs()
    opaque.visit_stmt(func.body)
    return opaque.found


class _OpaqueConstructs(StmtExprVisitor):
    """Finds a `while` loop or a call into code the analysis cannot see."""

    def __init__(self) -> None:
        self.found = False

    def visit_While(self, s: tir.While) -> None:
        self.found = True

    def visit_Call(self, e: tir.Call) -> None:
        self.found = self.found or e.op in OPAQUE_CALLS
        super().visit_Call(e)


def expr_vars(expr: tir.PrimExpr) -> set[tir.Var]:
    """The vars an expression reads (not the vars inside the buffers it loads from)."""
    return set(free_vars(expr, buffers=False))


class _Iterators(StmtExprVisitor):
    """The vars the function's loops and blocks iterate over (everything else an
    index reads is a size, constant for the call)."""

    def __init__(self) -> None:
        self.found: set[tir.Var] = set()

    def visit_For(self, s: tir.For) -> None:
        self.found.add(s.loop_var)
        super().visit_For(s)

    def visit_Block(self, s: tir.Block) -> None:
        self.found.update(iv.var for iv in s.iter_vars)
        super().visit_Block(s)


class _PatternAnalyzer(StmtExprVisitor):
    """The visitor: state is shared across nested blocks exactly as in TVM. Loads
    are collected outer before inner (TVM's visiting order)."""

    def __init__(self, param_buffers: set[tir.Buffer], iterators: set[tir.Var]) -> None:
        self.param_buffers = param_buffers
        self.iterators = iterators
        self.store: tir.BufferStore | None = None
        self.loads: list[tir.BufferLoad] = []
        self.kind = OpPatternKind.kElemWise
        self.saw_block = False

    def visit_buffer(self, buffer: tir.Buffer) -> None:
        pass  # shapes hold no loads

    def visit_AssertStmt(self, s: tir.AssertStmt) -> None:
        pass  # the index checks tvmlite adds (TVM has none) are not part of the pattern

    def visit_BufferLoad(self, e: tir.BufferLoad) -> None:
        self.loads.append(e)
        super().visit_BufferLoad(e)

    def visit_BufferStore(self, s: tir.BufferStore) -> None:
        # TVM supports one store location per block (what TE compute emits).
        if self.store is not None and self.store.indices != s.indices:
            self.kind = OpPatternKind.kOpaque
            return
        self.store = s
        super().visit_BufferStore(s)

    def visit_Block(self, block: tir.Block) -> None:
        if block.name == "root":
            self.visit_stmt(block.body)
            return
        self.saw_block = True
        self.loads = []
        self.store = None
        self.visit_stmt(block.body)
        if self.store is None:
            self.kind = OpPatternKind.kOpaque
            return
        store = self.store
        index_kind = OpPatternKind.kElemWise
        has_elemwise = False
        for load in self.loads:
            if _is_elemwise(store, load):
                has_elemwise = True
            elif _is_broadcast(store, load):
                index_kind = max(index_kind, OpPatternKind.kBroadcast)
            elif _is_injective(store, load, self.iterators):
                index_kind = max(index_kind, OpPatternKind.kInjective)
            else:
                index_kind = OpPatternKind.kOpaque
                break
        # C[i, j] = A[i, j] + B[j] is elementwise: one operand keeps the full index.
        if index_kind == OpPatternKind.kBroadcast and has_elemwise:
            index_kind = OpPatternKind.kElemWise
        if index_kind != OpPatternKind.kOpaque:
            # softmax-like: a reduction followed by an injective output block.
            if self._is_output_block(block) and self.kind == OpPatternKind.kCommReduce:
                self.kind = OpPatternKind.kOutEWiseFusable
            else:
                self.kind = max(self.kind, index_kind)
            return
        reduce_vars = [iv.var for iv in block.iter_vars if iv.kind == tir.REDUCE]
        if not reduce_vars:
            self.kind = OpPatternKind.kOpaque
            return
        if _is_fma(block.body) or not all(
            _is_pure_reduce(reduce_vars, load.indices) for load in self.loads
        ):
            # matmul/conv (multiply-add) and pooling (window indices) take epilogues.
            self.kind = max(self.kind, OpPatternKind.kOutEWiseFusable)
            return
        self.kind = max(self.kind, OpPatternKind.kCommReduce)

    def _is_output_block(self, block: tir.Block) -> bool:
        return any(region.buffer in self.param_buffers for region in block.writes)


def _is_elemwise(store: tir.BufferStore, load: tir.BufferLoad) -> bool:
    return store.indices == load.indices


def _is_const(e: tir.PrimExpr, value: int) -> bool:
    return isinstance(e, tir.IntImm) and e.value == value


def _is_broadcast(store: tir.BufferStore, load: tir.BufferLoad) -> bool:
    """Load indices are store indices, in order (unit dims read at 0 skipped)."""
    j = 0
    n_store = len(store.indices)
    for i, index in enumerate(load.indices):
        if (
            i < len(load.buffer.shape)
            and _is_const(load.buffer.shape[i], 1)
            and _is_const(index, 0)
        ):
            continue
        while j < n_store and store.indices[j] != index:
            j += 1
        if j == n_store:
            return False
    return True


def _is_injective(store: tir.BufferStore, load: tir.BufferLoad, iterators: set[tir.Var]) -> bool:
    """Store indices are plain vars and the load iterates over no var beyond them
    (it may read sizes)."""
    if not all(isinstance(i, tir.Var) for i in store.indices):
        return False
    allowed = set(store.indices)
    return all(expr_vars(i) & iterators <= allowed for i in load.indices)


def _allows_reuse(store: tir.BufferStore, load: tir.BufferLoad) -> bool:
    """Some store var is missing from the load (the load is reused across it)."""
    if not all(isinstance(i, tir.Var) for i in store.indices):
        return False
    used: set[tir.Var] = set()
    for index in load.indices:
        used |= expr_vars(index)
    return bool(set(store.indices) - used)


def _strip_cast(e: tir.PrimExpr) -> tir.PrimExpr:
    while isinstance(e, tir.Cast):
        e = e.value
    return e


def _is_fma(body: tir.Stmt) -> bool:
    """`C[i, j] = C[i, j] + A[..] * B[..]` with both operands reused (matmul, conv)."""
    if not isinstance(body, tir.BufferStore):
        return False
    add = _strip_cast(body.value)
    if not (isinstance(add, tir.BinaryOp) and add.kind == "add"):
        return False
    mul = _strip_cast(add.b)
    if not (isinstance(mul, tir.BinaryOp) and mul.kind == "mul"):
        return False
    acc = _strip_cast(add.a)
    if not (
        isinstance(acc, tir.BufferLoad)
        and acc.buffer is body.buffer
        and acc.indices == body.indices
    ):
        return False
    lhs, rhs = _strip_cast(mul.a), _strip_cast(mul.b)
    if not (isinstance(lhs, tir.BufferLoad) and isinstance(rhs, tir.BufferLoad)):
        return False
    return _allows_reuse(body, lhs) and _allows_reuse(body, rhs)


def _is_pure_reduce(reduce_vars: list[tir.Var], indices: tuple[tir.PrimExpr, ...]) -> bool:
    """Every index that mentions a reduce var is exactly that var (`sum(B[i, k])`)."""
    for index in indices:
        used = [v for v in reduce_vars if v in expr_vars(index)]
        if used and index is not used[0]:
            return False
    return True

"""`Schedule`: TVM's schedule primitives over a module's prim functions.

Names, arguments and results follow TVM 0.27's `tvm.s_tir.Schedule`
(`get_block` is accepted beside `get_sblock`). Each public method resolves
its handles, runs the primitive (a pure function from the old function to a
`Change`, in the primitive-group modules beside this one), commits the change,
records the call in the trace and wraps new nodes in handles. A primitive that
raises `ScheduleError` leaves the module, the handles and the trace untouched.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tvmlite.dsl import tir
from tvmlite.dsl.module import TVM027, IRModule
from tvmlite.dsl.verify.tir import verify_prim_func
from tvmlite.lowering.schedule import (
    annotate,
    blockize,
    cache,
    compute_at,
    inline,
    layout,
    loops,
    merge,
    navigate,
    pad_einsum,
    padding,
    reduction,
    reindex,
    rfactor,
    storage,
)
from tvmlite.lowering.schedule.index_map import IndexMap
from tvmlite.lowering.schedule.state import BlockRV, LoopRV, ScheduleError, State
from tvmlite.lowering.schedule.trace import Instruction, Trace
from tvmlite.lowering.schedule.tree import Change


class Schedule:
    """Schedules the prim functions of `mod` (an IRModule, or a lone PrimFunc,
    scheduled as "main"). `debug_mask="all"` runs the TIR verifier after every
    primitive."""

    def __init__(self, mod: Any, *, debug_mask: str | int = "none") -> None:
        if isinstance(mod, tir.PrimFunc):
            mod = IRModule({"main": mod}, dialect=TVM027)
        if not isinstance(mod, IRModule):
            raise ScheduleError(
                f"Schedule takes an IRModule or a PrimFunc, got {type(mod).__name__}"
            )
        if debug_mask not in ("none", "all", 0, -1):
            raise ScheduleError(f"debug_mask must be 'none' or 'all', got {debug_mask!r}")
        self._state = State(mod)
        self._verify = debug_mask in ("all", -1)
        self._trace = Trace()
        prims = [n for n, f in mod.functions.items() if isinstance(f, tir.PrimFunc)]
        self._func_working_on: str | None = (
            "main" if "main" in prims else prims[0] if len(prims) == 1 else None
        )

    # ------------------------------------------------------------ utilities

    @property
    def mod(self) -> IRModule:
        """The module as scheduled so far."""
        return self._state.mod

    @property
    def trace(self) -> Trace:
        """The primitives applied so far (printable as Python, replayable)."""
        return self._trace

    @property
    def func_working_on(self) -> str | None:
        return self._func_working_on

    def work_on(self, func_name: str) -> None:
        """Make `func_name` the default function of `get_sblock`."""
        self._state.func(func_name)
        self._func_working_on = func_name

    def show(self, *args: Any, **kwargs: Any) -> None:
        """Print the module (highlighted) and the trace."""
        self.mod.show(*args, **kwargs)
        print(self._trace)

    def get(self, rv: BlockRV | LoopRV) -> tir.Block | tir.For:
        """The block or loop a handle names now."""
        if isinstance(rv, BlockRV):
            return self._state.block(rv)[1]
        return self._state.loop(rv)[1]

    # ------------------------------------------------------------ machinery

    def _run(
        self,
        name: str,
        func_name: str,
        change: Change | None,
        make_result: Callable[[], Any] | None,
        kwargs: dict[str, Any],
        args: tuple[Any, ...] = (),
    ) -> Any:
        """Commit `change` (verifying it under debug_mask="all"), build the result
        from the new function (`make_result`), and record the call in the trace."""
        if change is not None:
            if self._verify:
                verify_prim_func(change.func)
            self._state.commit(func_name, change, name)
        result = None if make_result is None else make_result()
        if isinstance(result, list):
            outputs, unpack = tuple(result), True
        elif result is None:
            outputs, unpack = (), False
        else:
            outputs, unpack = (result,), False
        self._trace.append(Instruction(name, args, tuple(kwargs.items()), outputs, unpack))
        return result

    def _block(self, block: BlockRV | str) -> tuple[str, tir.Block, Any]:
        if isinstance(block, str):
            block = self._lookup(block, None, record=False)
        return self._state.block(block)

    def _loop(self, loop: LoopRV) -> tuple[str, tir.For, Any]:
        return self._state.loop(loop)

    def _new_loop(self, func_name: str, var: tir.Var) -> LoopRV:
        tree = self._state.tree(func_name)
        return self._state.new_loop(func_name, tree.loop_of[var])

    def _made(
        self, func_name: str, change: Change, block_name: str, name: str, kwargs: dict[str, Any]
    ) -> BlockRV:
        """Commit a primitive that made block `block_name` and return its handle."""
        return self._run(
            name, func_name, change, lambda: self._new_block(func_name, block_name), kwargs
        )

    def _new_block(self, func_name: str, block_name: str) -> BlockRV:
        tree = self._state.tree(func_name)
        return self._state.new_block(func_name, tree.blocks_named(block_name)[0])

    def _same_func(self, *names: str) -> str:
        if len(set(names)) > 1:
            raise ScheduleError("the handles belong to different functions")
        return names[0]

    # ------------------------------------------------------------ lookup

    def _lookup(self, name: str, func_name: str | None, record: bool = True) -> BlockRV:
        func_name = func_name or self._func_working_on
        if func_name is None:
            raise ScheduleError(
                "the module has several prim functions and none is 'main': pass func_name= "
                "or call work_on() first"
            )
        tree = self._state.tree(func_name)
        found = tree.blocks_named(name)
        if not found:
            raise ScheduleError(f"no block named '{name}' in function '{func_name}'")
        if len(found) > 1:
            raise ScheduleError(f"{len(found)} blocks are named '{name}' in function '{func_name}'")
        rv = self._state.new_block(func_name, found[0])
        if record:
            kwargs = {"name": name, "func_name": func_name}
            self._trace.append(Instruction("get_sblock", (), tuple(kwargs.items()), (rv,)))
        return rv

    def get_sblock(self, name: str, func_name: str | None = None) -> BlockRV:
        """The block named `name` in `func_name` (default: the function worked on)."""
        if not isinstance(name, str):
            raise ScheduleError(f"get_sblock: name must be a string, got {name!r}")
        return self._lookup(name, func_name)

    get_block = get_sblock

    def get_loops(self, block: BlockRV | str) -> list[LoopRV]:
        """The loops above `block` up to its scope block, outermost first."""
        func_name, node, tree = self._block(block)
        loops_ = tree.loops_above(node)
        return self._run(
            "get_loops",
            func_name,
            None,
            lambda: [self._state.new_loop(func_name, lp) for lp in loops_],
            {"block": block},
        )

    def get_child_blocks(self, block_or_loop: BlockRV | LoopRV) -> list[BlockRV]:
        """The blocks directly under a block or loop, in order."""
        func_name, node, tree = self._node(block_or_loop)
        found = tree.child_blocks(node)
        return self._blocks("get_child_blocks", func_name, found, {}, (block_or_loop,))

    def get_producers(self, block: BlockRV | str) -> list[BlockRV]:
        """The blocks of the same scope that `block` depends on (read/write after write)."""
        func_name, node, tree = self._block(block)
        found = navigate.producers(tree, node)
        return self._blocks("get_producers", func_name, found, {"block": block})

    def get_consumers(self, block: BlockRV | str) -> list[BlockRV]:
        """The blocks of the same scope that depend on `block`."""
        func_name, node, tree = self._block(block)
        found = navigate.consumers(tree, node)
        return self._blocks("get_consumers", func_name, found, {"block": block})

    def get_output_blocks(self, scope_block: BlockRV | str) -> list[BlockRV]:
        """The child blocks of a scope that write buffers living beyond it."""
        func_name, node, tree = self._block(scope_block)
        found = navigate.output_blocks(tree, node)
        return self._blocks("get_output_blocks", func_name, found, {"scope_block": scope_block})

    def _blocks(
        self,
        name: str,
        func_name: str,
        found: list[tir.Block],
        kwargs: dict[str, Any],
        args: tuple[Any, ...] = (),
    ) -> list[BlockRV]:
        """Handles to `found`, recorded as the result of lookup `name`."""

        def handles() -> list[BlockRV]:
            return [self._state.new_block(func_name, b) for b in found]

        return self._run(name, func_name, None, handles, kwargs, args)

    # ------------------------------------------------------------ loops

    def split(
        self,
        loop: LoopRV,
        factors: list[int | None],
        preserve_unit_iters: bool = True,
        disable_predication: bool = False,
    ) -> list[LoopRV]:
        """Split `loop` into len(factors) nested loops; one factor may be None."""
        func_name, node, tree = self._loop(loop)
        change, new_vars = loops.split(
            tree, node, factors, preserve_unit_iters, disable_predication
        )
        return self._run(
            "split",
            func_name,
            change,
            lambda: [self._new_loop(func_name, v) for v in new_vars],
            {
                "loop": loop,
                "factors": list(factors),
                "preserve_unit_iters": preserve_unit_iters,
                "disable_predication": disable_predication,
            },
        )

    def fuse(self, *loops_: LoopRV, preserve_unit_iters: bool = True) -> LoopRV:
        """Fuse a chain of perfectly nested loops into one."""
        if len(loops_) == 1 and isinstance(loops_[0], (list, tuple)):
            loops_ = tuple(loops_[0])
        if not loops_:
            raise ScheduleError("fuse needs at least one loop")
        resolved = [self._loop(lp) for lp in loops_]
        func_name = self._same_func(*(r[0] for r in resolved))
        tree = resolved[0][2]
        change, var = loops.fuse(tree, [r[1] for r in resolved], preserve_unit_iters)
        return self._run(
            "fuse",
            func_name,
            change,
            lambda: self._new_loop(func_name, var),
            {"preserve_unit_iters": preserve_unit_iters},
            args=tuple(loops_),
        )

    def merge(self, *loops_: LoopRV) -> LoopRV:
        """Merge loops of equal extents that sit at the same depth of sibling nests."""
        if len(loops_) == 1 and isinstance(loops_[0], (list, tuple)):
            loops_ = tuple(loops_[0])
        resolved = [self._loop(lp) for lp in loops_]
        func_name = self._same_func(*(r[0] for r in resolved))
        tree = resolved[0][2]
        change, var = merge.merge(tree, [r[1] for r in resolved])
        return self._run(
            "merge",
            func_name,
            change,
            lambda: self._new_loop(func_name, var),
            {},
            args=tuple(loops_),
        )

    def reorder(self, *ordered_loops: LoopRV) -> None:
        """Reorder loops of one chain into the given order."""
        if len(ordered_loops) == 1 and isinstance(ordered_loops[0], (list, tuple)):
            ordered_loops = tuple(ordered_loops[0])
        resolved = [self._loop(lp) for lp in ordered_loops]
        if not resolved:
            return None
        func_name = self._same_func(*(r[0] for r in resolved))
        change = loops.reorder(resolved[0][2], [r[1] for r in resolved])
        return self._run("reorder", func_name, change, None, {}, args=tuple(ordered_loops))

    def add_unit_loop(self, block_or_loop: BlockRV | LoopRV) -> LoopRV:
        """Wrap a block or loop in a new loop of extent 1."""
        if isinstance(block_or_loop, LoopRV):
            func_name, node, tree = self._loop(block_or_loop)
        else:
            func_name, node, tree = self._block(block_or_loop)
        change, var = merge.add_unit_loop(tree, node)
        return self._run(
            "add_unit_loop",
            func_name,
            change,
            lambda: self._new_loop(func_name, var),
            {"block_or_loop": block_or_loop},
        )

    def parallel(self, loop: LoopRV) -> None:
        self._for_kind(loop, tir.PARALLEL, "parallel")

    def vectorize(self, loop: LoopRV) -> None:
        self._for_kind(loop, tir.VECTORIZED, "vectorize")

    def unroll(self, loop: LoopRV) -> None:
        self._for_kind(loop, tir.UNROLLED, "unroll")

    def _for_kind(self, loop: LoopRV, kind: str, name: str) -> None:
        func_name, node, tree = self._loop(loop)
        change = annotate.set_for_kind(tree, node, kind, name)
        self._run(name, func_name, change, None, {"loop": loop})

    # ------------------------------------------------------------ annotations

    def annotate(self, block_or_loop: BlockRV | LoopRV, ann_key: str, ann_val: Any) -> None:
        node_info = self._node(block_or_loop)
        change = annotate.annotate(node_info[2], node_info[1], ann_key, ann_val)
        self._run(
            "annotate",
            node_info[0],
            change,
            None,
            {"block_or_loop": block_or_loop, "ann_key": ann_key, "ann_val": ann_val},
        )

    def unannotate(self, block_or_loop: BlockRV | LoopRV, ann_key: str) -> None:
        node_info = self._node(block_or_loop)
        change = annotate.unannotate(node_info[2], node_info[1], ann_key)
        self._run(
            "unannotate",
            node_info[0],
            change,
            None,
            {"block_or_loop": block_or_loop, "ann_key": ann_key},
        )

    def _node(self, rv: BlockRV | LoopRV | str) -> tuple[str, Any, Any]:
        if isinstance(rv, LoopRV):
            return self._loop(rv)
        return self._block(rv)

    # ------------------------------------------------------------ compute location

    def compute_at(
        self,
        block: BlockRV | str,
        loop: LoopRV,
        preserve_unit_loops: bool = False,
        index: int = -1,
    ) -> None:
        """Move a producer block under `loop` of its consumers, computing only the
        region they need."""
        self._compute_at("compute_at", block, loop, preserve_unit_loops, index)

    def reverse_compute_at(
        self,
        block: BlockRV | str,
        loop: LoopRV,
        preserve_unit_loops: bool = False,
        index: int = -1,
    ) -> None:
        """Move a consumer block under `loop` of its producers."""
        self._compute_at("reverse_compute_at", block, loop, preserve_unit_loops, index)

    def _compute_at(
        self,
        name: str,
        block: BlockRV | str,
        loop: LoopRV,
        preserve_unit_loops: bool,
        index: int,
    ) -> None:
        func_name, node, tree = self._block(block)
        loop_func, target, _ = self._loop(loop)
        self._same_func(func_name, loop_func)
        reverse = name == "reverse_compute_at"
        change = compute_at.compute_at(tree, node, target, preserve_unit_loops, index, reverse)
        kwargs = {
            "block": block,
            "loop": loop,
            "preserve_unit_loops": preserve_unit_loops,
            "index": index,
        }
        self._run(name, func_name, change, None, kwargs)

    def compute_inline(self, block: BlockRV | str) -> None:
        """Inline an elementwise producer into its consumers."""
        func_name, node, tree = self._block(block)
        change = inline.compute_inline(tree, node)
        self._run("compute_inline", func_name, change, None, {"block": block})

    def reverse_compute_inline(self, block: BlockRV | str) -> None:
        """Inline an elementwise consumer into its producer."""
        func_name, node, tree = self._block(block)
        change = inline.reverse_compute_inline(tree, node)
        self._run("reverse_compute_inline", func_name, change, None, {"block": block})

    # ------------------------------------------------------------ caching and storage

    def cache_read(
        self,
        block: BlockRV | str,
        read_buffer_index: int,
        storage_scope: str,
        consumer_blocks: list[BlockRV] | None = None,
    ) -> BlockRV:
        """Copy a read buffer into `storage_scope` before its readers, which then
        read the copy."""
        index = {"read_buffer_index": read_buffer_index}
        return self._cache("cache_read", block, index, storage_scope, consumer_blocks)

    def cache_write(
        self,
        block: BlockRV | str,
        write_buffer_index: int,
        storage_scope: str,
        consumer_blocks: list[BlockRV] | None = None,
    ) -> BlockRV:
        """Make the block write a copy in `storage_scope`, copied back after it."""
        index = {"write_buffer_index": write_buffer_index}
        return self._cache("cache_write", block, index, storage_scope, consumer_blocks)

    def _cache(
        self,
        name: str,
        block: BlockRV | str,
        index: dict[str, int],
        storage_scope: str,
        consumer_blocks: list[BlockRV] | None,
    ) -> BlockRV:
        func_name, node, tree = self._block(block)
        consumers = [self._block(b)[1] for b in consumer_blocks or []]
        primitive = cache.cache_read if name == "cache_read" else cache.cache_write
        change, stage = primitive(tree, node, *index.values(), storage_scope, consumers)
        kwargs: dict[str, Any] = {"block": block, **index, "storage_scope": storage_scope}
        if consumer_blocks:
            kwargs["consumer_blocks"] = list(consumer_blocks)
        return self._made(func_name, change, stage, name, kwargs)

    def reindex(self, block: BlockRV | str, buffer: tuple[str, int] | str) -> BlockRV:
        func_name, node, tree = self._block(block)
        change, name = reindex.reindex(tree, node, buffer)
        return self._made(func_name, change, name, "reindex", {"block": block, "buffer": buffer})

    def set_scope(self, block: BlockRV | str, buffer_index: int, storage_scope: str) -> None:
        func_name, node, tree = self._block(block)
        change = storage.set_scope(tree, node, buffer_index, storage_scope)
        self._run(
            "set_scope",
            func_name,
            change,
            None,
            {"block": block, "buffer_index": buffer_index, "storage_scope": storage_scope},
        )

    def storage_align(
        self,
        block: BlockRV | str,
        buffer_index: int,
        axis: int,
        factor: int,
        offset: int,
    ) -> None:
        func_name, node, tree = self._block(block)
        change = storage.storage_align(tree, node, buffer_index, axis, factor, offset)
        self._run(
            "storage_align",
            func_name,
            change,
            None,
            {
                "block": block,
                "buffer_index": buffer_index,
                "axis": axis,
                "factor": factor,
                "offset": offset,
            },
        )

    # ------------------------------------------------------------ reduction

    def decompose_reduction(self, block: BlockRV | str, loop: LoopRV) -> BlockRV:
        """Split a reduction block into an init block (placed above `loop`) and
        an update block."""
        return self._new_block_at("decompose_reduction", reduction.decompose_reduction, block, loop)

    def _new_block_at(
        self,
        name: str,
        primitive: Callable[[Any, tir.Block, tir.For], tuple[Change, str]],
        block: BlockRV | str,
        loop: LoopRV,
    ) -> BlockRV:
        """A primitive over a block and a loop of its function that makes a block."""
        func_name, node, tree = self._block(block)
        loop_func, target, _ = self._loop(loop)
        self._same_func(func_name, loop_func)
        change, made = primitive(tree, node, target)
        return self._made(func_name, change, made, name, {"block": block, "loop": loop})

    def rfactor(self, loop: LoopRV, factor_axis: int) -> BlockRV:
        """Factor the reduction over `loop` into an intermediate buffer."""
        func_name, node, tree = self._loop(loop)
        change, name = rfactor.rfactor(tree, node, factor_axis)
        return self._made(
            func_name, change, name, "rfactor", {"loop": loop, "factor_axis": factor_axis}
        )

    # ------------------------------------------------------------ layout

    def transform_layout(
        self,
        block: BlockRV | str,
        buffer: tuple[str, int] | str,
        index_map: Any,
        pad_value: Any = None,
        *,
        assume_injective_transform: bool = False,
    ) -> None:
        func_name, node, tree = self._block(block)
        change, used_map = layout.transform_layout(tree, node, buffer, index_map, pad_value)
        self._run(
            "transform_layout",
            func_name,
            change,
            None,
            {
                "block": block,
                "buffer": buffer,
                "index_map": used_map,
                "pad_value": pad_value,
                "assume_injective_transform": assume_injective_transform,
            },
        )

    def transform_block_layout(self, block: BlockRV | str, index_map: Any) -> None:
        func_name, node, tree = self._block(block)
        change, used_map = layout.transform_block_layout(tree, node, index_map)
        self._run(
            "transform_block_layout",
            func_name,
            change,
            None,
            {"block": block, "index_map": used_map},
        )

    def decompose_padding(self, block: BlockRV | str, loop: LoopRV) -> BlockRV:
        """Split a padding block into a constant fill (under `loop`) and an
        in-bounds copy."""
        return self._new_block_at("decompose_padding", padding.decompose_padding, block, loop)

    def pad_einsum(self, block: BlockRV | str, padding: list[int]) -> None:
        """Grow the axes of an einsum block to multiples of `padding` (one factor
        per axis), through padded copies of the buffers they index."""
        func_name, node, tree = self._block(block)
        change = pad_einsum.pad_einsum(tree, node, padding)
        self._run("pad_einsum", func_name, change, None, {"block": block, "padding": padding})

    # ------------------------------------------------------------ blockize

    def blockize(self, target: LoopRV | list[BlockRV], preserve_unit_iters: bool = True) -> BlockRV:
        """Turn the subtree under a loop into a block of its own."""
        if not isinstance(target, LoopRV):
            raise ScheduleError(
                f"blockize: expected a loop handle, got {target!r} (blockizing a list of blocks "
                "is not supported)"
            )
        func_name, node, tree = self._loop(target)
        change, name = blockize.blockize(tree, node, preserve_unit_iters)
        return self._made(
            func_name,
            change,
            name,
            "blockize",
            {"target": target, "preserve_unit_iters": preserve_unit_iters},
        )


__all__ = ["BlockRV", "IndexMap", "LoopRV", "Schedule", "ScheduleError"]

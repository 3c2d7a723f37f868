"""Schedule errors, handles and the state a schedule works on.

A handle (`BlockRV`, `LoopRV`) names a block or a loop of one function of the
module. IR nodes are immutable, so the state keeps, per handle, the node it
names *now*: loops by their loop variable (primitives that keep a loop keep its
variable), blocks by the node itself, moved along whenever a primitive rebuilds
the block (the `reuse` map every primitive returns). A handle whose node is
gone stays in the table with the name of the primitive that removed it, so using
it later says so.

A primitive never changes the state until it has succeeded: it builds the new
function from the old one and returns it (`Change`); `State.commit` swaps it
in. A primitive that raises leaves everything as it was.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import tir
from tvmlite.dsl.module import IRModule
from tvmlite.lowering.schedule.tree import Change, Tree


class ScheduleError(TVMLiteError):
    """A schedule primitive cannot be applied; the schedule is unchanged."""


class _Handle:
    __slots__ = ("_serial",)
    _prefix = ""

    def __init__(self, serial: int) -> None:
        self._serial = serial

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._prefix}{self._serial})"


class BlockRV(_Handle):
    """A handle to a block of the scheduled module."""

    __slots__ = ()
    _prefix = "b"


class LoopRV(_Handle):
    """A handle to a loop of the scheduled module."""

    __slots__ = ()
    _prefix = "l"


@dataclass
class _Entry:
    func: str
    node: tir.Block | tir.Var | None  # None once removed
    removed_by: str = ""
    label: str = ""


class State:
    """The module being scheduled and what every handle names."""

    def __init__(self, mod: IRModule) -> None:
        self.mod = mod
        self.entries: dict[int, _Entry] = {}
        self.serial = 0
        self._trees: dict[str, Tree] = {}

    # ------------------------------------------------------------ functions

    def func(self, name: str) -> tir.PrimFunc:
        func = self.mod.functions.get(name)
        if not isinstance(func, tir.PrimFunc):
            prims = [k for k, f in self.mod.functions.items() if isinstance(f, tir.PrimFunc)]
            raise ScheduleError(
                f"the module has no prim function '{name}' (prim functions: "
                f"{', '.join(prims) or 'none'})"
            )
        return func

    def tree(self, name: str) -> Tree:
        func = self.func(name)
        tree = self._trees.get(name)
        if tree is None or tree.func is not func:
            tree = self._trees[name] = Tree(func)
        return tree

    # ------------------------------------------------------------ handles

    def new_block(self, func: str, block: tir.Block) -> BlockRV:
        rv = BlockRV(self._next())
        self.entries[rv._serial] = _Entry(func, block, label=block.name)
        return rv

    def new_loop(self, func: str, loop: tir.For) -> LoopRV:
        rv = LoopRV(self._next())
        self.entries[rv._serial] = _Entry(func, loop.loop_var, label=loop.loop_var.name)
        return rv

    def _next(self) -> int:
        self.serial += 1
        return self.serial - 1

    def _entry(self, rv: Any, kind: type, what: str) -> _Entry:
        if not isinstance(rv, kind) or rv._serial not in self.entries:
            raise ScheduleError(f"expected a {what} handle of this schedule, got {rv!r}")
        entry = self.entries[rv._serial]
        if entry.node is None:
            raise ScheduleError(
                f"{what} '{entry.label}' ({rv!r}) no longer exists: {entry.removed_by} removed it"
            )
        return entry

    def block(self, rv: BlockRV) -> tuple[str, tir.Block, Tree]:
        entry = self._entry(rv, BlockRV, "block")
        tree = self.tree(entry.func)
        assert isinstance(entry.node, tir.Block) and tree.contains(entry.node)
        return entry.func, entry.node, tree

    def loop(self, rv: LoopRV) -> tuple[str, tir.For, Tree]:
        entry = self._entry(rv, LoopRV, "loop")
        tree = self.tree(entry.func)
        return entry.func, tree.loop_of[entry.node], tree

    # ------------------------------------------------------------ commit

    def commit(self, func_name: str, change: Change, primitive: str) -> None:
        """Install the new function and move every handle of it along."""
        old = self.mod  # keeps the old blocks alive: `reuse` is keyed by their ids
        functions = dict(old.functions)
        functions[func_name] = change.func
        self.mod = self.mod.with_functions(functions)
        tree = self.tree(func_name)
        for entry in self.entries.values():
            if entry.func != func_name or entry.node is None:
                continue
            node = entry.node
            if isinstance(node, tir.Block):
                while id(node) in change.reuse and change.reuse[id(node)] is not node:
                    node = change.reuse[id(node)]
                if tree.contains(node):
                    entry.node = node
                    entry.label = node.name
                    continue
            elif node in tree.loop_of:
                continue
            entry.node = None
            entry.removed_by = primitive

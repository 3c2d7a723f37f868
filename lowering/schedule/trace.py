"""The trace: the primitives a schedule applied, as data.

Each `Instruction` records a primitive's name, its arguments by keyword (handles
stay handles, index maps stay `IndexMap`s, everything else is a plain Python
value) and the handles it returned. `Trace.as_python()` prints the trace as a
Python function over a schedule, naming handles `b0`, `l1`, ... in the order
they were made; `Trace.apply_to_schedule(sch)` replays it on another schedule,
mapping each recorded handle to the one the replay produced.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tvmlite.lowering.schedule.index_map import IndexMap
from tvmlite.lowering.schedule.state import BlockRV, LoopRV, ScheduleError

Handle = BlockRV | LoopRV


@dataclass(frozen=True)
class Instruction:
    """One primitive call: `name(**kwargs)`, which returned `outputs`
    (`unpack`: the call returned a list, not a single handle)."""

    name: str
    args: tuple[Any, ...]
    kwargs: tuple[tuple[str, Any], ...]
    outputs: tuple[Handle, ...]
    unpack: bool = False


class Trace:
    """The instructions applied so far, in order."""

    def __init__(self) -> None:
        self.insts: list[Instruction] = []

    def __len__(self) -> int:
        return len(self.insts)

    def append(self, inst: Instruction) -> None:
        self.insts.append(inst)

    # ------------------------------------------------------------ printing

    def as_python(self) -> list[str]:
        """One line per instruction, handles named by their order of creation."""
        names: dict[int, str] = {}

        def name(rv: Handle) -> str:
            key = id(rv)
            if key not in names:
                names[key] = f"{'b' if isinstance(rv, BlockRV) else 'l'}{len(names)}"
            return names[key]

        def value(v: Any) -> str:
            if isinstance(v, (BlockRV, LoopRV)):
                return name(v)
            if isinstance(v, IndexMap):
                return v.as_lambda()
            if isinstance(v, (list, tuple)):
                items = ", ".join(value(x) for x in v)
                if isinstance(v, list):
                    return f"[{items}]"
                return f"({items}{',' if len(v) == 1 else ''})"
            if isinstance(v, dict):
                return "{" + ", ".join(f"{value(k)}: {value(x)}" for k, x in v.items()) + "}"
            if isinstance(v, str):
                return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
            return repr(v)

        lines = []
        for inst in self.insts:
            call = ", ".join(
                [value(a) for a in inst.args] + [f"{k}={value(v)}" for k, v in inst.kwargs]
            )
            outs = [name(rv) for rv in inst.outputs]
            if inst.unpack and len(outs) == 1:
                lhs = f"{outs[0]}, = "
            elif outs:
                lhs = ", ".join(outs) + " = "
            else:
                lhs = ""
            lines.append(f"{lhs}sch.{inst.name}({call})")
        return lines

    def __str__(self) -> str:
        body = self.as_python() or ["pass"]
        head = "# from tvmlite import tir\ndef apply_trace(sch: tir.Schedule) -> None:\n"
        return head + "\n".join(f"  {line}" for line in body)

    def show(self) -> None:
        print(str(self))

    # ------------------------------------------------------------ replay

    def apply_to_schedule(self, sch: Any) -> None:
        """Apply every instruction to `sch` (a `Schedule` of another module)."""
        mapping: dict[int, Handle] = {}

        def remap(v: Any) -> Any:
            if isinstance(v, (BlockRV, LoopRV)):
                if id(v) not in mapping:
                    raise ScheduleError(f"the trace uses {v!r} before any instruction made it")
                return mapping[id(v)]
            if isinstance(v, list):
                return [remap(x) for x in v]
            if isinstance(v, tuple):
                return tuple(remap(x) for x in v)
            return v

        for inst in self.insts:
            method = getattr(sch, inst.name)
            result = method(*remap(inst.args), **{k: remap(v) for k, v in inst.kwargs})
            produced = list(result) if inst.unpack else ([] if result is None else [result])
            for old, new in zip(inst.outputs, produced, strict=True):
                mapping[id(old)] = new

"""TIR schedules: TVM's schedule primitives over the blocks and loops of prim
functions, with handles, errors and a replayable trace. Public as `tvmlite.tir`."""

from tvmlite.lowering.schedule.index_map import IndexMap
from tvmlite.lowering.schedule.schedule import Schedule
from tvmlite.lowering.schedule.state import BlockRV, LoopRV, ScheduleError
from tvmlite.lowering.schedule.trace import Instruction, Trace

__all__ = [
    "BlockRV",
    "IndexMap",
    "Instruction",
    "LoopRV",
    "Schedule",
    "ScheduleError",
    "Trace",
]

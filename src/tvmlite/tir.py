"""Scheduling TIR: `tvmlite.tir.Schedule` mirrors TVM's `tvm.s_tir.Schedule`.

    sch = tvmlite.tir.Schedule(mod)
    block = sch.get_sblock("matmul", func_name="matmul")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[None, 4])
    sch.parallel(i0)
    print(sch.mod.script()); print(sch.trace)

See docs/schedule.md.
"""

from tvmlite.lowering.schedule import (
    BlockRV,
    IndexMap,
    Instruction,
    LoopRV,
    Schedule,
    ScheduleError,
    Trace,
)

SBlockRV = BlockRV

__all__ = [
    "BlockRV",
    "IndexMap",
    "Instruction",
    "LoopRV",
    "SBlockRV",
    "Schedule",
    "ScheduleError",
    "Trace",
]

"""Shared checks of the default schedule rules: apply a rule to every block it
accepts (verifier after each primitive), print and parse back, build and run."""

from __future__ import annotations

import numpy as np

import tvmlite
from tvmlite.dsl import tir
from tvmlite.dsl.module import IRModule
from tvmlite.lowering.codegen.cpu_traits import Cache, CPUTraits
from tvmlite.lowering.pipeline import get_pipeline
from tvmlite.lowering.schedule.tree import Tree
from tvmlite.lowering.schedule_rules.microkernel import ContractionRule
from tvmlite.tir import Schedule

# The machine the rule tests schedule for, whatever the host: AVX-512 (16 float32
# lanes, 32 registers), 32 KiB 8-way L1. Its code runs anywhere (LLVM splits the
# vectors for a narrower host); tests/lowering/test_target_machines.py varies it.
AVX512 = CPUTraits("x86_64", 64, 32, Cache(32 << 10, 8, 64), Cache(1 << 20, 16, 64))


def prim_funcs(text: str) -> dict[str, tir.PrimFunc]:
    """The prim functions of a module (a Relax one legalized and fused as `build`
    does, or TIR as written)."""
    mod = get_pipeline("default").run(tvmlite.parse(text))
    return {k: f for k, f in mod.functions.items() if isinstance(f, tir.PrimFunc)}


def apply_rule(func: tir.PrimFunc, rule: ContractionRule) -> Schedule | None:
    """`rule` on the first block of `func` it accepts; None when it takes none. The result prints as TVMScript that parses back to itself (in the
    classic spelling the default pipeline's functions come in)."""
    sch = Schedule(IRModule({"main": func}), debug_mask="all")
    for block in Tree(sch.mod["main"]).blocks:
        if block.name == "root":
            continue
        rv = sch.get_sblock(block.name)
        if rule.accepts(sch, rv):
            rule.schedule(sch, rv, AVX512)
            text = sch.mod.script()
            assert tvmlite.structural_equal(tvmlite.parse(text), sch.mod), text
            return sch
    return None


def run(func: tir.PrimFunc, inputs: list[np.ndarray]) -> np.ndarray:
    """Run a destination-passing prim function; its last parameter is the output."""
    out_buffer = func.buffer_map[-1][1]
    out = np.zeros([int(d.value) for d in out_buffer.shape], out_buffer.dtype)
    tvmlite.build(IRModule({"main": func}))["main"](*inputs, out)
    return out


def random_inputs(func: tir.PrimFunc, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [
        rng.standard_normal([int(d.value) for d in b.shape]).astype(b.dtype)
        for _, b in func.buffer_map[:-1]
    ]

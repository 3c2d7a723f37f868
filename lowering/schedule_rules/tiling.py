"""The register tile of a contraction: how many rows (MR) and columns (NR),
whether the columns are padded, and whether the operand read along them is
packed.

LLVM keeps an accumulator tile in registers only when its vector axis has no
predicate (with one it keeps the tile in memory and leaves the loop scalar, 50x
slower) and its vectors are a power of two lanes wide (another width runs at an
eighth of the speed or less). So NR either divides the vector axis, or the axis
is padded to a multiple of NR (`pad_einsum`): the operand's padded copy is then
either its packed copy (zeros fill the last panel) or, unpacked, a vector of NR
values made per reduction step right where it is used (one masked load, no copy
of the operand); only the write-back is guarded. Rows that MR does not divide
are padded too, when the operand read along them can be (its padded copy is its
row panels): a predicate on each unrolled row inside the reduction loop is
paid by every tile, not only the last.

Packing copies the operand on every call (weights are function inputs in the
models torch.export prints): it is worth it when the micro-kernel would
otherwise gather (the vector axis is not the operand's last: a dense layer's
weight, conv weights), or wait on memory (reduction steps a page or more apart)
while enough row tiles reuse each panel to repay the copy.

The machine decides the sizes (`CPUTraits`, codegen/cpu_traits.py): lanes per
vector register (16 float32 with AVX-512, 8 with AVX2, 4 with NEON), how many
registers the accumulators may take (three quarters of them: the rest hold the
operands of a step), and how far apart rows compete for the same level-1 cache
sets (its size over its associativity: 4 KiB for 32 KiB 8-way).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tvmlite.dsl import arith, tir
from tvmlite.dsl import dtype as dt
from tvmlite.lowering.codegen.cpu_traits import CPUTraits
from tvmlite.lowering.schedule_rules.contraction import Contraction, Operand, Roles

MAX_ROWS = 12  # MR: 12 x 32 fp32 is 24 accumulators of AVX-512's 32 registers
TILE_OVERHEAD = 1.0  # rows' worth of work per row tile: X's pointers, the write-back
# Tiles that must read a panel a page apart for its copy to pay: packing B of
# 2048^3 gains 20% (171 row tiles), of 197 x 3072 x 768 nothing (17 tiles).
REUSE_FOR_PACKING = 32


@dataclass(frozen=True)
class Side:
    """One side of the tile: `size` values of axis `var` (MR rows or NR
    columns); `pad`: the axis grows to a multiple of `size` first (pad_einsum);
    `packed`: the operand read along the axis (and not the other), copied into
    panels [..., var // size, reduction..., var % size] (None: read in place)."""

    var: tir.Var
    size: int
    pad: bool
    packed: Operand | None


@dataclass(frozen=True)
class Tiling:
    rows: Side
    columns: Side


def register_lanes(c: Contraction, traits: CPUTraits) -> int:
    """Elements of the output dtype in one vector register."""
    return traits.lanes(c.output.dtype)


def accumulators(traits: CPUTraits) -> int:
    """Vector registers the tile may take (LLVM spills beyond): three quarters,
    the others hold a step's broadcast of X and its vectors of Y."""
    return traits.vector_registers * 3 // 4


def plan(c: Contraction, roles: Roles, traits: CPUTraits) -> Tiling:
    lanes = register_lanes(c, traits)
    stride = traits.l1.alias_stride
    n, m = c.extents[roles.vector], c.extents[roles.row]
    paddable = all(op.is_plain() for op in c.operands)
    y, x = _sole_reader(c, roles.vector), _sole_reader(c, roles.row)
    nr, pad_columns = _columns(n, lanes, paddable and y is not None)
    mr = _rows(m, _registers_per_row(nr, lanes), accumulators(traits))
    row_tiles, column_tiles = -(-m // mr), -(-n // nr)
    if roles.vector in c.symbolic:
        nr, pad_columns, y = min(2 * lanes, nr), False, None  # whole tiles and a guarded one
    if y is not None and not _worth_packing(c, y, roles.vector, row_tiles, stride):
        y = None
    # X, read along the rows, is packed when its rows are `stride` apart (each
    # tile would read MR rows per reduction step, all in the same cache sets)
    # and enough column panels reuse the copy, or when MR does not divide its
    # rows: its rows are then padded too, so that no row of the micro-kernel is
    # predicated (a predicate on each unrolled row inside the reduction loop
    # slows every tile, not only the last: 128 x 768 x 3072 ran at 40% of the
    # 96-row speed).
    ragged = roles.row not in c.symbolic and m % mr != 0
    if x is not None and not (
        paddable
        and (ragged or column_tiles >= REUSE_FOR_PACKING and _apart(c, x, roles.row, stride))
    ):
        x = None
    return Tiling(
        Side(roles.row, mr, x is not None and m % mr != 0, x),
        Side(roles.vector, nr, pad_columns, y),
    )


def _sole_reader(c: Contraction, var: tir.Var) -> Operand | None:
    readers = c.readers(var)
    return readers[0] if len(readers) == 1 else None


def chunk(nr: int, lanes: int) -> int:
    """The lanes of one vector of a row of NR columns: NR when it is a power of
    two or has no power-of-two factor of 4 or more (then vectorized whole), else
    that factor up to a register (24 columns: 3 x 8)."""
    width = min(nr & -nr, lanes)
    return nr if nr & (nr - 1) == 0 or width < 4 else width


def _speed(nr: int, lanes: int) -> float:
    """Work per instruction of a row of NR columns, relative to whole registers."""
    width = chunk(nr, lanes)
    if width & (width - 1):
        return 1 / 8  # an odd width: LLVM splits and masks every vector
    return min(width, lanes) / lanes


def _registers_per_row(nr: int, lanes: int) -> int:
    width = chunk(nr, lanes)
    return nr // width if width < nr else -(-nr // lanes)


def _columns(n: int, lanes: int, paddable: bool) -> tuple[int, bool]:
    """(NR, pad): the widths with the least work over `n` columns, a width of
    fewer lanes than a register costing as much as a whole one: the divisor of
    `n` (`_divisor`), or, when the contraction can be padded, two registers,
    one, and under one register a power of two, over `n` padded. Among equals
    the unpadded, then the widest."""
    nr = _divisor(n, lanes)
    choices = [(n / _speed(nr, lanes), 0, nr, False)]
    if paddable:
        for rank, width in enumerate((2 * lanes, lanes, lanes // 2, lanes // 4)):
            if width >= 4 and n % width and (width >= lanes or n < width):
                work = -(-n // width) * width / _speed(width, lanes)
                choices.append((work, rank + 1, width, True))
    _, _, nr, pad = min(choices)
    return nr, pad


def _divisor(n: int, lanes: int) -> int:
    """The widest NR dividing `n` that LLVM keeps in registers: the whole extent
    when it is at most two registers; else two registers, one or half a register
    when they divide `n`; else the largest divisor up to two registers made of
    vectors of 4 lanes or more (100: 20 = 5 x 4), else the largest up to one
    register (90: 15, 511: 7, a prime: 1)."""
    if n <= 2 * lanes:
        return n
    for nr in (2 * lanes, lanes, lanes // 2):
        if nr and n % nr == 0:
            return nr
    divisors = [d for d in range(2 * lanes, 0, -1) if n % d == 0]
    chunked = [d for d in divisors if chunk(d, lanes) < d]
    return chunked[0] if chunked else next(d for d in divisors if d <= lanes)


def _rows(m: int, per_row: int, registers: int) -> int:
    """MR: the row count with the least work over `m` rows, a row tile costing
    its rows plus TILE_OVERHEAD, within `registers` accumulators; among equals
    the one that divides `m` (no predicated tile), then the largest."""
    fits = [mr for mr in range(min(MAX_ROWS, m), 0, -1) if mr * per_row <= registers]
    if not fits:
        return 1
    return min(fits, key=lambda mr: (-(-m // mr) * (mr + TILE_OVERHEAD), m % mr != 0, -mr))


def _worth_packing(
    c: Contraction, operand: Operand, vector: tir.Var, row_tiles: int, stride: int
) -> bool:
    """Without a packed copy the micro-kernel would gather the operand (the
    vector axis is not its last: conv weights, a dense layer's weight), or wait
    on memory (successive reduction steps `stride` bytes or more apart, in the
    same level-1 cache sets: a 1024-wide float32 matrix on a 32 KiB 8-way cache)
    in every one of `row_tiles` passes: then the copy pays, for the second when
    REUSE_FOR_PACKING row tiles read each panel."""
    axes = operand.plain_axes()
    if not operand.is_plain() or vector not in axes:
        return False
    if axes[vector] != len(operand.load.indices) - 1:
        return True
    return row_tiles >= REUSE_FOR_PACKING and _apart(c, operand, vector, stride)


def _apart(c: Contraction, operand: Operand, var: tir.Var, stride: int) -> bool:
    """Whether successive values along `var` or along a reduction axis of
    `operand`, whichever is not its last axis, are `stride` bytes or more apart."""
    axes = operand.plain_axes()
    shape = [arith.as_int(d) for d in operand.buffer.shape]
    if any(d is None for d in shape):
        return False
    item = max(dt.bits(operand.buffer.dtype) // 8, 1)
    walked = [axes[v] for v in (var, *c.reduce) if v in axes]
    strides = [math.prod(shape[a + 1 :]) * item for a in walked]  # type: ignore[misc]
    return any(s >= stride for s in strides)

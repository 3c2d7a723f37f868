"""The register tile of a contraction: how many rows (MR) and columns (NR), and
whether the operand read along the columns is padded and packed.

LLVM keeps an accumulator tile in registers only when its vector axis has no
predicate (with one it keeps the tile in memory and leaves the loop scalar, 50x
slower) and its vectors are a power of two lanes wide (another width runs at an
eighth of the speed or less). So NR either divides the vector axis, or the axis
is padded to a multiple of NR: `pad_einsum` grows it, the padded copy of the
operand is its packed copy, zeros fill the last panel, and only the write-back
is guarded. Rows need no such care: a predicate on the unrolled rows is the
same for a whole vector, and costs little.

Which one is cheaper is a matter of arithmetic, in units of one register-wide
column of one row at full speed: a tile of NR columns runs at `_speed(NR)` of
that, and padding costs the copy of the operand when it would not be packed
anyway (PACK_ROWS rows' worth of work for each column).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tvmlite.dsl import arith, tir
from tvmlite.dsl import dtype as dt
from tvmlite.lowering.schedule_rules.contraction import Contraction, Operand, Roles

VECTOR_BYTES = 64  # one AVX-512 register
MAX_ROWS = 12  # MR: 12 x 32 fp32 is 24 accumulators of 32 registers
ACCUMULATORS = 24  # vector registers the tile may take: LLVM spills beyond
TILE_OVERHEAD = 1.0  # rows' worth of work per row tile: X's pointers, the write-back
PACK_ROWS = 16.0  # copying an operand costs about this many rows of the product
PAGE_STRIDE = 4096  # bytes: rows this far apart share L1 sets (and pages)


@dataclass(frozen=True)
class Tiling:
    """MR rows by NR columns; `packed`, the operand read along the columns, is
    copied into panels [..., j // NR, reduction..., j % NR] (None: read in
    place); `pad`: the columns grow to a multiple of NR first (pad_einsum)."""

    mr: int
    nr: int
    packed: Operand | None
    pad: bool


def register_lanes(c: Contraction) -> int:
    """Elements of the output dtype in one vector register."""
    return max(VECTOR_BYTES * 8 // max(dt.bits(c.output.dtype), 8), 1)


def plan(c: Contraction, roles: Roles) -> Tiling:
    lanes = register_lanes(c)
    m = c.extents[roles.row]
    readers = c.readers(roles.vector)
    operand = readers[0] if len(readers) == 1 else None
    nr, pad = _columns(c, operand, roles.vector, m, lanes)
    if operand is not None and not (pad or _worth_packing(c, operand, roles, nr)):
        operand = None
    return Tiling(_rows(m, _registers_per_row(nr, lanes)), nr, operand, pad)


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


def _columns(
    c: Contraction, operand: Operand | None, vector: tir.Var, m: int, lanes: int
) -> tuple[int, bool]:
    """(NR, pad): the cheapest of the divisor of the columns (`_divisor`) and,
    when the operand can be padded, tiles of whole registers over them padded."""
    n = c.extents[vector]
    nr = _divisor(n, lanes)
    if operand is None or not _paddable(c):
        return nr, False
    packs_anyway = _layout_needs_packing(c, operand, vector)

    def cost(width: int, padded: bool) -> float:
        work = m * (-(-n // width) * width) / _speed(width, lanes)
        copy = PACK_ROWS * n if padded and not packs_anyway else 0.0
        return work + copy

    choices = [(cost(nr, False), 0, nr, False)]
    for rank, width in enumerate((2 * lanes, lanes, lanes // 2, lanes // 4)):
        if width >= 4 and n % width and (width >= lanes or n < width):
            choices.append((cost(width, True), rank + 1, width, True))
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


def _rows(m: int, per_row: int) -> int:
    """MR: the row count with the least work over `m` rows, a row tile costing
    its rows plus TILE_OVERHEAD, within ACCUMULATORS registers; among equals the
    one that divides `m` (no predicated tile), then the largest."""
    fits = [mr for mr in range(min(MAX_ROWS, m), 0, -1) if mr * per_row <= ACCUMULATORS]
    if not fits:
        return 1
    return min(fits, key=lambda mr: (-(-m // mr) * (mr + TILE_OVERHEAD), m % mr != 0, -mr))


def _paddable(c: Contraction) -> bool:
    """pad_einsum applies: every operand indexed by plain axes or constants."""
    return all(op.is_plain() for op in c.operands)


def _layout_needs_packing(c: Contraction, operand: Operand, vector: tir.Var) -> bool:
    """The operand's NR values of one reduction step are not contiguous (the
    vector axis is not its last: conv weights, a dense layer's weight), or
    successive steps are a page or more apart (a 1024-wide matrix): either way
    the micro-kernel would wait on memory without a packed copy."""
    axes = operand.plain_axes()
    shape = [arith.as_int(d) for d in operand.buffer.shape]
    if vector not in axes or any(d is None for d in shape):
        return False
    if axes[vector] != len(shape) - 1:
        return True
    item = max(dt.bits(operand.buffer.dtype) // 8, 1)
    strides = [
        math.prod(d for d in shape[a + 1 :] if d is not None) * item
        for a in (axes[r] for r in c.reduce if r in axes)
    ]
    return any(s >= PAGE_STRIDE for s in strides)


def _worth_packing(c: Contraction, operand: Operand, roles: Roles, nr: int) -> bool:
    """Packing without padding needs NR to divide the vector axis
    (transform_layout does not pad) and pays when the layout needs it."""
    axes = operand.plain_axes()
    if not operand.is_plain() or roles.vector not in axes or c.extents[roles.vector] % nr:
        return False
    return _layout_needs_packing(c, operand, roles.vector)

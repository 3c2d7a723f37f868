"""What the schedule rules must know of the machine a build is for, as data:
its vector width and vector register count, and its level-1 and level-2 data
caches.

    traits = cpu_traits(Target("llvm -mcpu=haswell").machine_options())
    traits.vector_bytes, traits.lanes("float32")     # 32, 8

The vector width is the widest vector register the target machine (the host's,
or that of `-mtriple`/`-mcpu`/`-mattr`) puts a 16-float vector in, read from the
assembly LLVM emits for a probe (llvmlite does not expose a CPU's implied
features: `-mcpu=haswell` means AVX2 without saying so): on x86-64 zmm (AVX-512,
64 bytes, 32 registers), ymm (AVX, 32 bytes, 16 registers) or xmm (SSE, 16
bytes, 16 registers); aarch64 has NEON's 32 registers of 16 bytes (SVE's vectors
are scalable: tvmlite vectorizes at NEON's fixed width there too). The
caches are the host's, read from Linux's sysfs, when the build is for the host
itself (no `-mtriple`, no `-mcpu`); for another CPU they are typical values of
its architecture (`DEFAULT_CACHES`): tvmlite has no table of CPU models.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tvmlite.dsl import dtype as dt
from tvmlite.lowering.codegen.target import (
    MachineOptions,
    arch_of,
    current_options,
    host_target_machine,
    once,
    parse_and_verify,
    runs_here,
)

SYSFS_CACHES = Path("/sys/devices/system/cpu/cpu0/cache")
# Sixteen floats loaded, added and stored: in zmm, ymm or xmm registers. The
# attributes ask for the widest registers the CPU has (without them LLVM splits
# 512-bit vectors on CPUs it tunes for 256 bits, skylake-avx512 among them).
WIDTH_PROBE = """
define void @probe(ptr %p) #0 {
  %v = load <16 x float>, ptr %p, align 4
  %w = fadd <16 x float> %v, %v
  store <16 x float> %w, ptr %p, align 4
  ret void
}
attributes #0 = { "min-legal-vector-width"="512" "prefer-vector-width"="512" }
"""


@dataclass(frozen=True)
class Cache:
    """One data cache: its size, associativity and line, in bytes."""

    size: int
    ways: int
    line: int

    @property
    def alias_stride(self) -> int:
        """Addresses this many bytes apart fall into the same set: rows this far
        apart, read together, compete for `ways` lines."""
        return max(self.size // max(self.ways, 1), self.line)


# Typical caches of an architecture's cores, for machines other than the host:
# x86-64 (Intel since Skylake-SP, AMD since Zen 2: 32 KiB 8-way L1d, 1 MiB L2 or
# near), aarch64 (Neoverse N1/V1, Apple's and Graviton's big cores: 64 KiB 4-way).
DEFAULT_CACHES = {
    "x86_64": (Cache(32 << 10, 8, 64), Cache(1 << 20, 16, 64)),
    "aarch64": (Cache(64 << 10, 4, 64), Cache(1 << 20, 8, 64)),
}


@dataclass(frozen=True)
class CPUTraits:
    """The machine as the schedule rules see it."""

    arch: str
    vector_bytes: int  # one vector register
    vector_registers: int
    l1: Cache
    l2: Cache

    def lanes(self, dtype: str) -> int:
        """Elements of `dtype` in one vector register."""
        return max(1, self.vector_bytes * 8 // max(8, dt.bits(dtype)))


def cpu_traits(options: MachineOptions | None = None) -> CPUTraits:
    """The traits of the machine of `options` (default: the current options)."""
    return _traits(current_options() if options is None else options)


@once
def _traits(options: MachineOptions) -> CPUTraits:
    arch = arch_of(options)
    if arch == "x86_64":
        asm = host_target_machine(options).emit_assembly(parse_and_verify(WIDTH_PROBE, options))
        width = 64 if "zmm" in asm else 32 if "ymm" in asm else 16
        registers = 32 if width == 64 else 16
    else:  # aarch64: NEON (ARCHITECTURES in target.py lists what else could come here)
        width, registers = 16, 32
    l1, l2 = DEFAULT_CACHES[arch]
    if options.cpu is None and runs_here(options):
        l1, l2 = _host_cache(1) or l1, _host_cache(2) or l2
    return CPUTraits(arch, width, registers, l1, l2)


def wide_vector_bits(options: MachineOptions | None = None) -> int | None:
    """512 when the machine of `options` (default: the current ones) has 64-byte
    vectors (AVX-512), else None: LLVM's own choice of vector width for the CPU is
    right then (it prefers 256 bits on some AVX-512 CPUs)."""
    traits = cpu_traits(options)
    return 512 if traits.vector_bytes == 64 else None


def _host_cache(level: int) -> Cache | None:
    """This machine's data (or unified) cache of `level`, from sysfs; None when
    Linux does not say."""
    try:
        for entry in sorted(SYSFS_CACHES.glob("index*")):
            fields = {f.name: f.read_text().strip() for f in entry.iterdir() if f.is_file()}
            if fields.get("level") != str(level) or fields.get("type") == "Instruction":
                continue
            return Cache(
                _bytes(fields["size"]),
                int(fields.get("ways_of_associativity") or 1),
                int(fields.get("coherency_line_size") or 64),
            )
    except (OSError, KeyError, ValueError):
        return None
    return None


def _bytes(text: str) -> int:
    """sysfs's size text ("48K", "1024K", "2M") in bytes."""
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:].upper(), 1)
    return int(text.rstrip("KMGkmg")) * scale

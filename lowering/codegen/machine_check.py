"""Checks a target's CPU name and feature flags before LLVM sees them in this
process: LLVM answers a bad value with warnings on stderr and, later, a fatal
error that aborts the interpreter (`-mcpu=foo`, a 32-bit CPU such as `-mcpu=i386`
on a 64-bit host, `-mattr=avx2` without a sign, `-mattr=-sse`).

llvmlite exposes neither LLVM's list of CPUs and features nor a way to ask
whether a combination can generate code, and its only window on the list is
`-mcpu=help`, which prints to the process's stderr. So a child Python process
(llvmlite only: about 0.15 s) does both: it captures the `help` tables on a file
descriptor of its own and compiles a probe module that exercises what kernels
use (scalar and vector float/double/half arithmetic, math intrinsics, libm
calls, 64-bit integers) for the exact CPU and feature string the build would
use. Whatever aborts or warns there is an error here, with the value named and
close matches listed; nothing reaches this process's stderr. Each combination
is checked once per process; the host's own machine (no `-mcpu`, no `-mattr`)
is never checked. For another triple (`-mtriple`) the tables and the probe are
that architecture's, and its machine is checked even without `-mcpu`.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import llvmlite.binding as llvm

from tvmlite.diagnostics import TVMLiteError, did_you_mean
from tvmlite.lowering.codegen.target import once

# What the code generator emits for kernels and host code, in small: if LLVM can
# compile this for a machine, it has the registers and instructions they need.
PROBE_IR = r"""
declare float @expf(float)
declare <8 x float> @llvm.fma.v8f32(<8 x float>, <8 x float>, <8 x float>)
declare double @llvm.sqrt.f64(double)

define float @probe_f32(float %a, <8 x float> %v, <8 x float> %w) {
  %e = call float @expf(float %a)
  %f = call <8 x float> @llvm.fma.v8f32(<8 x float> %v, <8 x float> %w, <8 x float> %v)
  %x = extractelement <8 x float> %f, i32 3
  %s = fadd float %e, %x
  ret float %s
}

define double @probe_f64(double %a, <4 x double> %v, half %h) {
  %r = call double @llvm.sqrt.f64(double %a)
  %x = extractelement <4 x double> %v, i32 1
  %y = fpext half %h to double
  %s = fadd double %r, %x
  %t = fmul double %s, %y
  ret double %t
}

define half @probe_f16(float %a) {
  %h = fptrunc float %a to half
  ret half %h
}

define i64 @probe_i64(i64 %a, i64 %b, <4 x i32> %v, ptr noalias %p) {
  %q = sdiv i64 %a, %b
  %m = mul <4 x i32> %v, %v
  store <4 x i32> %m, ptr %p, align 4
  %c = icmp slt i64 %q, 0
  %s = select i1 %c, i64 %a, i64 %q
  ret i64 %s
}
"""

# Runs in the child: prints the `help` tables (as JSON) on stdout, then compiles
# the probe for argv's CPU and features; LLVM's complaints go to the child's stderr.
_CHILD = r"""
import json, os, sys, tempfile
import llvmlite.binding as llvm

cpu, features, want_tables, probe = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4]
triple = sys.argv[5] or llvm.get_process_triple()
llvm.initialize_native_target()
llvm.initialize_native_asmprinter()
llvm.initialize_native_asmparser()
llvm.initialize_all_targets()
llvm.initialize_all_asmprinters()
target = llvm.Target.from_triple(triple)
tables = None
if want_tables:
    with tempfile.TemporaryFile() as sink:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(sink.fileno(), 2)
        try:
            target.create_target_machine(cpu="help")
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        sink.seek(0)
        tables = sink.read().decode("utf-8", "replace")
print(json.dumps(tables), flush=True)
if cpu:
    machine = target.create_target_machine(
        cpu=cpu, features=features, opt=2, reloc="pic", codemodel="jitdefault"
    )
    module = llvm.parse_assembly(probe)
    module.triple = triple
    module.verify()
    machine.emit_object(module)
"""

_FEATURE = re.compile(r"[+-][A-Za-z0-9_.-]+")
_CPU = re.compile(r"[A-Za-z0-9_.-]+")
_TABLE_ROW = re.compile(r"^  (\S+)\s+- ", re.MULTILINE)
# Features LLVM lists but that a build cannot turn on or off: the code model of the host.
_MODE_FEATURES = ("64bit-mode", "32bit-mode", "16bit-mode")
_LLVM_PREFIX = re.compile(r"^(LLVM ERROR: |error: <unknown>:0:0: in function \S+ .*?\): )")


def check_machine(
    cpu: str | None, features: tuple[str, ...], full: tuple[str, str], triple: str | None = None
) -> None:
    """Raise TVMLiteError unless LLVM can generate code for the CPU name `cpu` (None:
    the host's) with the feature flags `features` (as the user wrote them);
    `full` is the (cpu, feature string) the target machine will be made with,
    `triple` the target's triple when it is not the host's."""
    if cpu is None and not features and triple is None:
        return
    if cpu is not None:
        if not isinstance(cpu, str) or not _CPU.fullmatch(cpu):
            raise TVMLiteError(f"-mcpu: {cpu!r} is not a CPU name")
    for flag in features:
        if not isinstance(flag, str) or not _FEATURE.fullmatch(flag):
            name = flag.lstrip("+-") if isinstance(flag, str) else flag
            raise TVMLiteError(
                f"-mattr: {flag!r} is not a feature flag: write +{name} to enable "
                f"a feature or -{name} to disable it"
            )
    cpus, known = known_cpus(triple), known_features(triple)
    if cpu is not None and cpu not in cpus:
        host = f"; this host is a {llvm.get_host_cpu_name()}" if triple is None else ""
        where = "" if triple is None else f" for {triple}"
        raise TVMLiteError(f"-mcpu: unknown CPU {cpu!r}{where}{_suggest(cpu, cpus, 'CPUs')}{host}")
    for flag in features:
        name = flag[1:]
        if name not in known or name in _MODE_FEATURES:
            hint = _suggest(name, known, "features")
            where = "" if triple is None else f" for {triple}"
            raise TVMLiteError(f"-mattr: unknown feature {name!r}{where}{hint}")
    failure = _probe(*full, triple or "")
    if failure is not None:
        shown = " ".join(
            ([f"-mtriple={triple}"] if triple else [])
            + [f"-mcpu={cpu or full[0]}"]
            + ([f"-mattr={','.join(features)}"] if features else [])
        )
        where = "on this host" if triple is None else "here"
        raise TVMLiteError(f"LLVM cannot generate code for {shown} {where}: {failure}")


def known_cpus(triple: str | None = None) -> tuple[str, ...]:
    """The CPU names LLVM knows for `triple`'s architecture (default: the host's;
    its `-mcpu=help`)."""
    return _tables(triple or "")[0]


def known_features(triple: str | None = None) -> tuple[str, ...]:
    """The feature names LLVM knows for `triple`'s architecture (default: the
    host's; its `-mattr=help`)."""
    return _tables(triple or "")[1]


def _suggest(value: str, choices: tuple[str, ...], what: str) -> str:
    return did_you_mean(value, choices) or f" (no close match among LLVM's {len(choices)} {what})"


@once
def _tables(triple: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    done = _run_child("", "", triple, want_tables=True)
    try:
        text = json.loads(done.stdout) if done.returncode == 0 else None
    except ValueError:
        text = None
    if not isinstance(text, str):
        raise TVMLiteError(f"cannot read LLVM's list of CPUs and features: {done.stderr.strip()}")
    cpus_text, _, features_text = text.partition("Available features for this target:")
    cpus = tuple(_TABLE_ROW.findall(cpus_text))
    features = tuple(_TABLE_ROW.findall(features_text))
    if not cpus or not features:
        raise TVMLiteError("cannot read LLVM's list of CPUs and features: no table found")
    return cpus, features


@once
def _probe(cpu: str, features: str, triple: str) -> str | None:
    """What LLVM said when compiling the probe for `cpu` and `features` (of
    `triple`; "": the host's), or None."""
    done = _run_child(cpu, features, triple, want_tables=False)
    said = " ".join(line.strip() for line in done.stderr.splitlines() if line.strip())
    if done.returncode == 0 and not said:
        return None
    said = _LLVM_PREFIX.sub("", said)  # where in the probe is no help to the user
    return said or f"the compiler exited with status {done.returncode}"


def _run_child(
    cpu: str, features: str, triple: str, want_tables: bool
) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-I", "-c", _CHILD, cpu, features, "1" if want_tables else "0"]
    try:
        return subprocess.run(
            [*command, PROBE_IR, triple], capture_output=True, text=True, timeout=300, check=False
        )
    except (OSError, subprocess.SubprocessError) as err:
        raise TVMLiteError(f"cannot check the target in a child process: {err}") from None

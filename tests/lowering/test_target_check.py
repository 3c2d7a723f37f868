"""Bad target strings and bad IR end in a TVMLiteError, never in LLVM's warnings
on stderr or a process abort (lowering/codegen/machine_check.py).

The abort cases run in a child process: on a regression the child dies, not the
test session, and its stderr shows whether LLVM printed anything."""

from __future__ import annotations

import json
import platform
import subprocess
import sys
import textwrap

import pytest

import tvmlite
from tvmlite.lowering.codegen.machine_check import known_cpus, known_features
from tvmlite.lowering.target import Target

X86 = platform.machine() in ("x86_64", "AMD64")

# Each target string and words its error must contain.
BAD_TARGETS = {
    "llvm -mcpu=foo": ["unknown CPU 'foo'", "this host is a"],
    "llvm -mcpu=skylak": ["unknown CPU 'skylak'", "did you mean", "skylake"],
    "llvm -mcpu=help": ["unknown CPU 'help'"],
    "llvm -mattr=+nonsense": ["unknown feature 'nonsense'"],
    "llvm -mattr=+avx3": ["unknown feature 'avx3'", "did you mean", "avx2"],
    "llvm -mattr=+help": ["unknown feature 'help'"],
    "llvm -mattr=avx2": ["'avx2' is not a feature flag", "+avx2"],
    "llvm -mcpu=": ["-mcpu needs a value"],
    "llvm -mtriple=x": ["-mtriple: LLVM has no target for 'x'"],
    "llvm -mtriple=aarch64-linux-gnu -mcpu=foo": ["unknown CPU 'foo' for aarch64-linux-gnu"],
}
if X86:  # valid names LLVM cannot generate 64-bit code for: it aborts without the check
    BAD_TARGETS |= {
        "llvm -mcpu=i386": ["-mcpu=i386", "64-bit code requested"],
        "llvm -mattr=-64bit": ["-mattr=-64bit", "64-bit code requested"],
        "llvm -mcpu=x86-64 -mattr=-sse": ["-mattr=-sse", "SSE disabled"],
    }

HEADER = "# from tvm.script import tir as T\n\n"
PRIM = HEADER + textwrap.dedent(
    """\
    @T.prim_func
    def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            B[i] = BODY
    """
)
# IR that reaches code generation with something LLVM cannot take as is.
BAD_IR = {
    "reinterpret": ('T.reinterpret("float32", T.int64(3))', "sizes differ"),
    "llvm_intrin": (
        'T.call_llvm_pure_intrin("float32", "llvm.nosuch", T.uint32(1), A[i])',
        "not supported",
    ),
}

CHILD = """
import json, sys
import tvmlite

targets, programs = json.loads(sys.argv[1]), json.loads(sys.argv[2])
mod = tvmlite.parse(programs.pop("good"))
out = {}
for target in targets:
    try:
        tvmlite.build(mod, target=target, cache=False)
        out[target] = "built"
    except tvmlite.TVMLiteError as err:
        out[target] = str(err)
for name, text in programs.items():
    try:
        tvmlite.build(tvmlite.parse(text), cache=False)
        out[name] = "built"
    except tvmlite.TVMLiteError as err:
        out[name] = str(err)
print(json.dumps(out))
"""


def test_bad_targets_and_ir_are_clean_errors_in_a_child_process() -> None:
    programs = {"good": PRIM.replace("BODY", "A[i] + T.float32(1)")}
    programs |= {name: PRIM.replace("BODY", body) for name, (body, _) in BAD_IR.items()}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(list(BAD_TARGETS)), json.dumps(programs)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # no LLVM warning, no "LLVM ERROR"
    messages = json.loads(done.stdout)
    for target, words in BAD_TARGETS.items():
        for word in words:
            assert word in messages[target], (target, messages[target])
    for name, (_, words) in BAD_IR.items():
        assert words in messages[name], (name, messages[name])


def test_tables_come_from_llvm() -> None:
    cpus, features = known_cpus(), known_features()
    assert "generic" in cpus and len(cpus) > 10
    if X86:
        assert {"x86-64", "skylake", "znver3"} <= set(cpus)
        assert {"avx2", "fma", "sse4.1", "avx512f"} <= set(features)


@pytest.mark.skipif(not X86, reason="x86 CPU names")
def test_good_targets_still_build() -> None:
    t = Target("llvm -mcpu=skylake-avx512 -mattr=+avx2,-fma")
    assert t.mattr == ("+avx2", "-fma")
    assert Target("llvm", mcpu="x86-64", mattr="+avx2,-fma").mattr == ("+avx2", "-fma")


def test_target_keywords_are_checked() -> None:
    with pytest.raises(TypeError, match="'mcpus'"):
        Target("llvm", mcpus="skylake")
    with pytest.raises(tvmlite.TVMLiteError, match="opt_level must be 0 to 3"):
        Target("llvm", opt_level=7)
    with pytest.raises(tvmlite.TVMLiteError, match="unknown CPU 'nocpu'"):
        Target("llvm", mcpu="nocpu")

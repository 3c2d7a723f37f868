"""Compare tvmlite's import of every operator case with Apache TVM 0.27's (a script for
a machine with TVM installed; the test suite never imports TVM).

    python tests/frontend/compare_with_tvm.py [--only SUBSTRING] [--diff]

For each batch of cases (as test_aten_ops.py batches them) both importers translate the same
exported program; the report gives, per case, whether the printed modules are byte
for byte the same, and, when TVM's text has no omitted constants, whether tvmlite's
parse of TVM's text is structurally equal to tvmlite's import. The last line counts
them; `known deviations` are the cases where tvmlite computes what PyTorch computes
and TVM does not (docs/frontend.md lists them)."""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import batches  # noqa: E402
import test_aten_ops  # noqa: E402
from programs import export  # noqa: E402

import tvmlite  # noqa: E402
from tvmlite.frontend import from_exported_program  # noqa: E402


def compare(cases: list, show_diff: bool) -> dict[str, str]:
    from tvm.relax.frontend.torch import from_exported_program as tvm_import

    _, _, ep = export(cases, cases[0].decompose)
    try:
        theirs = tvm_import(ep, run_ep_decomposition=False).script()
    except Exception as err:  # noqa: BLE001 - TVM's failure is a result here
        if len(cases) > 1:  # find the cases TVM fails on
            return {k: v for case in cases for k, v in compare([case], show_diff).items()}
        return {cases[0].id: f"TVM fails: {type(err).__name__}: {str(err)[:120]}"}
    ours_mod = from_exported_program(ep, run_ep_decomposition=False)
    ours = ours_mod.script()
    if ours.rstrip("\n") == theirs.rstrip("\n"):
        verdict = "same text"
        if "metadata[" not in theirs:
            equal = tvmlite.structural_equal(tvmlite.parse(theirs), ours_mod)
            verdict += ", structurally equal" if equal else ", NOT structurally equal"
        return {c.id: verdict for c in cases}
    if len(cases) > 1:  # find the cases that differ
        out: dict[str, str] = {}
        for case in cases:
            out.update(compare([case], show_diff))
        return out
    if show_diff:
        diff = difflib.unified_diff(theirs.splitlines(), ours.splitlines(), lineterm="", n=0)
        print(f"--- {cases[0].id}\n" + "\n".join(line[:240] for line in diff))
    return {cases[0].id: "DIFFERENT TEXT"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="cases whose id contains this")
    parser.add_argument("--diff", action="store_true", help="print the differing lines")
    args = parser.parse_args()
    selected = [c for c in test_aten_ops.CASES if args.only in c.id]
    results: dict[str, str] = {}
    for batch in batches.batches(selected):
        results.update(compare(batch, args.diff))
    for case_id, verdict in results.items():
        print(f"{case_id:60s} {verdict}")
    same = sum(v.startswith("same text") for v in results.values())
    print(f"{same}/{len(results)} cases print as TVM prints them")
    return 0


if __name__ == "__main__":
    sys.exit(main())

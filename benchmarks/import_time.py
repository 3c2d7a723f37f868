"""How long importing a real model takes: tvmlite.frontend.from_exported_program against
TVM 0.27's, on the same exported program (issue 27's target: under 1 s beyond what
torch.export itself takes).

    python benchmarks/import_time.py [--only resnet18 --only bert] [--rounds 5] [--no-tvm]

Each architecture of the real-model corpus (benchmarks/_torch_models.py: torchvision
and transformers, random weights) is exported once (`torch.export.export`, then
`run_decompositions()`, both timed once: they are PyTorch's work whichever importer
follows), then the two importers translate the decomposed program in turn, round by
round (`run_ep_decomposition=False`: the decomposition is not counted twice). Before
any timing, tvmlite's text is checked against TVM's (byte for byte) when TVM is
installed. The table gives medians (and minimum) of wall time and of processor time,
and tvmlite's time over TVM's.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _torch_models  # noqa: E402

TARGET_S = 1.0


def _inputs(name: str) -> tuple[tuple[Any, ...], Any]:
    """The example inputs the corpus exports `name` with, and its dynamic shapes."""
    import torch

    gen = torch.Generator().manual_seed(2)
    if name in ("resnet18", "mobilenet_v2", "vit"):
        return (torch.randn(1, 3, 224, 224, generator=gen),), None
    if name == "mobilenet_v2_dynbatch":
        batch = torch.export.Dim("batch", min=1, max=64)
        return (torch.randn(2, 3, 224, 224, generator=gen),), {"x": {0: batch}}
    ids = torch.randint(0, 8192, (1, 128), generator=gen)
    if name == "gpt2_nomask":
        return (ids,), None
    return (ids, torch.ones(1, 128, dtype=torch.int64)), None


def _export(name: str) -> tuple[Any, float, float]:
    import torch

    _torch_models.import_torchvision()
    torch.manual_seed(0)
    model = _torch_models.ARCHITECTURES[name]().eval()
    args, dynamic = _inputs(name)
    start = time.perf_counter()
    program = torch.export.export(model, args, dynamic_shapes=dynamic)
    exported = time.perf_counter() - start
    start = time.perf_counter()
    program = program.run_decompositions()
    return program, exported, time.perf_counter() - start


def _timed(fn: Any, program: Any) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fn(program, run_ep_decomposition=False)
    return time.perf_counter() - wall, time.process_time() - cpu


def _cell(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} ({min(values):.3f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", default=[], help="a model (repeatable)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--no-tvm", action="store_true", help="time tvmlite only")
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # torch's and transformers' deprecation notices

    from tvmlite.frontend import from_exported_program

    contenders = {"tvmlite": from_exported_program}
    if not args.no_tvm:
        try:
            from tvm.relax.frontend.torch import from_exported_program as tvm_import
        except ImportError:
            print("TVM: not importable here, left out")
        else:
            contenders["TVM"] = tvm_import
    names = args.only or list(_torch_models.ARCHITECTURES)
    rows = []
    for name in names:
        program, exported, decomposed = _export(name)
        if "TVM" in contenders:  # the check before the timing
            ours = contenders["tvmlite"](program, run_ep_decomposition=False).script()
            theirs = contenders["TVM"](program, run_ep_decomposition=False).script()
            same = "yes" if ours.rstrip("\n") == theirs.rstrip("\n") else "NO"
        else:
            contenders["tvmlite"](program, run_ep_decomposition=False)
            same = "-"
        times: dict[str, tuple[list[float], list[float]]] = {k: ([], []) for k in contenders}
        for _ in range(args.rounds):
            for key, fn in contenders.items():
                wall, cpu = _timed(fn, program)
                times[key][0].append(wall)
                times[key][1].append(cpu)
        ours_wall = statistics.median(times["tvmlite"][0])
        row = [name, f"{exported:.2f}", f"{decomposed:.2f}", _cell(times["tvmlite"][0]),
               _cell(times["tvmlite"][1])]  # fmt: skip
        if "TVM" in contenders:
            theirs_wall = statistics.median(times["TVM"][0])
            row += [_cell(times["TVM"][0]), _cell(times["TVM"][1]),
                    f"{ours_wall / theirs_wall:.2f}x", same]  # fmt: skip
        row.append("pass" if ours_wall < TARGET_S else "miss")
        rows.append(row)
        print(f"[{name}] done", file=sys.stderr, flush=True)
    head = ["model", "export s", "decompose s", "tvmlite s", "tvmlite cpu s"]
    if "TVM" in contenders:
        head += ["TVM s", "TVM cpu s", "tvmlite / TVM", "same text"]
    head.append(f"< {TARGET_S:g} s")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print("times: median (min) of", args.rounds, "rounds, the importers alternating")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Do the real models of ../shared/corpus/models_real build with their weights from
files and match PyTorch, through the Python API and the CLI (docs/constants.md)?

  python benchmarks/real_models_weights.py [--data DIR] [--only resnet18,bert]
  python benchmarks/real_models_weights.py --make-constants   # needs Apache TVM + torch

DIR ($TVMLITE_MODELS_DIR, else ../models_data) holds what
../shared/tools/gen_real_models.py writes: NAME.tvms, NAME.with_metadata.tvms and
NAME.npz (`arg0..argK`, main's parameters in order; `out0..outM`, PyTorch's
outputs). From it this script writes the files a user would have: per model
NAME.inputs.npz (the data inputs by parameter name), and per text TEXT.params.npz
(its weights by parameter name: NAME.params.npz, NAME.with_metadata.params.npz,
whose main lacks the buffers, which are its constants). `--make-constants`
first writes NAME.with_metadata.constants.npz with the recipe of
examples/tvm_constants.py, from the module TVM printed: it exports each model
again with the generator (same seeds, same module), checks that TVM prints the
corpus text byte for byte, and that TVM's own parser, given the table, gives back
a module structurally equal to the printed one (values included).

Then every text (NAME.tvms, NAME.with_metadata.tvms) is built twice, each
checked against PyTorch (max relative error, 1e-3 allowed): `tvmlite.build(mod,
params=NAME.params.npz)` (constants from the file beside the text) called on the
inputs, and `tvms run NAME[.with_metadata].tvms --params ... --input
NAME.inputs.npz --output` in a fresh process. Builds use no compile cache.
Prints one line per text: build seconds, the two errors, or why it failed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import typing
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
TOLERANCE = 1e-3


def beside(name: str) -> Path:
    """The folder `name` next to the checkout (or next to the folder of worktrees)."""
    for base in (ROOT.parent, ROOT.parent.parent):
        if (base / name).is_dir():
            return base / name
    return ROOT.parent / name


SHARED = beside("shared")


def data_dir(given: str | None) -> Path:
    return Path(given or os.environ.get("TVMLITE_MODELS_DIR") or beside("models_data"))


def write_user_files(folder: Path, name: str, info: dict, texts: list[Path]) -> None:
    """NAME.inputs.npz and TEXT.params.npz from NAME.npz, keyed by parameter names."""
    import tvmlite
    from tvmlite.array_file import save_arrays  # written aligned: every weight is mapped

    arrays = np.load(folder / f"{name}.npz")
    names = [p["name"] for p in info["inputs"]]
    data = info["n_data_inputs"]
    inputs = {n: arrays[f"arg{k}"] for k, n in enumerate(names[:data])}
    np.savez(folder / f"{name}.inputs.npz", **inputs)
    weights = {n: arrays[f"arg{k}"] for k, n in enumerate(names) if k >= data}
    for text in texts:
        wanted = [p.name for p in tvmlite.parse_file(text)["main"].params[data:]]
        save_arrays(params_of(text), {n: weights[n] for n in wanted})


def params_of(text: Path) -> Path:
    return text.with_name(text.name.removesuffix(".tvms") + ".params.npz")


def make_constants(folder: Path, names: list[str]) -> None:
    """The constants files of the with_metadata texts, by the documented recipe."""
    sys.path.insert(0, str(SHARED / "tools"))
    sys.path.insert(0, str(ROOT / "examples"))
    import gen_real_models as gen
    import torch
    import tvm
    from tvm import relax
    from tvm_constants import save_constants

    for name in names:
        text_path = SHARED / "corpus" / "models_real" / f"{name}.with_metadata.tvms"
        if not text_path.exists():
            continue
        torch.manual_seed(gen.SEED)
        model, args, dyn, _ = gen.MODELS[name]()
        mod, _, _ = gen.export(model.eval(), args, dyn)
        text = mod.script()
        if text != text_path.read_text():
            raise SystemExit(f"{name}: TVM prints another text than the corpus's")
        out = folder / f"{name}.with_metadata.constants.npz"
        count = save_constants(mod, str(out))
        saved = np.load(out)
        table = [relax.const(saved[f"ir.GenericConst/{i}"]) for i in range(count)]
        namespace = {
            "I": tvm.script.ir,
            "R": tvm.script.relax,
            "T": tvm.script.tirx,
            "TypeVar": typing.TypeVar,
        }
        try:
            back = tvm.script.from_source(
                text, extra_vars={"metadata": {"ir.GenericConst": table}, **namespace}
            )
            tvm.ir.assert_structural_equal(back, mod)
            verdict = "TVM's parser gives back the module, values included"
        except tvm.error.DiagnosticError as err:  # bert: TVM cannot parse R.const("-inf")
            verdict = f"TVM's parser refuses the text ({str(err).splitlines()[0][:80]})"
        print(f"{name}: {count} constants -> {out.name}; {verdict}", flush=True)


def relative_error(got: np.ndarray, ref: np.ndarray) -> float:
    if got.shape != ref.shape:
        return float("inf")
    return float(np.abs(got.astype(np.float64) - ref).max() / max(np.abs(ref).max(), 1e-30))


def check_api(
    text: Path, params: Path, inputs: Path, refs: list[np.ndarray]
) -> tuple[float, float]:
    import tvmlite

    start = time.perf_counter()
    mod = tvmlite.parse_file(text)
    ex = tvmlite.build(mod, params=params, cache=False)
    seconds = time.perf_counter() - start
    given = np.load(inputs)
    names = [p.name for p in ex["main"].params]
    out = ex["main"](*(given[n] for n in names))
    outs = out if isinstance(out, tuple) else (out,)
    return seconds, max(relative_error(o, r) for o, r in zip(outs, refs, strict=True))


def check_cli(text: Path, params: Path, inputs: Path, refs: list[np.ndarray]) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.npz"
        cmd = [
            sys.executable, "-m", "tvmlite", "run", str(text), "--params", str(params),
            "--input", str(inputs), "--output", str(out), "--no-cache",
        ]  # fmt: skip
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(done.stderr.strip().splitlines()[0][:300])
        got = np.load(out)
        keys = sorted(got.files, key=lambda k: int(k.removeprefix("result") or 0))
        outs = [got[k] for k in keys]
    return max(relative_error(o, r) for o, r in zip(outs, refs, strict=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", help="the models' data folder")
    parser.add_argument("--only", default="", help="comma-separated model names")
    parser.add_argument(
        "--make-constants", action="store_true", help="first write the constants files (TVM)"
    )
    parser.add_argument("--no-cli", action="store_true", help="only the Python API")
    args = parser.parse_args()
    folder = data_dir(args.data)
    manifest = json.loads((folder / "manifest.json").read_text())["models"]
    names = [n for n in args.only.split(",") if n] or list(manifest)
    if args.make_constants:
        make_constants(folder, names)
    print(f"load {os.getloadavg()[0]:.1f}", flush=True)
    for name in names:
        info = manifest[name]
        texts = [folder / f"{name}{kind}.tvms" for kind in ("", ".with_metadata")]
        texts = [t for t in texts if t.exists()]
        try:
            write_user_files(folder, name, info, texts)
        except Exception as err:  # noqa: BLE001 - reported, and the next model runs
            print(f"{name:36} FAILED to read: {str(err).splitlines()[0][:200]}", flush=True)
            continue
        with np.load(folder / f"{name}.npz") as saved:
            outs = sorted((k for k in saved.files if k.startswith("out")), key=lambda k: int(k[3:]))
            refs = [saved[k].astype(np.float64) for k in outs]
        for text in texts:
            params, inputs = params_of(text), folder / f"{name}.inputs.npz"
            try:
                seconds, api = check_api(text, params, inputs, refs)
                cli = None if args.no_cli else check_cli(text, params, inputs, refs)
            except Exception as err:  # noqa: BLE001 - reported, and the next model runs
                print(f"{text.name:36} FAILED: {str(err).splitlines()[0][:200]}", flush=True)
                continue
            ok = api <= TOLERANCE and (cli is None or cli <= TOLERANCE)
            shown = "-" if cli is None else f"{cli:.1e}"
            print(
                f"{text.name:36} build {seconds:6.1f} s  api err {api:.1e}  cli err {shown}  "
                f"{'ok' if ok else 'WRONG'}",
                flush=True,
            )


if __name__ == "__main__":
    main()

"""Real models cross-compiled for aarch64 and run under emulation: each model is
built with `-mtriple=aarch64-linux-gnu`, exported as a library linked by
`aarch64-linux-gnu-gcc`, called from a small C program (its inputs read from a
file), run by `qemu-aarch64`, and its first output compared with PyTorch's.

    python tools/cross_numerics.py --models-dir /work/models_data resnet18 mobilenet_v2

NAME.tvms and NAME.npz (`arg0...`, PyTorch's `out0`) come from
/work/shared/tools/gen_real_models.py. Needs Debian's gcc-aarch64-linux-gnu and
qemu-user; prints one line per model (build time, emulated run time, largest
difference from PyTorch) and exits 1 when a model's results differ.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import tvmlite

TRIPLE = "aarch64-linux-gnu"
SYSROOT = Path(f"/usr/{TRIPLE}")
DLPACK = {
    "float32": ("kDLFloat", 32),
    "float64": ("kDLFloat", 64),
    "int32": ("kDLInt", 32),
    "int64": ("kDLInt", 64),
    "bool": ("kDLBool", 8),
}


def driver(prefix: str, args: list[np.ndarray], outputs: int) -> str:
    """C calling `PREFIX_entry_main` on the arrays of `args.bin` (in order),
    writing the first result's bytes to `out.bin`."""
    lines = [
        "#include <stdio.h>",
        "#include <stdlib.h>",
        f'#include "{prefix}.h"',
        "int main(void) {",
        '  FILE* f = fopen("args.bin", "rb");',
        "  if (!f) return 2;",
    ]
    for k, a in enumerate(args):
        code, bits = DLPACK[str(a.dtype)]
        shape = ", ".join(str(d) for d in a.shape) or "1"
        lines += [
            f"  static int64_t s{k}[] = {{{shape}}};",
            f"  void* d{k} = malloc({max(a.nbytes, 1)});",
            f"  if (fread(d{k}, 1, {a.nbytes}, f) != {a.nbytes}) return 3;",
            f"  DLTensor t{k} = {{d{k}, {{1, 0}}, {a.ndim}, {{{code}, {bits}, 1}}, s{k}, 0, 0}};",
        ]
    names = ", ".join(f"&t{k}" for k in range(len(args)))
    lines += [
        f"  DLTensor* args[{len(args)}] = {{{names}}};",
        f"  DLManagedTensorVersioned* out[{outputs}];",
        "  char err[512];",
        f"  if ({prefix}_entry_main(args, {len(args)}, out, {outputs}, err, sizeof err) != 0) {{",
        '    fprintf(stderr, "%s\\n", err);',
        "    return 1;",
        "  }",
        "  const DLTensor* t = &out[0]->dl_tensor;",
        "  int64_t count = 1;",
        "  for (int i = 0; i < t->ndim; ++i) count *= t->shape[i];",
        '  FILE* o = fopen("out.bin", "wb");',
        "  fwrite(t->data, t->dtype.bits / 8, count, o);",
        "  fclose(o);",
        "  return 0;",
        "}",
    ]
    return "\n".join(lines) + "\n"


def check(name: str, models: Path, work: Path, tools: tuple[str, str]) -> bool:
    cc, qemu = tools
    data = np.load(models / f"{name}.npz")
    args = [data[f"arg{k}"] for k in range(sum(f.startswith("arg") for f in data.files))]
    want = data["out0"]
    mod = tvmlite.parse((models / f"{name}.tvms").read_text())
    start = time.perf_counter()
    ex = tvmlite.build(mod, target=f"llvm -mtriple={TRIPLE}", cache=False)
    built = time.perf_counter() - start
    library = ex.export_library(work / f"{name}.so")
    outputs = ex.manifest["functions"]["main"]["num_outputs"]
    (work / "main.c").write_text(driver(name, args, outputs))
    with open(work / "args.bin", "wb") as f:
        for a in args:
            f.write(np.ascontiguousarray(a).tobytes())
    binary = work / "main"
    command = [cc, "-O1", "-I", str(work), str(work / "main.c"), str(library)]
    subprocess.run([*command, "-Wl,-rpath,$ORIGIN", "-o", str(binary)], check=True)
    start = time.perf_counter()
    done = subprocess.run(
        [qemu, "-L", str(SYSROOT), str(binary)], cwd=work, capture_output=True, text=True
    )
    ran = time.perf_counter() - start
    if done.returncode != 0:
        print(f"{name}: the program failed under qemu: {done.stderr.strip()}")
        return False
    got = np.fromfile(work / "out.bin", dtype=want.dtype).reshape(want.shape)
    ok = bool(np.allclose(got, want, rtol=1e-3, atol=1e-3))
    print(
        f"{name}: aarch64 build {built:.1f} s, run under qemu {ran:.1f} s, "
        f"max |aarch64 - PyTorch| = {float(np.max(np.abs(got - want))):.2e}"
        f"{'' if ok else '  DIFFERS (rtol = atol = 1e-3)'}",
        flush=True,
    )
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="+", help="model names (NAME.tvms, NAME.npz)")
    parser.add_argument("--models-dir", type=Path, default=Path("/work/models_data"))
    options = parser.parse_args()
    cc = shutil.which(f"{TRIPLE}-gcc")
    qemu = shutil.which("qemu-aarch64") or shutil.which("qemu-aarch64-static")
    if cc is None or qemu is None or not SYSROOT.is_dir():
        print(f"needs {TRIPLE}-gcc and qemu-aarch64 (Debian: gcc-{TRIPLE} qemu-user)")
        return 2
    with tempfile.TemporaryDirectory(prefix="tvmlite-cross-") as tmp:
        results = [check(n, options.models_dir, Path(tmp), (cc, qemu)) for n in options.models]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())

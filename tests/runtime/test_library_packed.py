"""Everything tvmlite builds, tvmlite loads: a library calling tvmlite's own
packed functions (`-libs=blas`) loads in a fresh process through `load_module`
and `tvms run` with no extra step; one calling a user's packed function says
how to provide it, from Python and from C."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tvmlite
from tvmlite.lowering.blas import blas_available
from tvmlite.runtime.registry import get_global_func

HEADER = "from tvm.script import ir as I\nfrom tvm.script import relax as R\n\n"
MATMUL = HEADER + (
    "@I.ir_module\nclass Module:\n    @R.function\n"
    '    def main(x: R.Tensor((6, 5), "float32"), w: R.Tensor((5, 3), "float32"),'
    ' b: R.Tensor((3,), "float32")) -> R.Tensor((6, 3), "float32"):\n'
    "        with R.dataflow():\n"
    "            y = R.matmul(x, w)\n"
    "            z = R.add(y, b)\n"
    "            R.output(z)\n"
    "        return z\n"
)
USER_PACKED = HEADER + (
    "@I.ir_module\nclass Module:\n    @R.function(pure=False)\n"
    '    def main(x: R.Tensor((3,), "float32")) -> R.Tensor((3,), "float32"):\n'
    '        y = R.call_dps_packed("my.triple", (x,), out_sinfo=R.Tensor((3,), "float32"))\n'
    "        return y\n"
)


def fresh(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`code` run by a new Python process (nothing registered, nothing compiled)."""
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=300
    )


@pytest.mark.skipif(not blas_available(), reason="no OpenBLAS next to NumPy")
def test_a_blas_library_loads_in_a_fresh_process(tmp_path: Path) -> None:
    ex = tvmlite.build(tvmlite.parse(MATMUL), target="llvm -libs=blas")
    assert any(name.startswith("tvmlite.blas.") for name in ex.packed_names)
    ex.export_library(tmp_path / "mm.so")
    assert "tvmlite.blas.gemm_bias_float32" in (tmp_path / "mm.h").read_text()
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s).astype("float32") for s in [(6, 5), (5, 3), (3,)]]
    np.savez(tmp_path / "in.npz", x=args[0], w=args[1], b=args[2])
    done = fresh(
        "import numpy as np, tvmlite\n"
        "lib = tvmlite.load_module('mm.so')\n"
        "a = np.load('in.npz')\n"
        "np.save('out.npy', lib['main'](a['x'], a['w'], a['b']))\n",
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    np.testing.assert_allclose(np.load(tmp_path / "out.npy"), args[0] @ args[1] + args[2], 1e-5)
    cli = [sys.executable, "-m", "tvmlite", "run", "mm.so", "--input", "in.npz"]
    done = subprocess.run(cli + ["--output", "cli.npz"], cwd=tmp_path, capture_output=True)
    assert done.returncode == 0, done.stderr
    got = np.load(tmp_path / "cli.npz")["result"]
    np.testing.assert_allclose(got, args[0] @ args[1] + args[2], 1e-5)


@pytest.mark.skipif(not blas_available(), reason="no OpenBLAS next to NumPy")
def test_tvmlites_packed_functions_register_on_first_lookup(tmp_path: Path) -> None:
    done = fresh(
        "import numpy as np, tvmlite\n"
        "f = tvmlite.get_global_func('tvmlite.blas.gemm_float64')\n"
        "print(f.name, f.address != 0)\n"
        "print(tvmlite.get_global_func('tvmlite.blas.gemm_int8', allow_missing=True))\n",
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["tvmlite.blas.gemm_float64 True", "None"]


def test_a_users_packed_function_says_how_to_provide_it(tmp_path: Path) -> None:
    tvmlite.register_func("my.triple", lambda a, out: np.multiply(a, 3, out=out), override=True)
    ex = tvmlite.build(tvmlite.parse(USER_PACKED))
    ex.export_library(tmp_path / "user.so")
    header = (tmp_path / "user.h").read_text()
    assert " *   my.triple\n" in header
    done = fresh("import tvmlite\ntvmlite.load_module('user.so')\n", tmp_path)
    assert done.returncode == 1
    message = done.stderr.strip().splitlines()[-1]
    assert "'my.triple', which are not registered" in message
    assert 'tvmlite.register_func("my.triple", f)' in message  # from Python
    assert 'user_bind_packed("my.triple", fn)' in message and "user.h" in message  # from C
    done = fresh(
        "import numpy as np, tvmlite\n"
        "tvmlite.register_func('my.triple', lambda a, out: np.multiply(a, 3, out=out))\n"
        "print(tvmlite.load_module('user.so')['main'](np.arange(3, dtype='float32')))\n",
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[0.", "3.", "6.]"]


def test_unknown_names_are_not_provided() -> None:
    assert get_global_func("tvmlite.blas.nothing", allow_missing=True) is None
    with pytest.raises(tvmlite.TVMLiteError, match="no packed function named 'my.nothing'"):
        get_global_func("my.nothing")

"""The runtime sits below the compiler: no runtime file imports `tvmlite.lowering`
or llvmlite, and loading an exported library and calling it (through its
fast-call wrapper, emitted at export time) in a fresh process imports neither."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import numpy as np

import tvmlite
from tvmlite import runtime

ADD = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4, 4), "float32"), y: R.Tensor((4, 4), "float32")) -> R.Tensor((4, 4), "float32"):
        z = R.add(x, y)
        return z
"""
FRESH = """
import sys
import numpy as np
import tvmlite

lib = tvmlite.load_module(sys.argv[1])
x = np.arange(16, dtype="float32").reshape(4, 4)
assert (lib["main"](x, x) == 2 * x).all()
assert lib["main"]._fast is not None  # the library's own wrapper served the call
try:
    lib["main"](x, x[:3])
except tvmlite.TVMLiteError as err:
    assert "expected shape" in str(err), err
else:
    raise AssertionError("a wrong shape was accepted")
compiler = sorted(m for m in sys.modules if m.split(".")[0] == "llvmlite" or
                  m.startswith("tvmlite.lowering"))
print(compiler)
"""


def test_no_runtime_file_imports_the_compiler() -> None:
    for path in sorted(Path(runtime.__file__).parent.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            for name in names:
                assert not name.startswith(("tvmlite.lowering", "llvmlite")), (path.name, name)


IMPORT_ALL = """
import importlib, pkgutil, sys
import tvmlite.runtime as runtime

for info in pkgutil.iter_modules(runtime.__path__):
    importlib.import_module("tvmlite.runtime." + info.name)
for name in runtime.__all__:
    getattr(runtime, name)
assert "tvmlite.runtime.loader" in sys.modules and "tvmlite.runtime.module" in sys.modules
print(sorted(m for m in sys.modules if m.split(".")[0] == "llvmlite" or
             m.startswith("tvmlite.lowering")))
"""


def test_importing_every_runtime_module_imports_no_compiler() -> None:
    """What the runtime files import, transitively, in a fresh interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_ALL], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


def test_loading_and_calling_a_library_imports_no_compiler(tmp_path: Path) -> None:
    library = tmp_path / "add.so"
    tvmlite.build(tvmlite.parse(ADD), cache=False).export_library(library)
    done = subprocess.run(
        [sys.executable, "-c", FRESH, str(library)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


def test_results_outlive_the_library_that_made_them(tmp_path: Path) -> None:
    """Result arrays of the fast path are released by NumPy's own capsule
    destructor, not by code in the library: unmapping it first is safe."""
    library = tmp_path / "add.so"
    tvmlite.build(tvmlite.parse(ADD), cache=False).export_library(library)
    code = (
        "import gc, sys, numpy as np, tvmlite\n"
        "lib = tvmlite.load_module(sys.argv[1])\n"
        "x = np.ones((4, 4), 'float32')\n"
        "out = [lib['main'](x, x) for _ in range(3)]\n"
        "del lib; gc.collect()\n"
        "assert all((o == 2).all() for o in out)\n"
        "del out; gc.collect()\n"
        "print('ok')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(library)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0 and done.stdout == "ok\n", done.stderr[-2000:]
    x = np.ones((4, 4), "float32")
    np.testing.assert_array_equal(tvmlite.load_module(library)["main"](x, x), 2 * x)

"""Fast-call wrappers (`lowering/codegen/llvm_fastcall.py`): one shared body a
module, each function's wrapper a stub calling it with its record; inlined in
small modules. Every function of a large module is served by the wrapper, with
its own parameters' checks, results and messages, for NumPy arrays and for the
tensors of the producer type the module serves (torch, when installed)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tvmlite
from tvmlite.lowering.build import lower
from tvmlite.lowering.codegen.generate import generate_llvm
from tvmlite.lowering.codegen.llvm_host_module import SMALL_MODULE
from tvmlite.lowering.target import Target
from tvmlite.runtime import dlpack

HEADER = "# from tvm.script import ir as I\n# from tvm.script import relax as R\n\n"
# Functions unlike each other: dtypes (int64 has two NumPy type numbers), ranks,
# arities, one result or a tuple of two.
TEMPLATES = [
    '    @R.function\n    def f{k}(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32"))'
    ' -> R.Tensor((2, 3), "float32"):\n        z = R.add(x, y)\n        return z\n',
    '    @R.function\n    def f{k}(x: R.Tensor((4,), "int64")) -> R.Tensor((4,), "int64"):\n'
    "        z = R.multiply(x, x)\n        return z\n",
    '    @R.function\n    def f{k}(x: R.Tensor((3,), "float64"), y: R.Tensor((3,), "float64"))'
    ' -> R.Tuple(R.Tensor((3,), "float64"), R.Tensor((3,), "float64")):\n'
    "        s = R.add(x, y)\n        d = R.subtract(x, y)\n        return (s, d)\n",
]


def module(count: int) -> str:
    body = "\n".join(TEMPLATES[k % len(TEMPLATES)].format(k=k) for k in range(count))
    return f"{HEADER}@I.ir_module\nclass Module:\n{body}"


def host_ir(text: str) -> str:
    return str(generate_llvm(lower(tvmlite.parse(text), Target.of("llvm"), "minimal")).module)


def defined(ir_text: str, name: str) -> str:
    """The `define` line and body of function `name`."""
    found = re.search(r'define [^\n]*@"?' + re.escape(name) + r'"?\(.*?\n\}', ir_text, re.S)
    assert found is not None, name
    return found.group(0)


@pytest.mark.parametrize("count", [3, SMALL_MODULE + 3])
def test_one_body_inlined_only_in_small_modules(count: int) -> None:
    text = host_ir(module(count))
    body = defined(text, "tvmlite_fastcall")
    assert ("alwaysinline" if count <= SMALL_MODULE else "noinline") in re.sub(
        r"#\d+", lambda m: text.split(f"attributes {m.group(0)} = ")[1].split("\n")[0], body
    ).split("{")[0]
    for k in range(count):
        stub = defined(text, f"tvmlite_fastcall_f{k}")
        assert len(re.findall(r"^\S+:$", stub, re.M)) == 1  # no loop, no branch
        assert f'@"tvmlite_fastcall_f{k}.record"' in stub


def test_every_function_of_a_large_module_is_served() -> None:
    ex = tvmlite.build(tvmlite.parse(module(SMALL_MODULE + 3)), cache=False)
    a = np.arange(6, dtype="float32").reshape(2, 3)
    i = np.arange(4, dtype="int64")
    x, y = np.arange(3.0), np.full(3, 0.5)
    for k in range(SMALL_MODULE + 3):
        f = ex[f"f{k}"]
        if k % 3 == 0:
            got = f(a, a + 1)
            np.testing.assert_array_equal(got, a + a + 1)
            assert got.flags.owndata is False and got.base is not None  # owns its block
        elif k % 3 == 1:
            np.testing.assert_array_equal(f(i), i * i)
            np.testing.assert_array_equal(f(i.astype("longlong")), i * i)  # the other int64
        else:
            s, d = f(x, y)
            np.testing.assert_array_equal(s, x + y)
            np.testing.assert_array_equal(d, x - y)
        assert f._fast is not None  # the wrapper served the call


def test_bad_arguments_are_named_by_parameter_in_a_large_module() -> None:
    ex = tvmlite.build(tvmlite.parse(module(SMALL_MODULE + 3)), cache=False)
    a = np.zeros((2, 3), dtype="float32")
    f = ex[f"f{SMALL_MODULE + 2 - (SMALL_MODULE + 2) % 3}"]  # template 0, past the small count
    with pytest.raises(tvmlite.TVMLiteError, match="parameter 'y': expected dtype float32"):
        f(a, a.astype("float64"))
    with pytest.raises(tvmlite.TVMLiteError, match="parameter 'y'"):
        f(a, np.zeros((3, 2), dtype="float32"))
    with pytest.raises(tvmlite.TVMLiteError, match="parameter 'x'"):
        f(np.zeros(6, dtype="float32"), a)
    with pytest.raises(tvmlite.TVMLiteError):
        f(a)
    with pytest.raises(tvmlite.TVMLiteError, match="parameter 'y': expected a compact"):
        f(a, np.ones((2, 6), dtype="float32")[:, ::2])  # a strided view: the Python path
    np.testing.assert_array_equal(f(a + 1, a), a + 1)  # and the wrapper serves again
    assert f._fast is not None


@pytest.mark.parametrize("count", [3, SMALL_MODULE + 3])
def test_torch_tensors_are_read_by_the_shared_body(count: int, monkeypatch) -> None:
    torch = pytest.importorskip("torch", reason="torch is not installed (an optional test extra)")
    ex = tvmlite.build(tvmlite.parse(module(count)), cache=False)
    a = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    last = ex[f"f{count - 1 - (count - 1) % 3}"]  # template 0, past the small count when large
    with pytest.raises(tvmlite.TVMLiteError, match="parameter 'y': expected dtype float32"):
        last(a, a.double())  # the first call serves the type; refused, the Python path names it
    with pytest.raises(tvmlite.TVMLiteError, match="parameter 'x': expected a compact"):
        last(torch.rand(3, 2).t(), a)
    # From now on every function of the module reads torch tensors without Python.
    monkeypatch.setattr(np, "from_dlpack", None)
    monkeypatch.setattr(dlpack, "imported", None)
    i = torch.arange(4, dtype=torch.int64)
    x, y = torch.arange(3.0, dtype=torch.float64), torch.full((3,), 0.5, dtype=torch.float64)
    for k in range(count):
        f = ex[f"f{k}"]
        if k % 3 == 0:
            np.testing.assert_array_equal(f(a, a + 1), (a + a + 1).numpy())
            np.testing.assert_array_equal(f(a.numpy(), a), (a + a).numpy())  # mixed in one call
        elif k % 3 == 1:
            np.testing.assert_array_equal(f(i), (i * i).numpy())
        else:
            s, d = f(x, y)
            np.testing.assert_array_equal(s, (x + y).numpy())
            np.testing.assert_array_equal(d, (x - y).numpy())
        assert f._fast is not None

"""Fast-call wrappers (`lowering/codegen/llvm_fastcall.py`): one body a module,
inlined into a stub a function in small modules, or one shared wrapper reading
each function's record (from its `self`) in large ones. Every function of a
large module is served by that wrapper, with its own parameters' checks,
results and messages, for NumPy arrays and for the tensors of the producer
type the module serves (torch, when installed), built or loaded from an
exported library."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tvmlite
from tvmlite.lowering.build import lower
from tvmlite.lowering.codegen.generate import GeneratedCode, generate_llvm
from tvmlite.lowering.codegen.llvm_fastcall import BODY
from tvmlite.lowering.codegen.llvm_host_module import SMALL_MODULE
from tvmlite.lowering.target import Target
from tvmlite.runtime.abi import FASTCALL_RECORDS, SHARED_FASTCALL

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


def generated(text: str) -> GeneratedCode:
    return generate_llvm(lower(tvmlite.parse(text), Target.of("llvm"), "minimal"))


def defined(ir_text: str, name: str) -> str:
    """The `define` line and body of function `name`."""
    found = re.search(r'define [^\n]*@"?' + re.escape(name) + r'"?\(.*?\n\}', ir_text, re.S)
    assert found is not None, name
    return found.group(0)


def test_small_modules_have_a_stub_a_function() -> None:
    code = generated(module(3))
    text = str(code.module)
    for k in range(3):
        stub = defined(text, f"tvmlite_fastcall_f{k}")
        assert len(re.findall(r"^\S+:$", stub, re.M)) == 1  # no loop, no branch
        assert f'@"tvmlite_fastcall_f{k}.record"' in stub
        assert code.manifest["functions"][f"f{k}"]["fastcall"] == f"tvmlite_fastcall_f{k}"
    assert FASTCALL_RECORDS not in code.module.globals
    assert SHARED_FASTCALL not in code.module.globals
    assert code.glue is None  # every entry is compiled with the module


def test_large_modules_have_one_wrapper_and_a_table_of_records() -> None:
    count = SMALL_MODULE + 3
    code = generated(module(count))
    text = str(code.module)
    assert not re.search(r"define [^\n]*@\"?tvmlite_fastcall_f", text)  # no stubs
    shared = defined(text, SHARED_FASTCALL)
    assert len(re.findall(r"^\S+:$", shared, re.M)) == 1  # room for the tensors, the body
    records = code.module.globals[FASTCALL_RECORDS]
    assert records.value_type.count == count and records.linkage == ""  # exported
    for k in range(count):
        info = code.manifest["functions"][f"f{k}"]
        assert "fastcall" not in info and info["fastcall_record"] == k
    # The entries (programs) again in the glue, which the JIT compiles apart.
    assert code.glue is not None
    glue = str(code.glue)
    for k in range(count):
        assert "optnone" in defined(glue, f"tvmlite_entry_f{k}").split("{")[0]
        assert f'@"tvmlite_entry_f{k}.program" = external' in glue


@pytest.mark.parametrize("loaded", [False, True])
def test_every_function_of_a_large_module_is_served(loaded: bool, tmp_path) -> None:
    ex = tvmlite.build(tvmlite.parse(module(SMALL_MODULE + 3)), cache=False)
    text = ex.image.llvm_ir()
    assert not re.search(rf'define [^\n]*@"?{re.escape(BODY)}"?\(', text)  # inlined
    assert re.search(r"define i32 @tvmlite_entry_f0\(", text)  # whole, though the glue's ran
    if loaded:  # an exported library: the same wrapper and records, prefixed
        ex.export_library(tmp_path / "many.so")
        ex = tvmlite.load_module(tmp_path / "many.so")
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
        assert f._fast is not None and f._fast_record  # the shared wrapper served the call


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


@pytest.mark.parametrize("name", ["fastcall", "fastcall_records"])
def test_a_prim_function_named_as_the_shared_wrapper_is_refused(name: str) -> None:
    prim = (
        "    @T.prim_func\n"
        f'    def {name}(a: T.Buffer((4,), "float32")):\n'
        "        for i in range(4):\n"
        "            a[i] = T.float32(0)\n"
    )
    text = (
        module(SMALL_MODULE + 1).replace(
            "from tvm.script import relax as R\n",
            "from tvm.script import relax as R\n# from tvm.script import tir as T\n",
        )
        + "\n"
        + prim
    )
    with pytest.raises(tvmlite.TVMLiteError, match=f"symbol tvmlite_{name} is the fast-call"):
        generated(text)


def test_a_large_module_calls_its_own_functions_by_their_entries() -> None:
    caller = (
        '    @R.function\n    def main(x: R.Tensor((2, 3), "float32"))'
        ' -> R.Tensor((2, 3), "float32"):\n        y = Module.f0(x, x)\n        return y\n'
    )
    ex = tvmlite.build(tvmlite.parse(module(SMALL_MODULE + 3) + "\n" + caller), cache=False)
    a = np.arange(6, dtype="float32").reshape(2, 3)
    np.testing.assert_array_equal(ex["main"](a), a + a)  # main's code calls f0's glue entry
    np.testing.assert_array_equal(ex["main"].call_python(a), a + a)  # and so does ctypes
    np.testing.assert_array_equal(ex["f0"].call_python(a, a + 1), a + a + 1)


def test_a_build_prints_no_llvm_remark(capfd):
    """The wrapper asks LLVM to unroll only loops whose bounds fold to constants: a
    loop it cannot unroll would make LLVM print `warning: ... loop not unrolled` on
    the process's stderr (a failure path once did, with three results)."""
    three = (
        HEADER + "@I.ir_module\nclass Module:\n    @R.function\n"
        '    def main(x: R.Tensor((3,), "float32")) -> R.Tuple(R.Tensor((3,), "float32"), '
        'R.Tensor((3,), "float32"), R.Tensor((3,), "float32")):\n'
        "        a = R.add(x, x)\n        b = R.multiply(x, x)\n        c = R.subtract(x, x)\n"
        "        return (a, b, c)\n"
    )
    ex = tvmlite.build(tvmlite.parse(three), cache=False)
    x = np.arange(3, dtype="float32")
    for got, want in zip(ex["main"](x), (x + x, x * x, x - x), strict=True):
        np.testing.assert_array_equal(got, want)
    assert capfd.readouterr().err == ""

"""Forms of Relax that TVM's own lowering writes and its tests run: explicit memory
(R.builtin.alloc_tensor, R.memory.alloc_storage / alloc_tensor / kill_*), a prim
function called directly with its outputs, `R.call_tir` of a var holding a tuple, and
the value builtins of TVM's VM called by name. Each builds and computes what NumPy
does."""

from __future__ import annotations

import numpy as np

import tvmlite

HEAD = """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.script import relax as R

@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def double(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for i in range(8):
            with T.sblock("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi] * T.float32(2.0)
"""


def _run(body: str, *args: np.ndarray) -> object:
    return tvmlite.build(tvmlite.parse(HEAD + body))["main"](*args)


def test_explicit_memory_and_a_direct_kernel_call() -> None:
    x = np.random.default_rng(0).standard_normal(8).astype("float32")
    got = _run(
        """
    @R.function(pure=False)
    def main(x: R.Tensor((8,), dtype="float32")) -> R.Tensor((8,), dtype="float32"):
        cls = Module
        storage: R.Object = R.memory.alloc_storage(R.shape([32]), 0, R.str("global"), R.dtype("float32"))
        a: R.Tensor((8,), dtype="float32") = R.memory.alloc_tensor(storage, 0, R.shape([8]), R.dtype("float32"))
        cls.double(x, a)
        b: R.Tensor((8,), dtype="float32") = R.builtin.alloc_tensor(R.shape([8]), R.dtype("float32"), 0)
        cls.double(a, b)
        R.memory.kill_tensor(a)
        R.memory.kill_storage(storage)
        return b
""",
        x,
    )
    np.testing.assert_allclose(got, 4 * x, rtol=1e-6)


def test_call_tir_of_a_tuple_var() -> None:
    x = np.arange(8, dtype="float32")
    got = _run(
        """
    @R.function
    def main(args: R.Tuple(R.Tensor((8,), dtype="float32"))) -> R.Tensor((8,), dtype="float32"):
        cls = Module
        gv = R.call_tir(cls.double, args, out_ty=R.Tensor((8,), dtype="float32"))
        return gv
""",
        (x,),
    )
    np.testing.assert_allclose(got, 2 * x)


def test_vm_value_builtins() -> None:
    x = np.arange(8, dtype="float32").reshape(2, 4)
    got = _run(
        """
    @R.function(pure=False)
    def main(x: R.Tensor((2, 4), dtype="float32")) -> R.Tensor((8,), dtype="float32"):
        y = R.call_packed("vm.builtin.reshape", x, R.shape([8]), ty_args=(R.Tensor((8,), dtype="float32"),))
        z = R.call_packed("vm.builtin.copy", y, ty_args=(R.Tensor((8,), dtype="float32"),))
        return z
""",
        x,
    )
    np.testing.assert_array_equal(got, x.reshape(8))

"""Host code at scale and in its three forms: one optimized function of code (a
small function in a small module), a program (a static function among many, or
a large one), code with runs of steps in chunks (the rest). Graph functions of
hundreds of bindings compute what NumPy computes, and every form fails with the
same messages."""

from __future__ import annotations

import ctypes
import re

import numpy as np
import pytest

import tvmlite
from tvmlite.lowering.build import lower
from tvmlite.lowering.codegen.generate import generate_llvm
from tvmlite.lowering.codegen.llvm_host import SMALL_FUNCTION
from tvmlite.lowering.codegen.llvm_host_chunks import CHUNK_BLOCKS
from tvmlite.lowering.codegen.llvm_host_module import SMALL_MODULE
from tvmlite.lowering.codegen.memory_plan import PLAN_KEY
from tvmlite.lowering.target import Target
from tvmlite.lowering.transform import PassContext
from tvmlite.runtime.graph_call import ENTRY_SIGNATURE

HEADER = "# from tvm.script import ir as I\n# from tvm.script import relax as R\n\n"
F32 = '"float32"'


def chain(n: int, dims: str, out: str) -> tuple[str, list[np.ndarray], np.ndarray]:
    """`main(x, w)` of `n` bindings cycling through add, multiply by a constant,
    matmul by the parameter `w`, relu, reshape there and back, and tanh; `dims`
    is the text of x's shape ("4, 8" or '"n", 8'). Returns (text, inputs, want)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 8)).astype("float32")
    w = (np.eye(8)[rng.permutation(8)] * 0.5).astype("float32")
    t = f"R.Tensor(({dims}), {F32})"
    lines, value, name = [], x, "x"
    steps = [
        ("R.add({0}, {0})", lambda a: a + a),
        (f"R.multiply({{0}}, R.const(0.5, {F32}))", lambda a: a * np.float32(0.5)),
        (f"R.matmul({{0}}, w, out_dtype={F32})", lambda a: a @ w),
        ("R.nn.relu({0})", lambda a: np.maximum(a, 0)),
        ("R.reshape({0}, R.shape([32]))", lambda a: a.reshape(32)),
        ("R.reshape({0}, R.shape([4, 8]))", lambda a: a.reshape(4, 8)),
        ("R.tanh({0})", np.tanh),
    ]
    for i in range(n):
        text, fn = steps[i % len(steps)]
        if "R.reshape" in text and dims != "4, 8":
            text, fn = steps[0]  # a symbolic batch has no fixed flat size
        value = fn(value)
        shape = "32," if value.ndim == 1 else dims
        lines.append(f"v{i}: R.Tensor(({shape}), {F32}) = {text.format(name)}")
        name = f"v{i}"
    if value.ndim == 1:
        lines.append(f"v{n}: {t} = R.reshape({name}, R.shape([4, 8]))")
        value, name = value.reshape(4, 8), f"v{n}"
    body = "\n".join(f"            {line}" for line in lines)
    text = (
        HEADER + "@I.ir_module\nclass Module:\n    @R.function\n"
        f"    def main(x: {t}, w: R.Tensor((8, 8), {F32})) -> {out}:\n"
        f"        with R.dataflow():\n{body}\n            R.output({name})\n"
        f"        return {'(' + name + ', x)' if out.startswith('R.Tuple') else name}\n"
    )
    return text, [x, w], value


def among_many(text: str) -> str:
    """`text` (a module) with enough small functions added that it is not small."""
    filler = (
        f"    @R.function\n    def filler{{0}}(a: R.Tensor((2,), {F32})) -> R.Tensor((2,), {F32}):\n"
        "        b = R.add(a, a)\n        return b\n"
    )
    return text.rstrip("\n") + "\n\n" + "\n".join(filler.format(k) for k in range(SMALL_MODULE))


FORMS = {"code": lambda text: text, "program": among_many}


def host_ir(text: str, pipeline: str = "minimal") -> str:
    """The LLVM IR of a module's kernels and host code, before optimization."""
    return str(generate_llvm(lower(tvmlite.parse(text), Target.of("llvm"), pipeline)).module)


def is_program(text: str) -> bool:
    return 'call i32 @"tvmlite.run_program"' in host_ir(text)


def functions_of(ir_text: str, prefix: str) -> dict[str, str]:
    """The bodies of the LLVM functions whose names start with `prefix`."""
    name = r'@"?(' + re.escape(prefix) + r'[^"(\s]*)"?\('
    return dict(re.findall(r"define [^@]*" + name + r"[^{]*\{(.*?)\n\}", ir_text, re.S))


@pytest.mark.parametrize("pipeline", ["minimal", "default"])
def test_static_chain_of_hundreds_of_bindings(pipeline: str) -> None:
    text, inputs, want = chain(300, "4, 8", f"R.Tensor((4, 8), {F32})")
    got = tvmlite.build(tvmlite.parse(text), pipeline=pipeline, cache=False)["main"](*inputs)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_symbolic_chain_of_hundreds_of_bindings_runs_in_chunks() -> None:
    text, inputs, want = chain(300, '"n", 8', f'R.Tensor(("n", 8), {F32})')
    chunks = functions_of(host_ir(text), "tvmlite_entry_main.")
    assert len(chunks) > 1  # code, cut into chunks of bounded size
    for body in chunks.values():
        assert len(re.findall(r"^\S+:$", body, re.M)) <= CHUNK_BLOCKS + 16
    ex = tvmlite.build(tvmlite.parse(text), cache=False)
    np.testing.assert_allclose(ex["main"](*inputs), want, rtol=1e-5, atol=1e-6)
    x4 = np.repeat(inputs[0], 3, axis=0)  # another batch: the homed dims are the new ones
    np.testing.assert_allclose(
        ex["main"](x4, inputs[1]), np.repeat(want, 3, axis=0), rtol=1e-5, atol=1e-6
    )


def test_small_function_in_small_module_is_one_optimized_function() -> None:
    text, inputs, want = chain(SMALL_FUNCTION, "4, 8", f"R.Tensor((4, 8), {F32})")
    ex = tvmlite.build(tvmlite.parse(text), cache=False)
    optimized = functions_of(ex.llvm_ir(), "tvmlite_entry_main")
    assert list(optimized) == ["tvmlite_entry_main"]  # the chunk inlined
    body = optimized["tvmlite_entry_main"]
    assert "run_steps" not in body and "call ptr @tvmlite.alloc_slot" not in body  # inlined
    np.testing.assert_allclose(ex["main"](*inputs), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("among", [False, True])
def test_static_function_is_a_program_when_large_or_among_many(among: bool) -> None:
    n = 12 if among else SMALL_FUNCTION + 1
    text, inputs, want = chain(n, "4, 8", f"R.Tensor((4, 8), {F32})")
    text = among_many(text) if among else text
    entry = functions_of(host_ir(text), "tvmlite_entry_main")
    assert list(entry) == ["tvmlite_entry_main"]  # no chunk, no driver
    assert entry["tvmlite_entry_main"].count("call") == 1
    assert "tvmlite.run_program" in entry["tvmlite_entry_main"]
    got = tvmlite.build(tvmlite.parse(text), cache=False)["main"](*inputs)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("form", FORMS)
def test_results_are_owned_copies_of_parameters_and_constants(form: str) -> None:
    text = FORMS[form](
        HEADER + "@I.ir_module\nclass Module:\n    @R.function\n"
        f"    def main(x: R.Tensor((3,), {F32})) -> R.Tuple(R.Tensor((3,), {F32}), "
        f"R.Tensor((3,), {F32}), R.Tensor((3,), {F32}), R.Tensor((3,), {F32})):\n"
        "        y = R.add(x, x)\n"
        f"        return (y, y, x, R.const([1.0, 2.0, 3.0], {F32}))\n"
    )
    assert is_program(text) == (form == "program")
    x = np.array([1, 2, 3], "float32")
    y1, y2, x2, c = tvmlite.build(tvmlite.parse(text), cache=False)["main"](x)
    y1[0] = x2[0] = -7
    np.testing.assert_array_equal(y2, x + x)
    np.testing.assert_array_equal(x, [1, 2, 3])
    np.testing.assert_array_equal(c, [1, 2, 3])


def test_code_between_runs_keeps_program_order() -> None:
    """An `R.If` is code: the steps before it run first, those after it later."""
    text = among_many(
        HEADER + "@I.ir_module\nclass Module:\n    @R.function\n"
        f'    def main(c: R.Tensor((), "bool"), x: R.Tensor((4,), {F32})) -> R.Tensor((4,), {F32}):\n'
        "        a = R.add(x, x)\n"
        "        b = R.multiply(a, a)\n"
        "        if c:\n"
        "            d = R.add(b, a)\n"
        "        else:\n"
        "            d = R.subtract(b, a)\n"
        "        e = R.multiply(a, x)\n"
        "        g = R.add(d, e)\n"
        "        return g\n"
    )
    entry = functions_of(host_ir(text), "tvmlite_entry_main.")
    assert sum(body.count("tvmlite.run_steps") for body in entry.values()) >= 2
    ex = tvmlite.build(tvmlite.parse(text), cache=False)
    x = np.arange(4, dtype="float32")
    a, b = x + x, (x + x) ** 2
    np.testing.assert_array_equal(ex["main"](np.array(True), x), b + a + a * x)
    np.testing.assert_array_equal(ex["main"](np.array(False), x), b - a + a * x)


STATIC_ADD = HEADER + (
    "@I.ir_module\nclass Module:\n    @R.function\n"
    f"    def main(x: R.Tensor((4, 4), {F32}), y: R.Tensor((4, 4), {F32})) -> R.Tensor((4, 4), {F32}):\n"
    "        z = R.add(x, y)\n"
    "        return z\n"
)


def raw_call(
    ex: tvmlite.Executable, arrays: list[np.ndarray], outs: int, err_len: int
) -> tuple[int, bytes]:
    """Call the native entry of `main` directly: (status, the error buffer)."""
    from tvmlite.runtime import dlpack

    fn = ENTRY_SIGNATURE(ex["main"].address)
    tensors = (dlpack.DLTensor * max(1, len(arrays)))()
    keep: list = []
    for t, a in zip(tensors, arrays, strict=False):
        dlpack.fill_tensor(t, a, keep)
    size = ctypes.sizeof(dlpack.DLTensor)
    pointers = (ctypes.c_void_p * max(1, len(arrays)))(
        *(ctypes.addressof(tensors) + k * size for k in range(len(arrays)))
    )
    results = (ctypes.c_void_p * max(1, outs))()
    err = ctypes.create_string_buffer(b"#" * 64, 64)
    status = fn(pointers, len(arrays), results, outs, err, err_len)
    return status, err.raw


@pytest.mark.parametrize("form", FORMS)
def test_counts_are_checked_with_the_function_name(form: str) -> None:
    ex = tvmlite.build(tvmlite.parse(FORMS[form](STATIC_ADD)), cache=False)
    x = np.ones((4, 4), "float32")
    status, err = raw_call(ex, [x], 1, 64)
    assert status != 0
    assert err.split(b"\0")[0] == b"main: expected 2 arguments (x, y), got 1"
    status, err = raw_call(ex, [x, x], 2, 64)
    assert err.split(b"\0")[0] == b"main: returns 1 values, the caller made room for 2"


@pytest.mark.parametrize("form", FORMS)
def test_message_fits_a_small_buffer(form: str) -> None:
    ex = tvmlite.build(tvmlite.parse(FORMS[form](STATIC_ADD)), cache=False)
    x = np.ones((4, 4), "float32")
    status, err = raw_call(ex, [x, np.ones((3, 4), "float32")], 1, 10)
    assert status != 0
    assert err[:10] == b"main: par\0" and err[10:] == b"#" * 54  # cut, terminated, no overrun


@pytest.mark.parametrize(
    ("y", "message"),
    [
        (
            np.ones((3, 4), "float32"),
            r"^main: parameter 'y': expected shape \(4, 4\), got \(3, 4\)$",
        ),
        (np.ones((4, 4, 1), "float32"), r"^main: parameter 'y': expected 2 dimensions, got 3$"),
    ],
)
@pytest.mark.parametrize("form", FORMS)
def test_parameter_checks(form: str, y: np.ndarray, message: str) -> None:
    ex = tvmlite.build(tvmlite.parse(FORMS[form](STATIC_ADD)), cache=False)
    with pytest.raises(tvmlite.TVMLiteError, match=message):
        ex["main"](np.ones((4, 4), "float32"), y)


@pytest.mark.parametrize("planned", [False, True])
@pytest.mark.parametrize("form", FORMS)
def test_failed_allocation(form: str, planned: bool) -> None:
    """The dead output of `fill` is placed in the memory plan's arena (one
    allocation, which fails) or, the plan off, allocated alone. "minimal" keeps
    that dead binding (the default build's dead code elimination drops it)."""
    huge = 1 << 40
    text = HEADER.replace("relax as R\n", "relax as R\n# from tvm.script import tir as T\n") + (
        "@I.ir_module\nclass Module:\n"
        "    @T.prim_func(private=True)\n"
        f'    def fill(a: T.Buffer((4,), "float32"), b: T.Buffer(({huge},), "float32")):\n'
        '        T.func_attr({"tir.noalias": True})\n'
        "        b[0] = a[0]\n\n"
        "    @R.function\n"
        f"    def main(x: R.Tensor((4,), {F32})) -> R.Tensor((4,), {F32}):\n"
        "        cls = Module\n"
        f"        y = R.call_tir(cls.fill, (x,), out_sinfo=R.Tensor(({huge},), {F32}))\n"
        "        z = R.add(x, x)\n"
        "        return z\n"
    )
    text = FORMS[form](text)
    assert is_program(text) == (form == "program")
    with PassContext(config={PLAN_KEY: planned}):
        ex = tvmlite.build(tvmlite.parse(text), pipeline="minimal", cache=False)
    what = "the intermediates" if planned else "output of fill"
    shape, dtype = (r"\(\d+,\)", "uint8") if planned else (rf"\({huge},\)", "float32")
    with pytest.raises(
        tvmlite.TVMLiteError,
        match=rf"^main: cannot allocate {what} of shape {shape} and dtype {dtype}: out of memory",
    ):
        ex["main"](np.ones(4, "float32"))


def test_checks_keep_their_order_when_steps_and_code_mix() -> None:
    """x's rank (a step) is checked before its dims are read (code), and w's
    rank (a step) before anything after it."""
    text, inputs, want = chain(14, '"n", 8', f'R.Tensor(("n", 8), {F32})')
    ex = tvmlite.build(tvmlite.parse(among_many(text)), cache=False)
    x, w = inputs
    with pytest.raises(
        tvmlite.TVMLiteError, match=r"^main: parameter 'x': expected 2 dimensions, got 1$"
    ):
        ex["main"](x.reshape(32), w.reshape(64))
    with pytest.raises(
        tvmlite.TVMLiteError, match=r"^main: parameter 'w': expected 2 dimensions, got 1$"
    ):
        ex["main"](x, w.reshape(64))
    with pytest.raises(
        tvmlite.TVMLiteError, match=r"^main: parameter 'w': expected shape \(8, 8\), got \(4, 8\)$"
    ):
        ex["main"](x, w[:4])
    np.testing.assert_allclose(ex["main"](x, w), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("form", FORMS)
def test_checked_kernel_reports_its_index_in_every_form(form: str) -> None:
    """A checked build's kernel writes the failing index into a message buffer:
    steps pass one through the kernel's trampoline, code its own."""
    text = HEADER.replace("relax as R\n", "relax as R\n# from tvm.script import tir as T\n") + (
        "@I.ir_module\nclass Module:\n"
        "    @T.prim_func(private=True)\n"
        '    def shift(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):\n'
        '        T.func_attr({"tir.noalias": True})\n'
        "        for i in range(16):\n"
        '            with T.block("B"):\n'
        "                vi = T.axis.spatial(16, i)\n"
        # Always true: keeps the access from CheckStaticBounds, so the run-time check speaks.
        "                T.where(i < 16)\n"
        "                B[vi] = A[vi + 4]\n\n"
        "    @R.function\n"
        f"    def main(x: R.Tensor((16,), {F32})) -> R.Tensor((16,), {F32}):\n"
        "        cls = Module\n"
        f"        y = R.call_tir(cls.shift, (x,), out_sinfo=R.Tensor((16,), {F32}))\n"
        "        z = R.add(y, x)\n"
        "        return z\n"
    )
    text = FORMS[form](text)
    with PassContext(config={"tir.instrument_bound_checkers": True}):
        assert is_program(text) == (form == "program")
    ex = tvmlite.build(tvmlite.parse(text), checked=True, cache=False)
    message = (
        r"^main: R.call_tir of 'shift': load from buffer A out of bounds: "
        r"index vi \+ 4 = 16 is outside \[0, 16\) \(status 1\)$"
    )
    with pytest.raises(tvmlite.TVMLiteError, match=message):
        ex["main"](np.ones(16, "float32"))


def test_alike_functions_share_their_tables_and_keep_their_names() -> None:
    text, inputs, want = chain(3, "4, 8", f"R.Tensor((4, 8), {F32})")
    text = among_many(text)
    steps = re.findall(r'^@"([^"]+\.run\d+\.steps)" = private', host_ir(text), re.M)
    # main's table, and one for all the fillers (the first one's)
    assert steps == ["tvmlite_entry_main.run0.steps", "tvmlite_entry_filler0.run0.steps"]
    ex = tvmlite.build(tvmlite.parse(text), cache=False)
    np.testing.assert_allclose(ex["main"](*inputs), want, rtol=1e-5, atol=1e-6)
    last = f"filler{SMALL_MODULE - 1}"
    a = np.arange(2, dtype="float32")
    np.testing.assert_array_equal(ex[last](a), a + a)
    with pytest.raises(tvmlite.TVMLiteError, match=f"^{last}: "):
        ex[last](np.zeros(3, dtype="float32"))


def sum_of(n: int) -> str:
    """`main(x0, ..., x{n-1})`: their sum, one add a binding."""
    t = f"R.Tensor((2,), {F32})"
    params = ", ".join(f"x{k}: {t}" for k in range(n))
    lines = ["s1 = R.add(x0, x1)"] + [f"s{k} = R.add(s{k - 1}, x{k})" for k in range(2, n)]
    body = "".join(f"        {line}\n" for line in lines)
    return (
        f"{HEADER}@I.ir_module\nclass Module:\n    @R.function\n"
        f"    def main({params}) -> {t}:\n{body}        return s{n - 1}\n"
    )


def test_fast_call_of_many_parameters() -> None:
    # The wrapper's body loops over a table of the parameters (tests/lowering/test_fastcall.py)
    f = tvmlite.build(tvmlite.parse(sum_of(64)), cache=False)["main"]
    xs = [np.full(2, k, dtype="float32") for k in range(64)]
    np.testing.assert_array_equal(f(*xs), np.full(2, sum(range(64)), dtype="float32"))
    assert f._fast is not None  # the wrapper served the call
    xs[63] = xs[63].astype("float64")  # the last parameter is checked too
    with pytest.raises(tvmlite.TVMLiteError, match="parameter 'x63': expected dtype float32"):
        f(*xs)

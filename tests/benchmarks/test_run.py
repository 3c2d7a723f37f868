"""benchmarks/run.py runs end to end (smallest workload, one round, no TVM), its
table parses and the output checks ran; the workloads and NumPy references it
relies on are consistent. No timing is asserted."""

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tvmlite

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
spec = importlib.util.spec_from_file_location("_workloads", BENCH / "_workloads.py")
workloads = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(workloads)

TIME = re.compile(r"^(\d[\d.e+-]*) \((\d[\d.e+-]*)\)$")  # "median (min)"


def tables(text: str) -> list[list[dict[str, str]]]:
    """The Markdown tables of the output, each a list of {column: cell}."""
    found, rows = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            rows.append([cell.strip() for cell in line.strip("|").split("|")])
        elif rows:
            head, rule, *body = rows
            assert set("".join(rule)) == {"-"}, rule
            assert all(len(row) == len(head) for row in body)
            found.append([dict(zip(head, row, strict=True)) for row in body])
            rows = []
    return found


def test_run_smallest_workload(tmp_path):
    out = tmp_path / "out.json"
    args = ["--only", "add_4x4", "--rounds", "1", "--compile-repeat", "1", "--no-tvm"]
    done = subprocess.run(
        [sys.executable, str(BENCH / "run.py"), *args, "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "TVM: left out (--no-tvm)" in done.stdout
    assert re.search(r"^peak: \d+ GFLOP/s per core", done.stdout, re.M)
    speed, build, checks = tables(done.stdout)
    (row,) = speed
    assert row["workload"] == "add_4x4"
    for column in ("NumPy ms", "tvmlite ms"):
        median, best = map(float, TIME.match(row[column]).groups())
        assert 0 < best <= median
    assert float(row["tvmlite / NumPy"].rstrip("x")) > 0
    assert row["target"] == "<= 1.0x NumPy" and row["met"] in ("pass", "miss")
    assert float(row["tvmlite speed"].removesuffix(" GB/s")) > 0
    (row,) = build
    assert TIME.match(row["tvmlite build ms"]) and row["TVM build ms"] == "-"
    (row,) = checks
    assert float(row["tvmlite error"]) <= float(row["tolerance"])

    result = json.loads(out.read_text())
    (w,) = result["workloads"]
    assert w["failures"] == {}
    assert set(w["times"]) == {"numpy-1t", "tvmlite"}  # no BLAS: NumPy runs once
    assert all(len(t["samples_ms"]) == 1 for t in w["times"].values())
    assert w["checks"]["relative_error"] == {"tvmlite": 0.0}  # an add is exact
    assert w["checks"]["tolerance"] == pytest.approx(np.sqrt(np.finfo(np.float32).eps))


def test_unknown_workload_is_refused():
    done = subprocess.run(
        [sys.executable, str(BENCH / "run.py"), "--only", "nope", "--no-tvm"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "unknown workload nope" in done.stderr and "matmul_256" in done.stderr


def test_check_flags_wrong_outputs():
    ref = np.linspace(-4, 4, 64, dtype=np.float32).reshape(8, 8)
    tol = workloads.tolerance(ref.dtype)
    assert workloads.relative_error(ref.copy(), ref) == 0.0
    close = ref + np.float32(4 * 1e-5)
    assert 0 < workloads.relative_error(close, ref) <= tol
    wrong = ref.copy()
    wrong[3, 5] += np.float32(0.01)
    assert workloads.relative_error(wrong, ref) > tol
    nan = ref.copy()
    nan[0, 0] = np.nan
    assert workloads.relative_error(nan, ref) == float("inf")
    assert workloads.relative_error(ref.T[:4], ref) == float("inf")
    assert workloads.relative_error(ref.astype(np.float64), ref) == float("inf")
    assert workloads.tolerance(np.dtype(np.int32)) == 0.0


def shape_dtype(sinfo) -> tuple[tuple[int, ...], str]:
    return tuple(d.value for d in sinfo.shape), sinfo.dtype


@pytest.mark.parametrize("w", workloads.load(), ids=lambda w: w.name)
def test_workload_matches_its_text(w):
    """Each workloads.json entry names a text whose `main` takes exactly its
    inputs, and its NumPy reference returns what `main` returns."""
    main = tvmlite.parse(w.text)["main"]
    assert [shape_dtype(p.struct_info) for p in main.params] == list(w.inputs)
    out = w.reference()(*(np.zeros(shape, dtype) for shape, dtype in w.inputs))
    assert (out.shape, str(out.dtype)) == shape_dtype(main.ret_struct_info)


def test_conv2d_reference_is_a_direct_convolution():
    """The im2col reference against the definition, on a small strided, padded case."""
    w = workloads.Workload("conv2d_t", "stride 2 pad 1", "-", (), "", True, None, 0)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 3, 7, 6)).astype(np.float32)
    k = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1))).astype(np.float64)
    want = np.zeros((1, 4, 4, 3))
    for o in range(4):
        for i in range(4):
            for j in range(3):
                want[0, o, i, j] = np.sum(xp[0, :, 2 * i : 2 * i + 3, 2 * j : 2 * j + 3] * k[o])
    np.testing.assert_allclose(w.reference()(x, k), want, rtol=1e-5, atol=1e-5)


def test_gelu_reference_is_pytorchs_tanh_gelu():
    """The float32 reference against the formula in float64."""
    w = workloads.by_name("gelu_mul_4M")
    rng = np.random.default_rng(2)
    x, g = (rng.standard_normal(1000).astype(np.float32) * 3 for _ in range(2))
    x64, g64 = x.astype(np.float64), g.astype(np.float64)
    want = 0.5 * x64 * (1 + np.tanh(np.sqrt(2 / np.pi) * (x64 + 0.044715 * x64**3))) * g64
    np.testing.assert_allclose(w.reference()(x, g), want, rtol=1e-5, atol=1e-6)


# elementwise: a few float32 roundings; softmax: also its 30522-term sums, added
# in another order than NumPy's pairwise summation
@pytest.mark.parametrize(
    ("name", "tolerance"), [("gelu_mul_4M", 1e-6), ("softmax_128x30522", 2e-5)]
)
def test_transcendental_workload_numerics(name, tolerance):
    """tvmlite's default build of the workload against its NumPy reference, as
    run.py checks it before timing (but closer than its sqrt(eps))."""
    w = workloads.by_name(name)
    inputs = w.make_inputs()
    got = tvmlite.build(tvmlite.parse(w.text))["main"](*inputs)
    assert workloads.relative_error(np.asarray(got), w.reference()(*inputs)) < tolerance

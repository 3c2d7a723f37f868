"""benchmarks/odd_shapes.py runs end to end on one small odd shape (one round):
its output check passed, and its line has the ratios. No timing is asserted."""

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def test_odd_shapes_runs_and_checks_outputs():
    args = ["--only", "matmul_127x511x300", "--no-random", "--rounds", "1", "--min-ms", "1"]
    done = subprocess.run(
        [sys.executable, str(BENCH / "odd_shapes.py"), *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (line,) = [x for x in done.stdout.splitlines() if x.startswith("matmul_127x511x300")]
    fields = line.split()
    assert fields[1] == "127x511x300" and fields[-2] == "128x512x320"
    assert "WRONG" not in done.stdout

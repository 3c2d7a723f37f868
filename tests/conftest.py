"""Shared test configuration: hypothesis profiles, the golden-file flag, and a
compile cache that is off and never the user's (tests that want it turn it on)."""

import os
import tempfile

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    max_examples=100,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("long", deadline=None, max_examples=5000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_addoption(parser):
    parser.addoption(
        "--update-golden",
        action="store_true",
        help="rewrite golden .tvms files with what tvmlite prints (only for files tvmlite owns)",
    )


@pytest.fixture(autouse=True, scope="session")
def _private_compile_cache():
    """No test reads or writes ~/.cache/tvmlite; the cache is off unless a test
    (tests/lowering/test_cache.py) enables it in its own directory."""
    with tempfile.TemporaryDirectory(prefix="tvmlite-test-cache-") as tmp:
        saved = {k: os.environ.get(k) for k in ("TVMLITE_CACHE_DIR", "TVMLITE_NO_CACHE")}
        os.environ["TVMLITE_CACHE_DIR"], os.environ["TVMLITE_NO_CACHE"] = tmp, "1"
        yield tmp
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@pytest.fixture(autouse=True, scope="session")
def _verify_between_passes():
    """Every pass any test runs is followed by the TIR and Relax verifiers (a
    `PassContext(verify=True)` around the session: contexts entered inside leave
    `verify` at None and inherit it), so a pass that leaves inconsistent IR fails
    the test that ran it, with the pass named in the error."""
    from tvmlite.transform import PassContext

    with PassContext(verify=True):
        yield


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """The compile cache on, in a directory of this test's own."""
    monkeypatch.setenv("TVMLITE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TVMLITE_NO_CACHE", raising=False)
    return tmp_path / "cache"


PLANTED_SOURCE = r"""
#include <stdio.h>
#include <stdlib.h>
__attribute__((constructor)) static void planted(void) {
  const char* marker = getenv("TVMLITE_TEST_MARKER");
  if (marker) { FILE* f = fopen(marker, "w"); if (f) fclose(f); }
}
int tvmlite_entry_main(void) { return 0; }
"""


@pytest.fixture
def planted_library(tmp_path, monkeypatch):
    """make(manifest) -> (path, marker): a shared library whose constructor creates
    `marker` when it runs, defining `tvmlite_entry_main` and, unless `manifest`
    is None, a `tvmlite_manifest` holding that text. `marker.exists()` tells
    whether anything loaded (ran) the library."""
    import json
    import subprocess

    from tvmlite.lowering.codegen.link import find_compiler

    marker = tmp_path / "constructor-ran"
    monkeypatch.setenv("TVMLITE_TEST_MARKER", str(marker))

    def make(manifest: str | None, name: str = "planted.so"):
        source = PLANTED_SOURCE
        if manifest is not None:
            source += f"const char tvmlite_manifest[] = {json.dumps(manifest)};\n"
        c_file, lib = tmp_path / f"{name}.c", tmp_path / name
        c_file.write_text(source)
        cmd = [*find_compiler(), "-shared", "-fPIC", "-o", str(lib), str(c_file)]
        subprocess.run(cmd, check=True, capture_output=True)
        return lib, marker

    return make

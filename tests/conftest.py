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

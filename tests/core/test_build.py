"""The build: OpenMP when available, and a working serial core (checked once in CI)."""

import os

import pytest

import tripletsearch as ts
from tripletsearch import _core


def test_openmp_matches_build():
    if os.environ.get("TRIPLETSEARCH_EXPECT_SERIAL"):
        assert not ts.openmp_enabled()
        assert _core.max_threads() == 1
    else:
        assert _core.max_threads() >= 1


@pytest.mark.once  # the whole demo (22 s under the sanitizers): each of its steps has its own test
def test_cli_demo_runs(capsys):
    from tripletsearch.cli import main

    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "Theorem 2.1" in out and "GammaCKL(gamma=3.0)" in out
    assert main(["info"]) == 0

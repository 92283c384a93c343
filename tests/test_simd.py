"""The SIMD dispatch: one ISA chosen per process, the AVX2 and portable kernels agree."""

import os
import subprocess
import sys

import numpy as np
import pytest

import tripletsearch as ts
from tripletsearch import _core


@pytest.fixture
def isa():
    """Selects an ISA for one test and restores the detected one afterwards."""
    before = _core.simd_isa()
    yield _core.set_simd_isa
    _core.set_simd_isa(before)


def session(X, n_choices, queries=6):
    s = ts.DiscreteSearch(X, n_choices=n_choices, random_state=3, n_jobs=2)
    shown = []
    for _ in range(queries):
        q = s.ask()
        shown.append(q.tolist())
        s.tell(int(q[-1]))
    return shown, s.posterior, s._searcher.mean, s._searcher.cov


@pytest.mark.parametrize("n_choices", [2, 4])
def test_avx2_and_portable_kernels_agree(isa, n_choices):
    if not isa("avx2"):
        pytest.skip("this CPU or build has no AVX2")
    X = np.random.default_rng(5).uniform(-1, 1, size=(3000, 7))
    avx = session(X, n_choices)
    assert isa("portable") and _core.simd_isa() == "portable"
    port = session(X, n_choices)
    # FMA rounds differently: the same queries, posteriors equal to rounding
    assert avx[0] == port[0]
    np.testing.assert_allclose(avx[1], port[1], rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(avx[2], port[2], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(avx[3], port[3], rtol=1e-8, atol=1e-12)


def test_environment_forces_the_portable_kernels():
    out = subprocess.run(
        [sys.executable, "-c", "from tripletsearch import _core; print(_core.simd_isa())"],
        capture_output=True,
        text=True,
        env={**os.environ, "TRIPLETSEARCH_SIMD": "portable"},
    )
    assert out.stdout.strip() == "portable", out.stderr


def test_unknown_isa_is_rejected():
    with pytest.raises(ValueError, match="isa: expected 'avx2' or 'portable'"):
        _core.set_simd_isa("sse9")

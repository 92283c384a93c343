"""The SIMD dispatch: one ISA chosen per process, the AVX2 and portable kernels agree."""

import os
import re
import subprocess
import sys
from pathlib import Path

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


def session(X, n_choices, queries=6, lapse=0.0):
    s = ts.DiscreteSearch(X, n_choices=n_choices, lapse=lapse, random_state=3, n_jobs=2)
    shown = []
    for _ in range(queries):
        q = s.ask()
        shown.append(q.tolist())
        s.tell(int(q[-1]))
    return shown, s.posterior, s._searcher.mean, s._searcher.cov


@pytest.mark.parametrize("n_choices, lapse", [(2, 0.0), (4, 0.0), (5, "auto")])
def test_avx2_and_portable_kernels_agree(isa, n_choices, lapse):
    """gamma inferred (the default): pairs and tuples have kernels of their own."""
    if not isa("avx2"):
        pytest.skip("this CPU or build has no AVX2")
    X = np.random.default_rng(5).uniform(-1, 1, size=(3000, 7))
    avx = session(X, n_choices, lapse=lapse)
    assert isa("portable") and _core.simd_isa() == "portable"
    port = session(X, n_choices, lapse=lapse)
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


def simd_isa_in_child(**env):
    out = subprocess.run(
        [sys.executable, "-c", "from tripletsearch import _core; print(_core.simd_isa())"],
        capture_output=True,
        text=True,
        env={**{k: v for k, v in os.environ.items() if k != "TRIPLETSEARCH_SIMD"}, **env},
    )
    return out.stdout.strip(), out.stderr


def test_environment_reads_the_names_set_simd_isa_reads():
    """One parser: 'avx2' asks for the AVX2 kernels (the detected ISA when the CPU lacks
    them); a name it does not know leaves the detected ISA, silently."""
    detected, err = simd_isa_in_child()
    assert detected in ("avx2", "portable"), err
    assert simd_isa_in_child(TRIPLETSEARCH_SIMD="avx2") == (detected, "")
    assert simd_isa_in_child(TRIPLETSEARCH_SIMD="sse9") == (detected, "")
    assert simd_isa_in_child(TRIPLETSEARCH_SIMD="Portable") == (detected, "")


def test_unknown_isa_is_rejected():
    with pytest.raises(ValueError, match="isa: expected 'avx2' or 'portable', got 'sse9'"):
        _core.set_simd_isa("sse9")
    with pytest.raises(ValueError, match="isa: expected 'avx2' or 'portable', got 'AVX2'"):
        _core.set_simd_isa("AVX2")  # the names are exact


# ------------------------------------------------------------------ the embedding's row kernels


def test_vector_exp_and_log_against_the_c_library(isa):
    if not isa("avx2"):
        pytest.skip("this CPU or build has no AVX2")
    rng = np.random.default_rng(0)
    x = np.concatenate([-rng.uniform(0, 708, 20000), rng.uniform(-1, 1, 20000), [0.0, -708.0]])
    y = _core.vector_math("exp", x)
    assert np.all(np.abs(y - np.exp(x)) <= 2 * np.spacing(np.exp(x)))
    # below -708.39 the result would be subnormal: 0 (within 2.3e-308 of the truth)
    assert np.all(_core.vector_math("exp", np.array([-709.0, -750.0, -1e4, -800.0])) == 0.0)
    s = np.concatenate(
        [
            rng.uniform(0, 1, 20000),
            rng.uniform(1, 2, 20000),
            np.geomspace(1e-320, 1e300, 4000),  # subnormals included
            [1.0, 2.0, 0.5, np.sqrt(2.0)],
        ]
    )
    y, ref = _core.vector_math("log", s), np.log(s)
    assert np.all(np.abs(y - ref) <= 4 * np.spacing(np.abs(ref)) + 1e-300)
    assert _core.vector_math("log", np.ones(4))[0] == 0.0
    # the edges: log 0 = -inf, NaN stays NaN in both
    edge = _core.vector_math("log", np.array([0.0, np.nan, 1.0, 0.5]))
    assert edge[0] == -np.inf and np.isnan(edge[1])
    assert np.isnan(_core.vector_math("exp", np.array([np.nan, 0.0, -1.0, 1.0]))[0])


def test_vector_float_exp_against_the_c_library(isa):
    """The float exp of the sampler's pair sums of lapse 0 (vmath_avx2.hpp's exp_neg_ps):
    within a float's unit in the last place for -87 <= x <= 0, at -87 below (a normal
    float)."""
    if not isa("avx2"):
        pytest.skip("this CPU or build has no AVX2")
    rng = np.random.default_rng(1)
    edges = [0.0, -0.0, -1e-30, -0.5, -1.0, -2.0, -86.9, -87.0]
    x = np.concatenate([edges, -rng.uniform(0, 87, 20000), -rng.uniform(0, 1, 20000)])
    x = x.astype(np.float32).astype(np.float64)  # the values the lanes see
    assert len(x) % 8 == 0  # no value left to the C library
    y = _core.vector_math("exp_neg_float", x)
    assert np.array_equal(y.astype(np.float32), y)  # float results
    ref = np.exp(x)
    assert np.all(np.abs(y - ref) <= np.spacing(ref.astype(np.float32)))
    assert y[0] == y[1] == 1.0
    below = _core.vector_math("exp_neg_float", np.array([-87.5, -88.0, -100.0, -1e4] * 2))
    at = _core.vector_math("exp_neg_float", np.full(8, -87.0))
    assert np.all(below == at[0]) and np.finfo(np.float32).tiny < at[0] < 1.7e-38


def test_vector_math_unknown_function_is_rejected():
    with pytest.raises(ValueError, match="name: expected 'exp', 'log' or 'exp_neg_float'"):
        _core.vector_math("sin", np.zeros(4))


def _rows_problem(n, m, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    X[1] = X[0]  # coincident items: distances at the floor
    T = rng.integers(0, n, size=(m, 3))
    T[:20, 1] = 0
    T[:20, 2] = 1  # rows whose two items coincide
    T = T[(T[:, 0] != T[:, 1]) & (T[:, 0] != T[:, 2])]
    return X, T


@pytest.mark.parametrize("gamma", [0.3, 2.0, 4.48, 7.0, 60.0])
@pytest.mark.parametrize("n, m", [(200, 3000), (20, 6000)], ids=["rows", "pairwise"])
def test_gamma_ckl_row_kernels_agree_across_isas(isa, gamma, n, m):
    """The gradient, the loss and the gamma derivative: AVX2 and portable to rounding."""
    if not isa("avx2"):
        pytest.skip("this CPU or build has no AVX2")
    X, T = _rows_problem(n, m, seed=int(10 * gamma))
    o = ts.GammaCKL(gamma)
    X0 = 0.3 * X
    opts = dict(
        optimizer="lbfgs",
        lr=1.0,
        batch_size=0,
        max_epochs=1,
        tol=0.0,
        n_iter_no_change=10,
        l2=0.0,
        learn_gamma=True,
    )
    from tripletsearch.embedding import native_train

    out = {}
    for name in ("avx2", "portable"):
        assert isa(name)
        out[name] = (
            o.grad(X, T, n_jobs=2),
            native_train(o, X0, T, opts, 0, 2),  # loss and d/d log gamma through one step
        )
    (ga, fa), (gp, fp) = out["avx2"], out["portable"]
    np.testing.assert_allclose(ga, gp, rtol=1e-12, atol=1e-13 * np.abs(gp).max())
    np.testing.assert_allclose(fa.loss, fp.loss, rtol=1e-13)
    np.testing.assert_allclose(fa.gamma, fp.gamma, rtol=1e-12)
    np.testing.assert_allclose(fa.embedding, fp.embedding, rtol=1e-11, atol=1e-13)


# ------------------------------------------------------------------ every ISA in simd/ only

CPP = Path(__file__).resolve().parents[2] / "cpp"
# intrinsics, their types and header, the ISA macros and target attributes
ISA_SPECIFIC = re.compile(
    r"\b(_mm\w*|__m(64|128|256|512)\w*|\w*intrin\.h|TS_SIMD_X86|TS_TARGET_\w+|__AVX\w*__|__SSE\w*__"
    r"|__FMA__)\b|target\s*\(\s*\""
)


def test_isa_specific_code_lives_in_simd_only():
    files = sorted(p for p in CPP.rglob("*") if p.suffix in (".hpp", ".cpp", ".h"))
    assert len(files) > 40 and any(p.parent.name == "simd" for p in files)
    assert any(ISA_SPECIFIC.search(p.read_text()) for p in files if p.parent.name == "simd")
    outside = [
        f"{p.relative_to(CPP)}:{no}: {line.strip()}"
        for p in files
        if p.parent.name != "simd"
        for no, line in enumerate(p.read_text().splitlines(), 1)
        if ISA_SPECIFIC.search(line)
    ]
    assert not outside, "\n".join(["outside cpp/include/tripletsearch/simd/:", *outside])

"""Large triplet sets: int32 and memory-mapped rows used as they are, checks in blocks."""

import tracemalloc
import warnings

import numpy as np
import pytest

import tripletsearch as ts
from tripletsearch import _validation
from tripletsearch.embedding import native_train, valid_rows


def _answers(n=60, d=3, m=20000, seed=0, dtype=np.int64):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    Q = rng.integers(0, n, size=(m, 3))
    Q = Q[valid_rows(Q)]
    return ts.GammaCKL(5.0).sample(X, Q, random_state=rng).astype(dtype)


def test_int32_rows_fit_exactly_as_int64_rows():
    T = _answers()
    kw = dict(dim=3, gamma=5.0, random_state=0, max_epochs=60)
    a = ts.Embedding(**kw).fit(T)
    b = ts.Embedding(**kw).fit(T.astype(np.int32))
    assert np.array_equal(a.embedding_, b.embedding_)
    assert np.array_equal(a.loss_curve_, b.loss_curve_)
    # gamma="auto" (held-out rows of the same dtype) and early stopping too
    for extra in (dict(gamma="auto"), dict(early_stopping=True)):
        a = ts.Embedding(**{**kw, **extra}).fit(T)
        b = ts.Embedding(**{**kw, **extra}).fit(T.astype(np.int32))
        assert np.array_equal(a.embedding_, b.embedding_) and a.gamma_ == b.gamma_


def test_native_trainer_takes_int32_rows_and_validation_rows():
    T = _answers(m=3000)
    X0 = 0.1 * np.random.default_rng(1).normal(size=(60, 3))
    opts = dict(
        optimizer="lbfgs",
        lr=1.0,
        batch_size=0,
        max_epochs=30,
        tol=0.0,
        n_iter_no_change=5,
        l2=0.0,
        learn_gamma=False,
    )
    a = native_train(ts.GammaCKL(5.0), X0, T[300:], opts, 0, 2, None, T[:300])
    b = native_train(
        ts.GammaCKL(5.0), X0, T[300:].astype(np.int32), opts, 0, 2, None, T[:300].astype(np.int32)
    )
    assert np.array_equal(a.embedding, b.embedding) and np.array_equal(a.val_loss, b.val_loss)
    # minibatches read int32 rows too
    adam = dict(opts, optimizer="adam", lr=0.05, batch_size=128, max_epochs=3)
    c = native_train(ts.GammaCKL(5.0), X0, T, adam, 7, 2)
    e = native_train(ts.GammaCKL(5.0), X0, T.astype(np.int32), adam, 7, 2)
    assert np.array_equal(c.embedding, e.embedding)


def test_memory_mapped_int32_rows_are_not_copied(tmp_path):
    T = _answers(n=200, m=1_500_000, seed=2, dtype=np.int32)
    path = tmp_path / "rows.npy"
    np.save(path, T)
    rows = np.load(path, mmap_mode="r")
    assert not rows.flags.writeable
    est = ts.Embedding(dim=3, gamma=5.0, random_state=0, max_epochs=3)
    tracemalloc.start()
    try:
        est.fit(rows)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # NumPy's allocations are traced: an int64 copy would be 36 MB, an int32 copy 18 MB;
    # the block checks take a few MB
    assert peak < 0.25 * rows.nbytes, peak
    ref = ts.Embedding(dim=3, gamma=5.0, random_state=0, max_epochs=3).fit(np.asarray(T))
    assert np.array_equal(est.embedding_, ref.embedding_)


def test_scan_rows_in_blocks(monkeypatch):
    monkeypatch.setattr(_validation, "_SCAN_ROWS", 7)  # many blocks, a ragged last one
    rng = np.random.default_rng(3)
    T = rng.integers(0, 9, size=(100, 3)).astype(np.int32)
    top, bad = _validation.scan_rows(T)
    assert top == int(T.max()) and bad == int((~valid_rows(T)).sum())
    T[57, 2] = -4
    with pytest.raises(ValueError, match=r"negative index -4 at position \(57, 2\)"):
        _validation.scan_rows(T)


def test_uninformative_int32_rows_are_dropped_as_int64_rows_are():
    T = _answers(m=2000)
    T[:5, 1] = T[:5, 0]  # rows naming the head
    kw = dict(dim=3, gamma=5.0, random_state=0, max_epochs=20)
    with pytest.warns(UserWarning, match="ignoring 5 of"):
        a = ts.Embedding(**kw).fit(T)
    with pytest.warns(UserWarning, match="ignoring 5 of"):
        b = ts.Embedding(**kw).fit(T.astype(np.int32))
    assert np.array_equal(a.embedding_, b.embedding_)


def test_other_integer_types_and_layouts_still_work():
    T = _answers(m=2000)
    kw = dict(dim=3, gamma=5.0, random_state=0, max_epochs=20)
    ref = ts.Embedding(**kw).fit(T).embedding_
    for rows in (T.astype(np.uint16), np.asfortranarray(T), T.astype(np.int32)[::1], T.tolist()):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert np.array_equal(ts.Embedding(**kw).fit(rows).embedding_, ref)
    with pytest.raises(TypeError, match="triplets"):
        ts.Embedding(**kw).fit(T.astype(np.float32))
    with pytest.raises(ValueError, match="triplets"):
        ts.Embedding(**kw).fit(T[:, :2].astype(np.int32))

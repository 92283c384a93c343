"""A catalogue's arrays written once and mapped by every worker: the mapped item store is the
one a searcher builds (the same queries and posteriors), its file is checked, and a server
over the shared arrays answers as one over its own copies."""

from __future__ import annotations

import numpy as np
import pytest

import tripletsearch as ts
from serve.helpers import in_process, interleaved, make_catalogue, parts_of
from tripletsearch import _core
from tripletsearch.serve import create_app
from tripletsearch.serve.catalogue.shared import attach_shared, share_catalogue
from tripletsearch.serve.config import ServeConfig


def test_a_mapped_store_searches_as_a_built_one(tmp_path):
    X = np.random.default_rng(3).normal(size=(1500, 4))
    built = _core.ItemStore(X, scaled=True, distinct=True)
    built.save(str(tmp_path / "s.store"))
    mapped = _core.ItemStore.map(str(tmp_path / "s.store"))
    assert mapped.mapped and not built.mapped
    assert (mapped.n, mapped.d, mapped.scale) == (built.n, built.d, built.scale)
    np.testing.assert_array_equal(mapped.center, built.center)
    a = ts.DiscreteSearch(X, gamma="auto", n_choices=4, random_state=5)
    b = ts.DiscreteSearch.over_store(X, mapped, gamma="auto", n_choices=4, random_state=5)
    for _ in range(8):
        q = a.ask()
        np.testing.assert_array_equal(q, b.ask())
        a.tell(int(q[2]))
        b.tell(int(q[2]))
    np.testing.assert_array_equal(a.posterior, b.posterior)


def test_store_files_that_are_not_stores_are_refused(tmp_path):
    X = np.random.default_rng(0).normal(size=(300, 3))
    good = tmp_path / "good.store"
    _core.ItemStore(X).save(str(good))
    data = good.read_bytes()
    cases = {
        "missing.store": None,
        "empty.store": b"",
        "other.store": b"not a store at all" * 400,
        "truncated.store": data[: len(data) - 100],
        "version.store": data[:8] + b"\x09" + data[9:],
    }
    for name, content in cases.items():
        path = tmp_path / name
        if content is not None:
            path.write_bytes(content)
        with pytest.raises(ValueError, match=f"store: .*{name}"):
            _core.ItemStore.map(str(path))
    with pytest.raises(ValueError, match="store: 300 items of 3 dimensions for X of shape"):
        ts.DiscreteSearch.over_store(X[:200], _core.ItemStore.map(str(good)))


def test_a_server_over_shared_arrays_answers_as_over_its_own(tmp_path):
    cat = make_catalogue(tmp_path / "cat", 2500)
    shared = share_catalogue(cat, tmp_path / "shared")
    again = share_catalogue(cat, tmp_path / "shared")  # reused, not rewritten
    assert again == shared
    attached = attach_shared(cat, shared)
    assert attached.fingerprint == cat.fingerprint and attached.store_file == shared["store"]
    assert isinstance(attached.embedding, np.memmap) or attached.embedding.base is not None
    own = create_app(
        cat, f"sqlite:///{tmp_path / 'a.db'}", config=ServeConfig(gamma="auto", random_state=0)
    )
    app = create_app(
        attached, f"sqlite:///{tmp_path / 'b.db'}", config=ServeConfig(gamma="auto", random_state=0)
    )
    with in_process(own) as a, in_process(app) as b:
        assert interleaved(a, cat, rounds=5) == interleaved(b, cat, rounds=5)
    mode = parts_of(app).service.modes["find"]
    assert mode._store is not None and mode._store.mapped
    other = make_catalogue(tmp_path / "other", 2000)
    with pytest.raises(ValueError, match="not this catalogue's embedding"):
        attach_shared(other, shared)


def test_a_server_over_shared_arrays_offers_the_same_guesses(tmp_path):
    """The template over the mapped store takes the guesses too (the library's server path
    takes none: find mode sets them before the prior is built)."""
    cat = make_catalogue(tmp_path / "cat", 500)
    attached = attach_shared(cat, share_catalogue(cat, tmp_path / "shared"))
    own = create_app(
        cat, f"sqlite:///{tmp_path / 'a.db'}", config=ServeConfig(random_state=0, guesses=4)
    )
    app = create_app(
        attached, f"sqlite:///{tmp_path / 'b.db'}", config=ServeConfig(random_state=0, guesses=4)
    )
    with in_process(own) as a, in_process(app) as b:
        replies = interleaved(b, cat, rounds=4)
        assert interleaved(a, cat, rounds=4) == replies
    screens = [r["screen"] if "screen" in r else r for r in replies]
    strips = [len(s["guesses"]) for s in screens if s and "items" in s]
    assert len(strips) > 10 and set(strips) == {4}
    assert parts_of(app).service.modes["find"]._store.mapped

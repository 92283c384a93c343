"""A collect on a catalogue so small that people see every query (issue 40): the queries
they have seen least often come next, never the one just shown (it was a random fallback,
the same query again and again), and a buffer is read past its 64 oldest queries."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from serve.helpers import answer_all, catalogue_folder, claiming, enrol, in_process
from tripletsearch.serve import create_app
from tripletsearch.serve.collect import load_collect
from tripletsearch.serve.collect.refitter import refit_once
from tripletsearch.serve.store import Store

COLLECT = dict(  # this collect file's keys over the shared ones
    samplers=["random", "active"], dim=1, max_queries=40, burn_in=3, seed=4, title=None
)


def forced_repeats(shown: list, distinct: int) -> int:
    """Consecutive screens that must show the same query: none unless there is one only."""
    return len(shown) - 1 if distinct == 1 else 0


@pytest.mark.parametrize("n", [3, 4, 5])
def test_a_small_catalogue_asks_the_least_seen_query_never_the_last_again(
    tmp_path, n, collect_file
):
    catalogue_folder(tmp_path, n=n)
    collect_file(tmp_path, **COLLECT)
    cfg = load_collect(tmp_path / "collect.toml")
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    store = Store(db)
    store.setup()
    refit_once(store, cfg)
    distinct = n * math.comb(n - 1, 2)  # a head and a pair of the others
    with in_process(create_app(cfg.catalogue, db, collect=cfg, setup=False)) as c:
        people = [enrol(c) for _ in range(4)]
        for pr, h in people:
            answer_all(c, pr["id"], h, body=claiming(900))
    for pr, _ in people:
        (session,) = store.participant_sessions(pr["id"])
        history = store.history(session.id)
        assert len(history) == cfg.max_queries
        shown = [(h["query"]["head"], frozenset(h["query"]["candidates"])) for h in history]
        again = sum(a == b for a, b in zip(shown, shown[1:]))
        assert again <= forced_repeats(shown, distinct), (n, shown)
        # every query seen before any is seen again, and as often as the others, within one
        times = Counter(shown)
        assert len(times) == min(distinct, len(shown))
        assert max(times.values()) - min(times.values()) <= 1, times
        assert all(
            len(set(shown[i : i + distinct])) == len(shown[i : i + distinct])
            for i in range(0, len(shown), distinct)
        )
        # the sampler's queries still come from its buffer (not all random fallbacks)
        kinds = Counter(h["query"]["kind"] for h in history)
        assert kinds["random"] > kinds["fallback"], kinds


def test_a_buffer_is_read_past_its_oldest_queries(tmp_path):
    """A participant who has seen the 64 oldest queries of the buffer (and more) gets the
    first one they have not seen, however deep (was: none, a random fallback)."""
    store = Store(f"sqlite:///{tmp_path / 's.sqlite'}")
    store.setup()
    seen = [[0, 1, 2]] * 150 + [[1, 0, 2]] * 40
    store.add_queries("k", "random", 1, [*seen, [2, 0, 1], [0, 1, 3]])
    refuse = {(0, frozenset({1, 2})), (1, frozenset({0, 2}))}
    got = store.take_query("k", "random", "P-1:5", refuse=refuse)
    assert got is not None and got[1:] == (2, [0, 1], 1)
    assert store.take_query("k", "random", "P-1:6", refuse=refuse)[1:3] == (0, [1, 3])
    assert store.take_query("k", "random", "P-1:7", refuse=refuse) is None
    assert store.free_queries("k", "random") == 190

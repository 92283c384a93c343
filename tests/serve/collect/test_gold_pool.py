"""Gold drawn per participant from a pool four times what one participant sees (check
rules 3): counted over pool sizes, and attacked as a script farm would, by enrolling again
and naming the queries that recur (issue 49, found item 1: 12 enrolments named 9 of 16
gold rows)."""

from __future__ import annotations

import math
from collections import Counter
from types import SimpleNamespace

import pytest

from serve.helpers import collect_toml, write_design
from tripletsearch.serve.collect import load_collect
from tripletsearch.serve.collect.screens import GOLD_POOL_RATIO, GOLD_SHOWN, gold_positions

ATTENTION, REPEATS = (10, 45), (30, 55)


def config(pool: int) -> SimpleNamespace:
    rows = tuple((i, i + 1, i + 2) for i in range(0, 3 * pool, 3))
    return SimpleNamespace(gold=rows, gold_pool=rows, attention=ATTENTION, repeats=REPEATS)


@pytest.mark.parametrize("pool", [4, 7, 15, 16, 40, 256])
def test_a_participant_meets_a_quarter_of_the_pool_at_most_each_row_alike(pool):
    cfg = config(pool)
    shown = min(GOLD_SHOWN, pool // GOLD_POOL_RATIO)
    seen: Counter = Counter()
    n = 2000
    for seed in range(n):
        d = gold_positions(cfg, seed, 60, rules=3)
        assert len(d) == shown and shown * GOLD_POOL_RATIO <= pool
        assert not set(d) & {*ATTENTION, *REPEATS} and set(d.values()) <= set(cfg.gold_pool)
        seen.update(d.values())
    # each row met by shown / pool of the participants (5 standard deviations)
    p = shown / pool
    sd = math.sqrt(n * p * (1 - p))
    assert all(abs(seen[r] - n * p) < 5 * sd for r in cfg.gold_pool)


def named(cfg: SimpleNamespace, attack: int, enrolments: int = 12, times: int = 3) -> set:
    """The rows a script names by enrolling ``enrolments`` times: those met ``times`` times."""
    met: Counter = Counter()
    for e in range(enrolments):
        met.update(set(gold_positions(cfg, 1000 * attack + e, 60, rules=3).values()))
    return {r for r, t in met.items() if t >= times}


def binomial_tail(k: int, n: int, p: float) -> float:
    """P(X >= k), X ~ Binomial(n, p)."""
    return sum(math.comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(k, n + 1))


@pytest.mark.parametrize("pool", [16, 64, 256])
def test_enrolling_again_names_the_gold_rows_only_as_the_pool_size_predicts(pool):
    """The attack of found item 1: 12 enrolments, a query met 3 times or more named gold.
    The rows it names are what the pool predicts (pool x P(Binomial(12, shown / pool) >= 3)):
    most of a 16-row pool (as found: rules 2 drew 4 of 16), a few of 64, none of 256 in
    nearly every attack. The ordinary queries never recur (random, per participant)."""
    cfg = config(pool)
    attacks = 300
    got = [len(named(cfg, a)) for a in range(attacks)]
    expected = pool * binomial_tail(3, 12, min(GOLD_SHOWN, pool // GOLD_POOL_RATIO) / pool)
    mean = sum(got) / attacks
    assert abs(mean - expected) < 0.15 * expected + 0.05, (mean, expected)
    if pool == 256:  # a drawn pool of 256: no row named in more than 4 attacks of 5
        assert expected < 0.25 and sum(g == 0 for g in got) > 0.8 * attacks
    if pool == 16:  # the file of the report: still named, as its size predicts
        assert mean > 8


def test_gold_drawn_from_the_embedding_is_a_pool_of_clear_rows(tmp_path):
    path = write_design(tmp_path, "c.toml", collect_toml(catalogue="colours", gold_drawn=64))
    cfg = load_collect(path)
    assert len(cfg.gold_pool) == 64 == len(set(cfg.gold_pool)) and cfg.gold == ()
    import numpy as np

    X = np.asarray(cfg.catalogue.embedding, dtype=np.float64)
    for h, a, b in cfg.gold_pool:  # the closer at most half as far as the farther
        assert np.linalg.norm(X[a] - X[h]) <= 0.5 * np.linalg.norm(X[b] - X[h])
    assert load_collect(path).gold_pool == cfg.gold_pool  # drawn from the file's seed


@pytest.mark.parametrize(
    "keys, says",
    [
        ({"gold_drawn": 3}, "gold_drawn: an integer from 4"),
        ({"gold_drawn": 16, "catalogue": "items"}, "no embedding"),
    ],
)
def test_a_bad_gold_drawn_names_the_key(tmp_path, keys, says):
    path = write_design(tmp_path, "c.toml", collect_toml(**{"catalogue": "colours", **keys}))
    with pytest.raises(ValueError, match=says):
        load_collect(path)


def test_a_gold_pool_may_hold_more_rows_than_a_participant_has_screens(tmp_path):
    rows = [[i, (i + 1) % 30, (i + 2) % 30] for i in range(30)] * 1
    rows += [[i, (i + 3) % 30, (i + 5) % 30] for i in range(30)]
    text = collect_toml(max_queries=44, attention=[3], repeats=[9], gold=rows)
    cfg = load_collect(write_design(tmp_path, "c.toml", text))
    assert len(cfg.gold_pool) == 60 > cfg.max_queries and cfg.check_problems() == []

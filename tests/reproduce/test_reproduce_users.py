"""``reproduce users``: its tables come from the simulators, at a small size."""

import numpy as np

import tripletsearch as ts
from tripletsearch.reproduce.users import _continuous_users, _database_users, _plot_users


def test_rows_are_the_simulations_and_auto_rescues_a_noisy_user(tmp_path):
    searchers = {
        "fixed 3": {"gamma": 3.0, "lapse": 0.0},
        "auto": {"gamma": "auto", "lapse": "auto"},
    }
    rows = _continuous_users(2, (1.0,), searchers, 12, 100, 0.0, 3, 2)  # (lost 7 vs 0)
    by = {r["searcher"]: r for r in rows}
    sim = ts.simulate_continuous(
        2, "auto", lapse="auto", oracle=ts.GammaCKL(1.0), n_runs=12, max_queries=100, random_state=3
    )
    e = sim.errors[:, -1]
    assert by["auto"]["median_error"] == np.median(e)
    assert by["auto"]["lost"] == np.mean(e > 0.1)
    assert by["auto"]["ci_low"] <= by["auto"]["median_error"] <= by["auto"]["ci_high"]
    # a user with gamma 1 and a searcher that assumes 3: runs are lost; "auto" loses fewer
    assert by["auto"]["lost"] < by["fixed 3"]["lost"]
    db = _database_users((3.0,), 300, 3, 40, 1, 2)
    assert [r["searcher"] for r in db] == ["told", "fixed 3", "auto"]
    told = ts.simulate_discrete(
        np.random.default_rng(1).uniform(-1, 1, size=(300, 3)),
        gamma=3.0,
        oracle=ts.GammaCKL(3.0),
        n_runs=40,
        random_state=1,
        opening="random",  # the reproduction's: each method its own
    )
    assert db[0]["mean_queries"] == told.mean
    assert _plot_users(rows + db, tmp_path / "users.png").stat().st_size > 10_000

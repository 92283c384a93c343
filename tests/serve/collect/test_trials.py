"""A collect of more than a triplet per screen (issue 52): ranked picks (``picks = r``) and
odd-one-out (``trial = "odd-one-out"``). The file's keys over every size it accepts; the
identity of collects of before; the screens and answers through the participants' API;
what an answer implies (closed forms); the refitter's trial samplers and their buffer;
checks and the agreement rule on every trial; the schema's upgrade of stored answers."""

from __future__ import annotations

import json
import math
import sqlite3

import numpy as np
import pytest

from serve.helpers import collect_toml, enrol, in_process, write_design
from tripletsearch.people import CollectPerson
from tripletsearch.serve import create_app
from tripletsearch.serve.collect import load_collect
from tripletsearch.serve.collect import trial as trials
from tripletsearch.serve.collect.file import MAX_K
from tripletsearch.serve.collect.quality import checks, sampler_answers, triplet_rows
from tripletsearch.serve.collect.refitter import refit_once
from tripletsearch.serve.experiment import ExperimentChanged, bind
from tripletsearch.serve.store import SCHEMA_VERSION, Store

INSTANT = {"fast_server_ms": 0}


def load(tmp_path, name="c.toml", **keys):
    return load_collect(write_design(tmp_path, name, collect_toml(**keys)))


# ---------------------------------------------------------------------- the file
def test_every_k_and_r_a_file_may_give_is_accepted_or_refused_by_one_rule(tmp_path):
    """Over every n_choices from 2 to MAX_K + 1 and picks from 0 to k: loaded exactly when
    1 <= r < k <= MAX_K, each refusal naming the key and its bounds (a catalogue too small
    for k: the next test)."""
    loaded = 0
    for k in range(2, MAX_K + 2):
        for r in range(0, k + 1):
            ok = 1 <= r < k <= MAX_K
            try:
                cfg = load(tmp_path, n_choices=k, picks=r, samplers=["active", "random"])
            except ValueError as e:
                assert not ok, (k, r, str(e))
                key = "picks" if k <= MAX_K else "n_choices"
                assert f"{key}: " in str(e) and f"(got {r if k <= MAX_K else k})" in str(e)
                continue
            assert ok and (cfg.k, cfg.picks, cfg.trial) == (k, r, "rank")
            assert cfg.screen.width == k + 1 and cfg.screen.is_choice == (r == 1)
            loaded += 1
    assert cfg.catalogue.n_items > MAX_K
    assert loaded == sum(k - 1 for k in range(2, MAX_K + 1))  # r from 1 to k - 1


@pytest.mark.parametrize(
    "keys, says",
    [
        ({"trial": "grid"}, "trial: one of"),
        ({"trial": "odd-one-out", "n_choices": 4}, "leave n_choices and picks out"),
        ({"trial": "odd-one-out", "n_choices": None, "picks": 2}, "leave n_choices and picks out"),
        ({"picks": 2, "n_choices": 8, "samplers": ["arr"]}, "'arr'"),
        ({"trial": "odd-one-out", "n_choices": None, "samplers": ["arr"]}, "'arr'"),
        ({"picks": 1.5, "n_choices": 4}, "picks: the candidates picked"),
        ({"n_choices": 8, "picks": 2, "gold": [[0, 1, 2]] * 4}, r"gold: a list of \[head, the"),
        (
            {"trial": "odd-one-out", "n_choices": None, "gold": [[0, 1, 2, 3]] * 4},
            r"\[a, b, the odd one\]",
        ),
    ],
)
def test_a_trial_the_catalogue_or_samplers_cannot_serve_is_refused_naming_the_key(
    tmp_path, keys, says
):
    with pytest.raises(ValueError, match=says):
        load(tmp_path, **keys)


def test_a_catalogue_too_small_for_the_grid_is_refused(tmp_path):
    """Three items make an odd-one-out, not a head with three candidates."""
    folder = tmp_path / "three"
    folder.mkdir()
    (folder / "items.csv").write_text("name\na\nb\nc\n")
    text = collect_toml(catalogue="three", n_choices=3, picks=2)
    with pytest.raises(ValueError, match="n_choices: .* from 2 to 2"):
        load_collect(write_design(tmp_path, "c.toml", text))
    odd = collect_toml(catalogue="three", trial="odd-one-out", n_choices=None)
    assert load_collect(write_design(tmp_path, "o.toml", odd)).k == 3


def test_the_new_keys_at_their_defaults_keep_a_collects_identity_and_an_edit_is_refused(
    tmp_path,
):
    """A file that writes picks = 1 and trial = "rank" is the collect without them (its
    fingerprint and stored design); once people took part, changing the trial is refused."""
    plain = load(tmp_path / "a", catalogue="colours")
    spelled = load(tmp_path / "b", catalogue="colours", picks=1, trial="rank")
    assert plain.design_fingerprint == spelled.design_fingerprint
    assert plain.identity().design == spelled.identity().design
    assert "picks" not in plain.identity().design and "trial" not in plain.identity().design
    ranked = load(tmp_path / "c", catalogue="colours", n_choices=8, picks=2)
    odd = load(tmp_path / "d", catalogue="colours", trial="odd-one-out", n_choices=None)
    assert len({plain.design_fingerprint, ranked.design_fingerprint, odd.design_fingerprint}) == 3
    url = f"sqlite:///{tmp_path / 'e.sqlite'}"
    cfg = load(tmp_path / "e", catalogue="colours", name="alike", n_choices=8)
    with in_process(create_app(cfg.catalogue, url, collect=cfg)) as c:
        enrol(c)
    edited = load(tmp_path / "e", catalogue="colours", name="alike", n_choices=8, picks=2)
    with pytest.raises(ExperimentChanged, match="picks"):
        bind(edited, Store(url))


def test_drawn_gold_rows_have_the_trials_form_and_are_clear(tmp_path):
    """gold_drawn on a grid: rows [head, nearest, 7 others], the nearest at most half as far
    as the next; on odd-one-out: [a, b, odd], the pair at most half as far apart as the odd
    one from the nearer of them."""
    grid = load(tmp_path / "g", catalogue="colours", n_choices=8, picks=2, gold_drawn=16)
    X = np.asarray(grid.catalogue.embedding)
    assert len(grid.gold_pool) == 16
    for head, first, *rest in grid.gold_pool:
        d = [np.linalg.norm(X[c] - X[head]) for c in rest]
        assert len(rest) == 7 and np.linalg.norm(X[first] - X[head]) <= 0.5 * min(d)
    odd = load(
        tmp_path / "o", catalogue="colours", trial="odd-one-out", n_choices=None, gold_drawn=16
    )
    for a, b, o in odd.gold_pool:
        near = np.linalg.norm(X[a] - X[b])
        assert near <= 0.5 * min(np.linalg.norm(X[a] - X[o]), np.linalg.norm(X[b] - X[o]))


# ---------------------------------------------------------------------- what answers imply
def test_a_ranked_answer_implies_each_pick_against_those_left_and_odd_one_out_two():
    """Closed forms: r picks of k imply r k - r (r + 1) / 2 triplets (8-rank-2: 13), as
    the library's RankedChoices.to_triplets; an odd-one-out (a, b, odd) and (b, a, odd)."""
    from tripletsearch import OddOneOut, RankedChoices

    rng = np.random.default_rng(0)
    for k in range(2, 17):
        for r in range(1, k):
            items = rng.choice(40, k + 1, replace=False)
            q = {"head": int(items[0]), "candidates": [int(c) for c in items[1:]], "picks": r}
            picks = [int(p) for p in rng.choice(k, r, replace=False)]
            got = trials.implied(q, picks)
            assert len(got) == r * k - r * (r + 1) // 2
            lib = RankedChoices(
                [q["head"]], [q["candidates"]], [[q["candidates"][p] for p in picks]]
            )
            assert sorted(map(tuple, lib.to_triplets().tolist())) == sorted(got)
            row = trials.trial_row(q, picks)
            assert row == lib.rows()[0].tolist()
    q = {"head": None, "candidates": [4, 9, 2], "trial": "odd-one-out"}
    assert trials.implied(q, [1]) == [(4, 2, 9), (2, 4, 9)]
    assert trials.trial_row(q, [1]) == OddOneOut([[4, 9, 2]], [9]).rows()[0].tolist()
    grid = {"head": 0, "candidates": list(range(1, 9)), "picks": 3}
    steps = trials.pick_steps(grid, [4, 0, 7])
    assert [len(q["candidates"]) for q, _ in steps] == [8, 7, 6]
    assert [q["candidates"][p] for q, p in steps] == [5, 1, 8]  # the item picked at each step


# ---------------------------------------------------------------------- through the API
def run_collect(tmp_path, people=3, **keys):
    """A collect of ``keys`` on the demo's colours answered by honest simulated people
    (gamma 3, lapse 0.05) through the participants' API: (config, url, replies seen)."""
    base = dict(catalogue="colours", samplers=["active", "random"], max_queries=30, burn_in=4,
                test_share=0.2, attention=[3], repeats=[25], dim=2)  # fmt: skip
    cfg = load(tmp_path, **{**base, **keys})
    url = f"sqlite:///{tmp_path / 't.sqlite'}"
    X = np.asarray(cfg.catalogue.embedding)
    seen = []
    with in_process(create_app(cfg.catalogue, url, collect=cfg)) as c:
        for i in range(people):
            person = CollectPerson("person", X, gamma=3.0, lapse=0.05, rng=i, spread=0.0)
            pr, h = enrol(c)
            r = c.post(f"/api/participants/{pr['id']}/next", json={}, headers=h).json()
            while not r["done"]:
                body = person.answer(r["screen"])
                got = c.post(f"/api/participants/{pr['id']}/answer", json=body, headers=h)
                assert got.status_code == 200, got.text
                seen.append((r["screen"], body))
                r = got.json()
    return cfg, url, seen


def test_rank_screens_are_served_answered_stored_and_fitted(tmp_path):
    """8-rank-2: rank screens carry picks 2 and eight candidates, the test screens are
    triplets; the stored answers keep the picks in order; the implied triplets count 13 a
    rank answer and 1 a test; attention checks show the head among the candidates (its
    position the expected first pick); the refitter fits a rank sampler and fills its
    buffer with 9-item rows, which later screens ask."""
    cfg, url, seen = run_collect(tmp_path, n_choices=8, picks=2)
    kinds = {}
    for screen, body in seen:
        if screen.get("picks") == 2:
            assert len(screen["candidates"]) == 8 and len(body["picks"]) == 2
        else:
            assert len(screen["candidates"]) == 2 and "picks" not in body
        kinds[len(screen["candidates"])] = kinds.get(len(screen["candidates"]), 0) + 1
    assert kinds[8] > kinds.get(2, 0) > 0
    store = Store(url)
    answered = store.all_answers()
    n_rank = n_test = 0
    for history in answered.values():
        for h in history:
            q = h["query"]
            if q["kind"] == "attention":
                assert q["head"] in q["candidates"] and q["picks"] == 2
                assert q["candidates"][q["expected"]] == q["head"]
            if q.get("picks") == 2 and h["choice"] is not None:
                assert len(h["picks"]) == 2 and h["picks"][0] == h["choice"]
                n_rank += q["kind"] in ("burn-in", "random", "active", "fallback")
            elif h["choice"] is not None:
                assert h["picks"] is None
                n_test += q["kind"] == "test"
    kinds = ("burn-in", "random", "active", "fallback", "test")
    rows = [r for h in answered.values() for r in triplet_rows(h, kinds)[0]]
    assert len(rows) == 13 * n_rank + n_test
    assert not any(checks(h, **INSTANT)["flagged"] for h in answered.values())
    # the refitter: the samplers told the ranked answers (9-wide rows), buffers of grids
    refit_once(store, cfg, buffer=20, **INSTANT)
    for name in cfg.samplers:
        assert store.free_queries(cfg.fingerprint, name) == 20
    from tripletsearch.serve.collect.quality import counted_sessions

    told, _ = sampler_answers(counted_sessions(store, cfg.fingerprint, **INSTANT), "random", 9)
    assert told.shape[1] == 9 and len(told) > 0
    with sqlite3.connect(url.removeprefix("sqlite:///")) as con:
        widths = {
            len(json.loads(c)) for (c,) in con.execute("SELECT candidates FROM ts_collect_queries")
        }
    assert widths == {8}


def test_an_answer_that_does_not_fit_a_rank_screen_is_refused_and_a_retry_is_idempotent(
    tmp_path,
):
    cfg = load(tmp_path, catalogue="colours", n_choices=4, picks=2, max_queries=6, burn_in=5)
    url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    with in_process(create_app(cfg.catalogue, url, collect=cfg)) as c:
        pr, h = enrol(c)
        at = f"/api/participants/{pr['id']}/answer"
        r = c.post(f"/api/participants/{pr['id']}/next", json={}, headers=h).json()
        n = r["screen"]["number"]
        for body, says in [
            ({"choice": 0}, "asks 2 positions"),
            ({"choice": 0, "picks": [0]}, "asks 2 positions"),
            ({"choice": 0, "picks": [0, 1, 2]}, "asks 2 positions"),
            ({"choice": 0, "picks": [0, 0]}, "picked twice"),
            ({"choice": 1, "picks": [0, 1]}, "the first pick is choice"),
            ({"choice": 0, "picks": [0, 4]}, "positions in 0..3"),
            ({"choice": 0, "picks": [0, True]}, "expected an integer"),
            ({"choice": 0, "picks": "0 1"}, "a list of 1 to 16"),
            ({"choice": None, "picks": [0, 1]}, "the first pick is choice"),
        ]:
            got = c.post(at, json={"screen": n, **body}, headers=h)
            assert got.status_code == 400 and says in got.json()["error"], (body, got.text)
        ok = c.post(at, json={"screen": n, "choice": 2, "picks": [2, 0]}, headers=h)
        assert ok.status_code == 200
        assert (
            c.post(at, json={"screen": n, "choice": 2, "picks": [2, 0]}, headers=h).json()
            == ok.json()
        )
        other = c.post(at, json={"screen": n, "choice": 2, "picks": [2, 1]}, headers=h)
        assert other.status_code == 409 and "picks [2, 0]" in other.json()["error"]
        skip = c.post(at, json={"screen": n + 1, "choice": None}, headers=h)
        assert skip.status_code == 200
    (history,) = Store(url).all_answers().values()
    assert [(x["choice"], x["picks"]) for x in history] == [(2, (2, 0)), (None, None)]


def test_odd_one_out_screens_their_checks_and_refits(tmp_path):
    """Three items and no head; attention checks show one item twice beside another (the
    odd one expected); answers imply two triplets each; the refitter's odd-one-out
    sampler fills its buffer with three items and no head."""
    cfg, url, seen = run_collect(tmp_path, trial="odd-one-out", n_choices=None)
    assert all(s["head"] is None and len(s["candidates"]) == 3 and s["trial"] == "odd-one-out"
               for s, _ in seen if len(s["candidates"]) == 3)  # fmt: skip
    assert any(len(s["candidates"]) == 2 and s["head"] is not None for s, _ in seen)  # tests
    store = Store(url)
    answered = store.all_answers()
    for history in answered.values():
        for h in history:
            q = h["query"]
            if q["kind"] == "attention":
                odd = q["candidates"][q["expected"]]
                assert q["candidates"].count(odd) == 1 and len(set(q["candidates"])) == 2
    assert not any(checks(h, **INSTANT)["flagged"] for h in answered.values())
    refit_once(store, cfg, buffer=12, **INSTANT)
    with sqlite3.connect(url.removeprefix("sqlite:///")) as con:
        rows = con.execute("SELECT head, candidates FROM ts_collect_queries").fetchall()
    assert rows and all(head == trials.NO_HEAD and len(json.loads(c)) == 3 for head, c in rows)


def test_the_agreement_rule_scores_ranked_picks_as_choices_among_those_left():
    """Ranked picks scored pick by pick (chance 1/8 then 1/7): an honest ranker of a known
    geometry agrees far above chance, a random ranker's p-value is uniform (the share
    under 0.1 of 200 within a binomial margin)."""
    from tripletsearch import Embedding, GammaCKL
    from tripletsearch.serve.collect import agreement

    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 2))
    T = GammaCKL(3.0).sample(X, rng.choice(30, (1500, 3)), random_state=1)
    T = T[(T[:, 0] != T[:, 1]) & (T[:, 0] != T[:, 2]) & (T[:, 1] != T[:, 2])]
    emb = Embedding("gamma-ckl", 2, n_items=30, random_state=0).fit(T)

    def screens(m):
        for _ in range(m):
            items = rng.choice(30, 9, replace=False)
            yield {"head": int(items[0]), "candidates": [int(c) for c in items[1:]], "picks": 2}

    honest = CollectPerson("person", X, gamma=3.0, lapse=0.05, rng=1)
    steps = []
    for q in screens(25):
        items = [{"id": c} for c in q["candidates"]]
        shown = {"head": {"id": q["head"]}, "candidates": items, "picks": 2}
        steps += trials.pick_steps(q, honest.picks(shown))
    got = agreement._agree(emb, steps)
    assert got["answers"] == 50 and math.isclose(got["chance"], (1 / 8 + 1 / 7) / 2)
    assert got["p_value"] < 1e-3
    low = 0
    for _ in range(200):
        steps = []
        for q in screens(25):
            steps += trials.pick_steps(q, [int(p) for p in rng.choice(8, 2, replace=False)])
        low += agreement._agree(emb, steps)["p_value"] <= 0.1
    assert abs(low - 20) <= 12  # P(|X - 20| > 12), X ~ Binomial(200, 0.1): under 0.01


def test_a_version_8_database_keeps_its_answers_and_takes_ranked_picks(tmp_path):
    """A database as version 8 left it (no ``picks`` column) is upgraded in place: its
    answers read back with one pick, and a ranked answer after it keeps its picks."""
    cfg = load(tmp_path, catalogue="colours", n_choices=4, picks=2, max_queries=6, burn_in=5)
    path = tmp_path / "v8.sqlite"
    url = f"sqlite:///{path}"
    with in_process(create_app(cfg.catalogue, url, collect=cfg)) as c:
        pr, h = enrol(c)
        at = f"/api/participants/{pr['id']}/answer"
        c.post(f"/api/participants/{pr['id']}/next", json={}, headers=h)
        assert (
            c.post(at, json={"screen": 0, "choice": 1, "picks": [1, 3]}, headers=h).status_code
            == 200
        )
    with sqlite3.connect(path) as con:  # as version 8 wrote it: one pick, no column
        con.execute("ALTER TABLE ts_answers DROP COLUMN picks")
        con.execute("UPDATE ts_meta SET value = '8' WHERE key = 'schema_version'")
    store = Store(url)
    assert store.setup() == 8 and Store(url).setup() == SCHEMA_VERSION == 9
    (history,) = store.all_answers().values()
    assert [(x["choice"], x["picks"]) for x in history] == [(1, None)]
    with in_process(create_app(cfg.catalogue, url, collect=cfg)) as c:
        r = c.post(at, json={"screen": 1, "choice": 0, "picks": [0, 2]}, headers=h)
        assert r.status_code == 200, r.text
    (history,) = Store(url).all_answers().values()
    assert [x["picks"] for x in history] == [None, (0, 2)]


def test_a_rank_collect_exports_its_trials_their_triplets_and_a_study(tmp_path, capsys):
    """collect_trials.csv: one row per answer that counts (head, candidates and picks in
    order, space-separated ids); its n_triplets sum to collect_triplets.csv's rows, which
    are what the picks imply; answers.csv keeps the positions; ``export --collect`` fits
    the implied triplets and writes a study, as for a triplet collect."""
    import csv

    from tripletsearch.cli import main
    from tripletsearch.serve.export import data_path

    cfg, url, _ = run_collect(tmp_path, people=2, n_choices=8, picks=2, samplers=["random"])
    out = tmp_path / "export"
    argv = ["export", "--database", url, "--out", str(out), "--fast-server-ms=0", "--collect"]
    assert main([*argv, str(tmp_path / "c.toml")]) == 0
    assert "fitted gamma-ckl" in capsys.readouterr().out and (out / "study.toml").exists()
    with open(out / data_path("collect_trials.csv"), newline="") as fh:
        trials_rows = list(csv.DictReader(fh))
    T = np.loadtxt(out / data_path("collect_triplets.csv"), delimiter=",", skiprows=1, dtype=int)
    assert sum(int(r["n_triplets"]) for r in trials_rows) == len(T)
    implied_rows = []
    for r in trials_rows:
        cands = [int(c) for c in r["candidates"].split()]
        picks = [int(p) for p in r["picks"].split()]
        assert r["trial"] == "rank" and set(picks) <= set(cands)
        q = {"head": int(r["head"]), "candidates": cands}
        implied_rows += trials.implied(q, [cands.index(p) for p in picks])
        assert (len(cands), len(picks), int(r["n_triplets"])) in ((8, 2, 13), (2, 1, 1))
        assert r["kind"] in ("burn-in", "random", "test", "fallback") and r["response_ms"]
    assert sorted(map(tuple, T.tolist())) == sorted(implied_rows)
    with open(out / data_path("answers.csv"), newline="") as fh:
        answers = [r for r in csv.DictReader(fh) if r["picks"]]
    assert answers and all(r["picks"].split()[0] == r["choice"] for r in answers)

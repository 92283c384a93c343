"""Checks that hold (rules of version 2): a participant is also judged by how their answers
agree with everyone else's, which a script cannot pass by reading the screen; gold is drawn
per participant from a pool; repeats ask again only queries an embedding predicts clearly,
at least five screens later; every flag names its rule with its numbers (dashboard,
export); every sampler says what it waits for."""

from __future__ import annotations

import csv
import math
import textwrap
from types import SimpleNamespace

import numpy as np
import pytest

from serve.helpers import answer_all, catalogue_folder, enrol, in_process
from tripletsearch import Embedding, GammaCKL, TripletSampler
from tripletsearch.people import CollectPerson
from tripletsearch.serve import create_app
from tripletsearch.serve.collect import agreement, load_collect, quality
from tripletsearch.serve.collect.dashboard import collect_dashboard, sampler_state
from tripletsearch.serve.collect.export import participant_checks, write_collect_export
from tripletsearch.serve.collect.refitter import EmbeddingVersion, refit_once
from tripletsearch.serve.collect.screens import GOLD_SHOWN, REPEAT_CLEAR, REPEAT_GAP, gold_positions
from tripletsearch.serve.config import ServeConfig
from tripletsearch.serve.export import data_path
from tripletsearch.serve.store import Store

ADMIN = {"Authorization": "Bearer owner"}

# in-process people answer at once: a test that counts their answers turns the server's
# clock check off, as a server's setting would (the check's own tests: test_scripts.py)
INSTANT = {"fast_server_ms": 0}


def binomial_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k), X ~ Binomial(n, p): the textbook sum."""
    return sum(math.comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(k + 1))


def screen(number, kind, head, cands, choice, **extra):
    """An answered screen as ``all_answers`` has it (the server's 2 s per screen)."""
    return {
        "number": number, "kind": "answer", "undone": False, "choice": choice,
        "query": {"kind": kind, "head": head, "candidates": cands, **extra},
        "shown_at": 100.0 + 3 * number, "answered_at": 102.0 + 3 * number,
    }  # fmt: skip


def histories(X, kinds, answers, rng):
    """Per person of ``kinds``: ``answers`` random pairs answered (CollectPerson's picks)."""
    n = len(X)
    out = []
    for i, kind in enumerate(kinds):
        person = CollectPerson(kind, X, gamma=3.0, lapse=0.05, rng=rng)
        h = []
        for number in range(answers):
            head, a, b = (int(v) for v in rng.choice(n, 3, replace=False))
            q = {"screen": number, "head": {"id": head}, "candidates": [{"id": a}, {"id": b}]}
            h.append(screen(number, "random", head, [a, b], person.answer(q)["choice"]))
        out.append((f"p{i:03d}", h))
    return out


def test_the_agreement_rule_flags_random_pickers_and_spares_honest_people():
    """30 honest people (gamma 3, 5 % lapses) and 10 random pickers, 52 answers each, on
    40 points in d = 2. The honest flag rate is at most 5 % and a random picker's pass rate
    at most the test's level (0.05): with these counts, more than 4 honest flagged happens
    with probability under 0.02 at a true 5 %, and fewer than 8 of 10 random pickers
    flagged with probability under 0.02 at a true 95 %."""
    rng = np.random.default_rng(11)
    X = rng.normal(size=(40, 2))
    kinds = ["person"] * 30 + ["random"] * 10
    people = histories(X, kinds, 52, rng)
    got = agreement.score_agreement(people, people, 40, 2, seed=3)
    flagged = {
        i: bool(quality.checks(h, got[i])["flags"]) for i, h in people
    }  # only the agreement rule can flag these
    honest = sum(flagged[i] for (i, _), k in zip(people, kinds) if k == "person")
    scripts = sum(flagged[i] for (i, _), k in zip(people, kinds) if k == "random")
    assert 1 - binomial_cdf(4, 30, 0.05) < 0.02 and binomial_cdf(7, 10, 0.95) < 0.02
    assert honest <= 4 and scripts >= 8
    for i, _ in people:
        rec = got[i]
        assert rec["answers"] == 52 and rec["chance"] == 0.5 and rec["rows"] >= 400
        if flagged[i]:
            (flag,) = quality.checks(dict(people)[i], rec)["flags"]
            assert flag["rule"] == "agreement" and flag["p_value"] > quality.AGREEMENT_LEVEL
            assert flag["of"] == 52 and "agreement" in flag["why"]


def test_the_agreement_test_holds_its_level_for_random_pickers():
    """Under chance the weighted test's p-value is uniform: over 200 random pickers scored
    by one embedding, the share under 0.1 is within a binomial margin of 0.1."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(30, 2))
    T = GammaCKL(3.0).sample(X, rng.choice(30, (900, 3)), random_state=1)
    T = T[(T[:, 0] != T[:, 1]) & (T[:, 0] != T[:, 2]) & (T[:, 1] != T[:, 2])]
    emb = Embedding("gamma-ckl", 2, n_items=30, random_state=0).fit(T)
    low = 0
    for _ in range(200):
        picks = [({"head": int(h), "candidates": [int(a), int(b)]}, int(rng.integers(2)))
                 for h, a, b in (rng.choice(30, 3, replace=False) for _ in range(50))]  # fmt: skip
        low += agreement._agree(emb, picks)["p_value"] <= 0.1
    # P(|X - 20| > 12) for X ~ Binomial(200, 0.1) is under 0.01
    assert abs(low - 20) <= 12


def test_a_participant_is_judged_by_agreement_only_with_enough_answers():
    few = {"agreed": 10, "answers": quality.AGREEMENT_AFTER - 1, "chance": 0.5, "p_value": 0.6}
    assert not quality.checks([], few)["flagged"]
    enough = {**few, "answers": quality.AGREEMENT_AFTER}
    (flag,) = quality.checks([], enough)["flags"]
    assert flag["rule"] == "agreement" and flag["level"] == quality.AGREEMENT_LEVEL
    unscored = {**enough, "p_value": None}  # the others' answers too few to fit
    assert not quality.checks([], unscored)["flagged"]
    sure = {**enough, "p_value": quality.AGREEMENT_LEVEL / 2}
    assert not quality.checks([], sure)["flagged"]


def test_every_flag_names_its_rule_with_its_numbers():
    h = [
        screen(0, "attention", 3, [3, 4], 1, expected=0),
        screen(1, "gold", 3, [5, 6], 1, expected=0),
        screen(2, "random", 1, [2, 3], 0),
        screen(8, "repeat", 1, [3, 2], 0, of=2, clear=0.95),
        screen(9, "repeat", 1, [3, 2], 0, of=2, clear=0.96),
        screen(10, "repeat", 1, [2, 3], 1, of=2, clear=0.97),
        screen(11, "repeat", 1, [3, 2], 1, of=2, clear=0.95),
    ]
    got = quality.checks(h)
    rules = {f["rule"]: f for f in got["flags"]}
    assert set(rules) == {"attention", "gold", "repeats"} and got["rules"] == quality.CHECK_RULES
    assert rules["attention"]["passed"] == 0 and rules["attention"]["of"] == 1
    assert rules["repeats"]["passed"] == 1 and rules["repeats"]["of"] == 4
    assert quality.REPEATS_AFTER == 4
    # three clear repeats disagreeing are no flag yet (an honest person's second answer
    # differs 1 time in 5; two of two differing is 1 honest person in 25): from four
    assert "repeats" not in [f["rule"] for f in quality.checks(h[:-1])["flags"]]
    agreeing = [screen(n, "repeat", 1, [2, 3], 0, of=2, clear=0.95) for n in (10, 11)]
    two_of_four = [*h[:-2], *agreeing]
    assert "repeats" not in [f["rule"] for f in quality.checks(two_of_four)["flags"]]
    assert all(f["why"] for f in got["flags"])
    fast = [{**r, "answered_at": r["shown_at"] + 0.1} for r in h * 2]
    (clock,) = [f for f in quality.checks(fast)["flags"] if f["rule"] == "server_time"]
    assert clock["median_ms"] == pytest.approx(100.0) and clock["bound_ms"] == 250


def test_gold_is_drawn_per_participant_from_a_pool():
    pool = tuple((i, i + 1, i + 2) for i in range(0, 48, 3))  # 16 rows
    cfg = SimpleNamespace(gold=pool, attention=(10, 45), repeats=(30, 55))
    drawn = [gold_positions(cfg, seed, 60, rules=2) for seed in range(4)]
    assert all(len(d) == GOLD_SHOWN for d in drawn)
    assert all(set(d.values()) <= set(pool) for d in drawn)
    assert all(not set(d) & {10, 45, 30, 55} for d in drawn)
    seen = set().union(*(set(d.values()) for d in drawn))
    assert len(seen) < len(pool)  # four enrolments do not reveal the pool
    assert len({frozenset(d.values()) for d in drawn}) > 1
    # a participant enrolled under the first rules meets every row, as then
    assert set(gold_positions(cfg, 0, 60).values()) == set(pool)


def design(tmp_path, extra=""):
    catalogue_folder(tmp_path)
    text = f"""
    catalogue = "items"
    samplers = ["random"]
    test_share = 0.0
    n_choices = 2
    dim = 2
    max_queries = 24
    burn_in = 23
    attention = [3]
    repeats = [4, 12, 20]
    seed = 2
    agreement = false
    {extra}
    """
    (tmp_path / "collect.toml").write_text(textwrap.dedent(text))
    return load_collect(tmp_path / "collect.toml"), f"sqlite:///{tmp_path / 's.sqlite'}"


def test_repeats_ask_again_clear_queries_at_least_five_screens_later(tmp_path):
    cfg, db = design(tmp_path)
    store = Store(db)
    X = np.random.default_rng(0).normal(size=(cfg.catalogue.n_items, 2))
    emb = Embedding("gamma-ckl", 2, gamma=8.0, n_items=len(X), random_state=0)
    emb.fit(GammaCKL(3.0).sample(X, np.array([[0, 1, 2], [1, 2, 3]]), random_state=0))
    with in_process(create_app(cfg.catalogue, db, collect=cfg)) as c:
        pr, h = enrol(c)
        answer_all(c, pr["id"], h)  # no embedding yet: no repeat
        emb.embedding_ = X  # gamma 8: sure of most queries
        state = {"model": "gamma-ckl", "n_rows": 10 * len(X), "used": {}, "n_test": 0}
        from tripletsearch.collect._sampler import embedding_state

        store.add_embedding(
            cfg.fingerprint,
            "random",
            EmbeddingVersion(**state, accuracy=None, embedding=embedding_state(emb)),
        )
        more = {**state, "n_rows": 20 * len(X)}  # a newer version: the one looked up
        store.add_embedding(
            cfg.fingerprint,
            "random",
            EmbeddingVersion(**more, accuracy=None, embedding=embedding_state(emb)),
        )
        assert store.newest_embeddings(cfg.fingerprint) == [("random", 2, 20 * len(X))]
        assert store.newest_embeddings("another collect") == []
        again, h2 = enrol(c)
        answer_all(c, again["id"], h2)
    first = store.history(store.participant_sessions(pr["id"])[0].id)
    assert not [r for r in first if r["query"]["kind"] == "repeat"]
    (session,) = store.participant_sessions(again["id"])
    assert session.params["checks"] == quality.CHECK_RULES
    got = {r["number"]: r["query"] for r in store.history(session.id)}
    repeats = {n: q for n, q in got.items() if q["kind"] == "repeat"}
    assert set(repeats) == {12, 20}  # screen 4 has no query 5 screens before it
    for n, q in repeats.items():
        was = got[q["of"]]
        assert q["of"] <= n - REPEAT_GAP and was["kind"] not in ("repeat", "attention")
        assert q["head"] == was["head"] and set(q["candidates"]) == set(was["candidates"])
        p = emb.oracle_.choice_prob(emb.embedding_, [q["head"]], [q["candidates"]]).max()
        assert q["clear"] == pytest.approx(p, abs=1e-4) and p >= REPEAT_CLEAR


def hit(q: dict, off: int) -> int:
    """The head when it is shown (``off`` 1: the other candidate), else the first."""
    ids = [x["id"] for x in q["candidates"]]
    return (ids.index(q["head"]["id"]) + off) % len(ids) if q["head"]["id"] in ids else 0


def test_the_dashboard_and_export_say_which_rule_flagged_each_participant(tmp_path):
    gold = [[1, 2, 20], [4, 5, 25], [6, 7, 26], [8, 9, 27]]  # a pool: each meets one
    cfg, db = design(tmp_path, f"gold = {gold}")
    store = Store(db)
    config = ServeConfig(admin_token="owner", **INSTANT)
    with in_process(create_app(cfg.catalogue, db, collect=cfg, config=config)) as c:
        good, hg = enrol(c)
        answer_all(c, good["id"], hg, lambda q: hit(q, 0))
        bad, hb = enrol(c)
        answer_all(c, bad["id"], hb, lambda q: hit(q, 1))
        board = c.get("/api/admin/collect", headers=ADMIN).json()
    rows = {p["id"]: p for p in board["participants"]}
    assert board["rules"]["version"] == quality.CHECK_RULES
    assert board["rules"]["agreement_level"] == quality.AGREEMENT_LEVEL
    assert board["rules"]["agreement_after"] == quality.AGREEMENT_AFTER
    flags = rows[bad["id"]]["flags"]
    assert "attention" in [f["rule"] for f in flags] and rows[bad["id"]]["flagged"]
    (att,) = [f for f in flags if f["rule"] == "attention"]
    assert att["passed"] == 0 and att["of"] == 1 and "attention" in att["why"]
    assert rows[bad["id"]]["status"] == "flagged: " + ", ".join(f["rule"] for f in flags)
    assert rows[good["id"]]["status"] in ("done", "flagged: repeats", "flagged: gold")
    assert board["rules"]["text"].startswith(f"Check rules version {quality.CHECK_RULES}:")
    write_collect_export(store, cfg, tmp_path / "collect.toml", tmp_path / "out", **INSTANT)
    with open(tmp_path / "out" / data_path("collect_participants.csv"), newline="") as fh:
        listed = {r["participant"]: r for r in csv.DictReader(fh)}
    assert set(listed) == {good["id"], bad["id"]}
    assert listed[bad["id"]]["flagged"] == "true"
    assert "attention" in listed[bad["id"]]["flagged_by"].split()
    assert listed[bad["id"]]["attention_passed"] == "0"
    assert listed[bad["id"]]["rules"] == str(quality.CHECK_RULES)
    assert listed[bad["id"]]["why"]
    assert [r["flagged"] for r in participant_checks(store, cfg, **INSTANT)] == [
        rows[good["id"]]["flagged"],
        True,
    ]


def test_every_sampler_says_what_it_waits_for(tmp_path):
    """With 40 items at d = 2 the active sampler asks random queries until
    ceil(L0 d log2 L0) = 173 answers (L0 = 20 anchors)."""
    active = TripletSampler(40, 2, method="active", refit=None, random_state=0)
    assert active.burn_in_ == math.ceil(20 * 2 * math.log2(20)) == 173
    assert TripletSampler(40, 2, method="random").burn_in_ is None
    assert TripletSampler(40, 2, method="arr").burn_in_ == 40
    # the rule as the sampler applies it: random (burn-in) queries until then
    X = np.random.default_rng(1).normal(size=(40, 2))
    assert active.embedding_ is None and not active.refit_due_
    active.tell(GammaCKL(3.0).sample(X, active.ask(172), random_state=2))
    assert not active.refit_due_  # 172 answers: still its burn-in
    active.tell(GammaCKL(3.0).sample(X, active.ask(1), random_state=3))
    assert active.refit_due_  # the 173rd: it fits, then asks its own
    assert sampler_state("active", 173, 52, None) == (
        "active: random until 173 answers, 52 so far; not fitted yet"
    )
    assert sampler_state("random", None, 80, 2).startswith("random: every query random")
    assert "adaptive" in sampler_state("active", 173, 400, 3)
    catalogue_folder(tmp_path, n=40)
    text = """
    catalogue = "items"
    samplers = ["active", "random"]
    dim = 2
    max_queries = 30
    burn_in = 10
    agreement = false
    """
    (tmp_path / "collect.toml").write_text(textwrap.dedent(text))
    cfg = load_collect(tmp_path / "collect.toml")
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    store = Store(db)
    with in_process(create_app(cfg.catalogue, db, collect=cfg)) as c:
        for _ in range(2):
            pr, h = enrol(c)
            answer_all(c, pr["id"], h)
        refit_once(store, cfg, buffer=5, **INSTANT)
    board = collect_dashboard(store, cfg, **INSTANT)
    arm = board["arms"]["active"]
    assert arm["burn_in"] == 173 and 0 < arm["answers"] < 173
    assert arm["state"].startswith(f"active: random until 173 answers, {arm['answers']} so far")


def test_agreement_scores_are_recomputed_under_new_rules(tmp_path):
    """Scores a refitter kept under other rules are scored again at its next round; an
    unchanged collect's only when its answers grew by the refit rule."""
    cfg, db = design(tmp_path)
    store = Store(db)
    with in_process(create_app(cfg.catalogue, db, collect=cfg)) as c:
        pr, h = enrol(c)
        answer_all(c, pr["id"], h, lambda q: hit(q, 0))
    key = quality.agreement_key(cfg.fingerprint)
    store.put_meta(key, {"rules": 1, "triplets": 10**6, "sessions": {}})
    assert agreement.refresh_agreement(store, cfg, **INSTANT)  # other rules: scored again
    kept = store.get_meta(key)
    assert kept["rules"] == quality.CHECK_RULES and set(kept["sessions"]) == {
        s.id for s in store.participant_sessions(pr["id"])
    }
    assert not agreement.refresh_agreement(store, cfg, **INSTANT)  # nothing new

"""The collect checks of rules 3 (issue 49, found item 1): a skip on any screen counts
against the participant in the agreement rule; a collect too short for that rule is refused
when its server registers it (a warning once people took part), and its dashboard does not
claim to judge; every screen is served along the adaptive screens' path; a finished
participant's code does not depend on their checks."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from serve.helpers import collect_toml, enrol, in_process, take_part, write_design
from tripletsearch.serve import create_app
from tripletsearch.serve.collect import agreement, load_collect, quality
from tripletsearch.serve.collect.dashboard import collect_dashboard
from tripletsearch.serve.collect.screens import BUFFER_KINDS
from tripletsearch.serve.config import ServeConfig
from tripletsearch.serve.store import Store


def rec(number, kind, choice, head=0, cands=(1, 2), **extra):
    query = {"kind": kind, "head": head, "candidates": list(cands), **extra}
    return {"number": number, "kind": "answer", "undone": False, "choice": choice, "query": query}


def test_a_skip_on_any_screen_is_a_pick_that_does_not_agree():
    kinds = ["random", "adaptive", "test", "gold", "attention", "repeat", "burn-in"]
    skipped = [rec(i, k, None) for i, k in enumerate(kinds)]
    assert [c for _, c in agreement._picks(skipped)] == [-1] * len(kinds)
    answered = [rec(i, k, 0) for i, k in enumerate(kinds)]  # checks answered: not picks
    assert len(agreement._picks(answered)) == len(kinds) - 3  # (nor gold, since rules 4)

    class Sure:  # an embedding sure the first candidate is the answer
        class oracle_:  # noqa: N801
            @staticmethod
            def choice_prob(X, heads, cands, n_jobs=1):
                return np.tile([0.9, 0.1], (len(heads), 1))

        embedding_ = None

    # the script of the report: random picks kept under 40, the rest skipped
    rng = np.random.default_rng(0)
    history = [rec(i, "adaptive", int(rng.integers(2))) for i in range(30)]
    history += [rec(30 + i, "adaptive", None) for i in range(28)]
    got = agreement._agree(Sure, agreement._picks(history))
    assert got["answers"] == 58 >= quality.AGREEMENT_AFTER  # judged: skips count
    assert got["p_value"] > quality.AGREEMENT_LEVEL  # and flagged by the rule
    assert quality.checks(history, got)["flags"][0]["rule"] == "agreement"
    honest = [rec(i, "adaptive", 0) for i in range(50)] + [rec(50, "adaptive", None)]
    assert agreement._agree(Sure, agreement._picks(honest))["p_value"] < 1e-6


@pytest.mark.parametrize(
    "most, attention, repeats", [(30, [], []), (41, [3], [5, 9]), (10, [2], []), (43, [], [4])]
)
def test_a_collect_too_short_for_the_agreement_rule_is_refused_naming_the_numbers(
    tmp_path, most, attention, repeats
):
    keys = {"max_queries": most, "attention": attention, "repeats": repeats}
    path = write_design(tmp_path, "c.toml", collect_toml(agreement=True, **keys))
    cfg = load_collect(path)  # (read; refused when its server registers it)
    left = most - len(attention) - len(repeats)
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    if left >= quality.AGREEMENT_AFTER:
        create_app(cfg.catalogue, db, collect=cfg)
        with pytest.raises(ValueError, match="agreement = false is for a collect too short"):
            load_collect(write_design(tmp_path, "d.toml", collect_toml(agreement=False, **keys)))
        return
    with pytest.raises(ValueError, match=rf"max_queries = {most} less its .* leaves {left} picks"):
        create_app(cfg.catalogue, db, collect=cfg)
    short = load_collect(write_design(tmp_path, "d.toml", collect_toml(agreement=False, **keys)))
    config = ServeConfig(fast_server_ms=0)
    with in_process(create_app(short.catalogue, db, collect=short, config=config)) as c:
        enrol(c)
    store = Store(db)
    text = collect_dashboard(store, short)["rules"]["text"]
    assert "not judged by agreement" in text and f"leaves {left} picks" in text
    assert "judged from 40 picks" not in text
    # people took part: the file without agreement = false is served, with a warning
    with pytest.warns(UserWarning, match="took part already"):
        create_app(cfg.catalogue, db, collect=cfg)


def test_every_screen_is_served_along_the_adaptive_screens_path(tmp_path, monkeypatch):
    """Each screen reads the buffer and claims a query once (a check, test or burn-in screen
    leaving it free) and looks up the embedding that judges repeats once: the same work
    whatever the screen asks, a screen from the buffer included (it read the buffer twice
    before: the side channel of a check's faster reply)."""
    keys = {"max_queries": 44, "burn_in": 4, "attention": [2, 8], "repeats": [12], "seed": 5}
    gold = [[1, 2, 20], [4, 5, 25], [6, 7, 26], [8, 9, 27]]
    path = write_design(tmp_path, "c.toml", collect_toml(test_share=0.2, gold=gold, **keys))
    cfg = load_collect(path)
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    calls: list[tuple[str, bool]] = []
    real = Store.take_query

    def spy(self, collect, sampler, taker, refuse=(), keep=True):
        calls.append((taker, keep))
        return real(self, collect, sampler, taker, refuse=refuse, keep=keep)

    # no seam: which queries the service takes is seen only by spying on its Store
    monkeypatch.setattr(Store, "take_query", spy)
    looked: list[str] = []
    newest = Store.newest_embeddings

    def look(self, collect):
        looked.append(collect)
        return newest(self, collect)

    monkeypatch.setattr(Store, "newest_embeddings", look)
    rng = np.random.default_rng(2)
    queries = [[int(v) for v in rng.choice(cfg.catalogue.n_items, 3, replace=False)]
               for _ in range(40)]  # fmt: skip
    config = ServeConfig(fast_server_ms=0)
    with (
        warnings.catch_warnings(),
        in_process(create_app(cfg.catalogue, db, collect=cfg, config=config)) as c,
    ):
        store = Store(db)
        store.add_queries(cfg.fingerprint, "random", 0, queries)  # (the samplers: random)
        p, _h, _end = take_part(c)
    (s,) = store.participant_sessions(p["id"])
    kinds = [r["query"]["kind"] for r in store.history(s.id)]
    assert {"attention", "gold", "burn-in"} <= set(kinds) and len(kinds) == 44
    assert set(BUFFER_KINDS) & set(kinds)  # screens from the buffer among them
    assert looked == [cfg.fingerprint] * 44
    takers = [t for t, _ in calls]
    assert sorted(set(takers), key=lambda t: int(t.split(":")[1])) == [
        f"{p['id']}:{n}" for n in range(44)
    ]  # every screen, each once (a retry aside)
    assert len(takers) == 44


def test_a_finished_participants_code_does_not_depend_on_their_checks(tmp_path):
    """A script flagged by every rule still sees the finished code it earned; the flags
    are for the analysis (and ``codes --check``)."""
    text = collect_toml(max_queries=6, completion_code="DONE-7", attention=[1])
    path = write_design(tmp_path, "c.toml", text)
    cfg = load_collect(path)
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    with in_process(create_app(cfg.catalogue, db, collect=cfg)) as c:
        p, h, reply = take_part(c, wrong_on_attention)  # instantly
        base = f"/api/participants/{p['id']}"
        board = c.get("/api/admin/collect", headers={"Authorization": "Bearer x"})
        again = c.post(f"{base}/next", json={}, headers=h).json()  # reopened
    assert "DONE-7" in str(reply) and "DONE-7" in str(again)
    row = collect_dashboard(Store(db), cfg)["participants"][0]
    assert row["flagged"] and board.status_code in (401, 403, 404)


def wrong_on_attention(q: dict) -> int:
    """The candidate that is not the head when the head is shown, else the first."""
    ids = [x["id"] for x in q["candidates"]]
    return 1 - ids.index(q["head"]["id"]) if q["head"]["id"] in ids else 0


def test_a_samplers_queries_are_shown_in_an_order_drawn_per_screen(tmp_path):
    """A sampler's buffer may list a query's candidates in an order that says the answer
    (the script that always picks the first passed 7 of 20 times): each adaptive screen
    shows them in an order of its own draw."""
    keys = {"max_queries": 40, "burn_in": 0, "test_share": 0.0, "samplers": ["random"]}
    path = write_design(tmp_path, "c.toml", collect_toml(**keys))
    cfg = load_collect(path)
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    store = Store(db)
    with in_process(create_app(cfg.catalogue, db, collect=cfg, config=ServeConfig())) as c:
        rows = [(h, h + 1, h + 2) for h in range(28)]  # the smaller id always first
        store.add_queries(cfg.fingerprint, "random", 0, rows)
        p, _h, _end = take_part(c)
    (s,) = store.participant_sessions(p["id"])
    # the buffer's queries (the random sampler's: kind "random")
    shown = [r["query"] for r in store.history(s.id) if r["query"]["kind"] in BUFFER_KINDS]
    assert len(shown) == 28
    first = sum(q["candidates"][0] < q["candidates"][1] for q in shown)
    assert 6 <= first <= 22  # as a fair coin (P outside: 0.4 %), not 28 of 28

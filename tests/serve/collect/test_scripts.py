"""Checks a script cannot pass for free: the server's own clock flags a participant who
answers faster than a person reads, whatever the page claims; known-answer (gold) queries
look like any query; the flag is in the owner's listing at once."""

from __future__ import annotations

import textwrap
import time

import pytest

from serve.helpers import answer_all, catalogue_folder, enrol, in_process
from tripletsearch.serve import create_app
from tripletsearch.serve.collect import load_collect, quality
from tripletsearch.serve.collect.quality import checks
from tripletsearch.serve.config import ServeConfig
from tripletsearch.serve.store import Store

ADMIN = {"Authorization": "Bearer owner"}


def design(tmp_path, extra: str = ""):
    catalogue_folder(tmp_path)
    text = f"""
    catalogue = "items"
    samplers = ["random", "active"]
    test_share = 0.0
    n_choices = 2
    dim = 2
    max_queries = 10
    burn_in = 9
    seed = 3
    agreement = false
    {extra}
    """
    (tmp_path / "collect.toml").write_text(textwrap.dedent(text))
    cfg = load_collect(tmp_path / "collect.toml")
    return cfg, f"sqlite:///{tmp_path / 's.sqlite'}"


def script(q: dict) -> int:
    """The script of the report: the head if it is shown, else the first candidate."""
    ids = [c["id"] for c in q["candidates"]]
    return ids.index(q["head"]["id"]) if q["head"]["id"] in ids else 0


def answer(c, pid, h, pick, wait: float = 0.0) -> list[dict]:
    """Every query answered by ``pick``, claiming 900 ms, ``wait`` seconds after it showed."""

    def body(reply: dict) -> dict:
        time.sleep(wait)  # the person's pace the server's clock measures: not a wait
        q = reply["screen"]
        return {"screen": q["number"], "choice": pick(q), "response_ms": 900}

    exchanges: list = []
    answer_all(c, pid, h, body=body, seen=exchanges)
    return [reply["screen"] for reply, _, _ in exchanges]


def test_a_script_claiming_900_ms_is_flagged_by_the_servers_clock(tmp_path):
    cfg, db = design(tmp_path, "attention = [2, 6]")
    with in_process(
        create_app(cfg.catalogue, db, collect=cfg, config=ServeConfig(admin_token="owner"))
    ) as c:
        bot, hb = enrol(c)
        answer(c, bot["id"], hb, script)  # as fast as the server answers
        person, hp = enrol(c)
        answer(c, person["id"], hp, script, wait=0.3)  # the same picks at a person's pace
        board = c.get("/api/admin/collect", headers=ADMIN).json()
    rows = {p["id"]: p for p in board["participants"]}
    assert set(rows) == {bot["id"], person["id"]}
    b, p = rows[bot["id"]], rows[person["id"]]
    assert b["attention"] == [2, 2] and p["attention"] == [2, 2]  # the self-match passed
    assert b["response_ms_median"] == p["response_ms_median"] == 900.0  # what it claims
    assert b["server_ms_median"] < quality.FAST_SERVER_MS and b["flagged"]
    assert p["server_ms_median"] >= 300 and not p["flagged"]
    assert {b["sampler"], p["sampler"]} == {"random", "active"}  # beside each id
    assert board["arms"][b["sampler"]]["flagged"] == 1
    assert board["arms"][p["sampler"]]["flagged"] == 0


def timed(ms: list[float]) -> list[dict]:
    """Answered screens whose server-side time is ``ms`` each."""
    return [
        {
            "number": i, "kind": "answer", "undone": False, "choice": 0,
            "query": {"kind": "random", "head": 0, "candidates": [1, 2]},
            "shown_at": 100.0 + i, "answered_at": 100.0 + i + m / 1e3,
        }
        for i, m in enumerate(ms)
    ]  # fmt: skip


def test_the_servers_clock_flags_a_median_under_a_quarter_second():
    assert quality.FAST_SERVER_MS == 250  # the default of checks' fast_server_ms
    fast = checks(timed([100, 120, 3000, 90, 4000]))
    assert fast["server_ms"] == pytest.approx(120.0) and fast["flagged"]
    slow = checks(timed([300, 260, 90, 90, 5000]))
    assert slow["server_ms"] == pytest.approx(260.0) and not slow["flagged"]
    few = checks(timed([10, 10, 10, 10]))  # fewer than five: nothing to judge
    assert few["server_ms"] is None and not few["flagged"]


def test_gold_queries_look_like_any_query_and_flag_a_wrong_answer(tmp_path):
    # a pool of 8: each participant meets 2 (a quarter), drawn per participant
    gold = [[12, 4, 20], [5, 6, 29], [1, 2, 3], [7, 8, 9], [10, 11, 13], [14, 15, 16]]
    gold += [[17, 18, 19], [21, 22, 23]]
    cfg, db = design(tmp_path, f"gold = {gold}")
    store = Store(db)
    # in-process people answer at once: the server's clock check off, as a setting would
    config = ServeConfig(admin_token="owner", fast_server_ms=0)
    with in_process(create_app(cfg.catalogue, db, collect=cfg, config=config)) as c:
        right, hr = enrol(c)
        knows = {(h, frozenset((a, b))): a for h, a, b in gold}

        def truthful(q):
            ids = [x["id"] for x in q["candidates"]]
            key = (q["head"]["id"], frozenset(ids))
            return ids.index(knows[key]) if key in knows else 0

        seen = answer(c, right["id"], hr, truthful)
        wrong, hw = enrol(c)
        answer(c, wrong["id"], hw, lambda q: 1 - truthful(q))
        listing = c.get("/api/admin/collect", headers=ADMIN).json()["participants"]
    board = {p["id"]: p for p in listing}
    # a gold screen has the keys, shapes and fields of every other screen
    assert {tuple(sorted(q)) for q in seen} == {("candidates", "head", "number")}
    assert {tuple(sorted(q["head"])) for q in seen} == {tuple(sorted(seen[0]["head"]))}
    shown = [(q["head"]["id"], frozenset(x["id"] for x in q["candidates"])) for q in seen]
    assert sum(key in shown for key in knows) == 2
    (session,) = store.participant_sessions(right["id"])
    kinds = [h["query"]["kind"] for h in store.history(session.id)]
    assert kinds.count("gold") == 2
    assert board[right["id"]]["gold"] == [2, 2] and not board[right["id"]]["flagged"]
    assert board[wrong["id"]]["gold"] == [0, 2] and board[wrong["id"]]["flagged"]

"""An error anywhere on an answer's path leaves the session as it was (issue 40, item 3).

The fault is injected at every step of one answer request (each call of the store and of
the session's mode, each SQL statement and each commit; before the step and after it),
once, as a database error, a full disk or a bug (the kind rotating over the steps); the
client then retries the request and the run goes on. The replies, the stored sessions,
the export and (a collect) the participant's checks and the buffer of queries are
compared with a run without the fault (real SQLite files, the whole app through
Starlette's TestClient).
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import textwrap

import numpy as np
import pytest
import sqlalchemy as sa
from sqlalchemy import event

from serve.helpers import (
    auth,
    catalogue_folder,
    collect_toml,
    enrol,
    in_process,
    parts_of,
    write_study,
)
from tripletsearch import Embedding
from tripletsearch.collect._sampler import embedding_state
from tripletsearch.people import CollectPerson, FindPerson
from tripletsearch.serve import create_app, demo_catalogue
from tripletsearch.serve.collect import load_collect, quality
from tripletsearch.serve.collect.refitter import EmbeddingVersion
from tripletsearch.serve.collect.training import export_data
from tripletsearch.serve.config import ServeConfig
from tripletsearch.serve.store import Store
from tripletsearch.serve.store.tables import collect_queries
from tripletsearch.serve.study import load_study

# hundreds of runs of the service, pure Python: tens of seconds, once (not under the sanitizers)
pytestmark = [pytest.mark.once, pytest.mark.long]


def database_fault(sql: bool) -> Exception:
    """What SQLite says when the disk is full (the driver's error in a statement)."""
    raw = sqlite3.OperationalError("database or disk is full")
    return raw if sql else sa.exc.OperationalError("INSERT INTO ts_answers", {}, raw)


FAULTS = {
    "database": database_fault,
    "disk": lambda sql: OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)),
    "bug": lambda sql: RuntimeError("a fault injected by the test"),
}
STATUS = {"database": 503, "disk": 503, "bug": 500}


class Injector:
    """The steps of a request while armed, and one fault at step ``at`` (``when``)."""

    def __init__(self, at: int | None = None, when: str = "before", fault: str = "bug"):
        self.at, self.when, self.fault = at, when, fault
        self.armed, self.fired = False, False
        self.steps: list[tuple[str, bool]] = []  # (name, whether it has an "after")
        self._open: list[int] = []

    def begin(self, name: str, after: bool = True) -> None:
        if not self.armed:
            self._open.append(-1)
            return
        self.steps.append((name, after))
        self._open.append(len(self.steps) - 1)
        self._maybe(len(self.steps) - 1, "before", name)

    def end(self) -> None:
        i = self._open.pop()
        if i >= 0:
            self._maybe(i, "after", self.steps[i][0])

    def _maybe(self, i: int, when: str, name: str) -> None:
        if not self.fired and i == self.at and when == self.when:
            self.fired = True
            raise FAULTS[self.fault](name.startswith("sql"))

    def install(self, app, modes) -> None:
        """Wrap the store's and the modes' methods, and watch the SQL of both engines."""
        store = parts_of(app).store
        for name in dir(type(store)):
            if not name.startswith("_") and callable(getattr(type(store), name)):
                self._wrap(store, name, f"store.{name}")
        for mode in modes:
            obj = parts_of(app).service.modes[mode]
            for name in dir(type(obj)):
                if not name.startswith("_") and callable(getattr(type(obj), name)):
                    self._wrap(obj, name, f"{mode}.{name}")
        for engine in {store.read, store.write}:
            event.listen(engine, "before_cursor_execute", self._before_sql)
            event.listen(engine, "after_cursor_execute", self._after_sql)
            event.listen(engine, "commit", self._commit)

    def _wrap(self, obj, name: str, label: str) -> None:
        own = getattr(obj, name)

        def step(*args, **kw):
            self.begin(label)
            try:
                got = own(*args, **kw)
            except BaseException:
                self._open.pop()
                raise
            self.end()
            return got

        setattr(obj, name, step)

    def _before_sql(self, conn, cursor, statement, *args) -> None:
        self.begin("sql " + statement.split()[0].upper())

    def _after_sql(self, conn, cursor, statement, *args) -> None:
        self.end()

    def _commit(self, conn) -> None:
        self.begin("sql COMMIT", after=False)
        self._open.pop()


class Client:
    """A person's requests; the one at the faulty screen armed, retried once when refused."""

    def __init__(self, c, injector: Injector, fault_at: tuple[str, int]):
        self.c, self.inj, self.fault_at = c, injector, fault_at
        self.replies: list = []
        self.refused: list[tuple[int, str | None]] = []

    def post(self, url: str, body: dict, headers: dict, step: str = "", screen: int = -1) -> dict:
        armed = (step, screen) == self.fault_at
        self.inj.armed = armed
        try:
            r = self.c.post(url, json=body, headers=headers)
        finally:
            self.inj.armed = False
        if armed and r.status_code >= 500:
            self.refused.append((r.status_code, r.headers.get("retry-after")))
            r = self.c.post(url, json=body, headers=headers)  # the person tries again
        assert r.status_code in (200, 201), r.text
        self.replies.append(r.json())
        return r.json()


# ---------------------------------------------------------------------- the three runs
def search_run(tmp_path, inj: Injector, fault_at=("answer", 3)) -> tuple[Client, str]:
    cat = demo_catalogue()
    db = f"sqlite:///{tmp_path / 'search.sqlite'}"
    app = create_app(cat, db, config=ServeConfig(random_state=0, max_queries=8))
    with in_process(app) as c:
        inj.install(app, ["find"])
        client = Client(c, inj, fault_at)
        s = client.post("/api/sessions", {"n_choices": 4}, {})
        person = FindPerson(cat, 517, None, np.random.default_rng(0))
        screen = s["screen"]
        while screen is not None:
            body = person.answer(screen)
            url = f"/api/sessions/{s['id']}/answer"
            reply = client.post(url, body, auth(s["token"]), "answer", screen["number"])
            screen = reply["screen"]
    return client, db


# over the shared keys: two searches of at most 4 screens, the fault at the first's third
STUDY = dict(title="Faults", targets=2, seed=5, max_queries=4)


def study_run(tmp_path, inj: Injector, fault_at=("answer", 2)) -> tuple[Client, str]:
    study = load_study(write_study(tmp_path, **STUDY))
    db = f"sqlite:///{tmp_path / 'study.sqlite'}"
    app = create_app(study.catalogue, db, study=study)
    with in_process(app) as c:
        inj.install(app, ["find"])
        client = Client(c, inj, fault_at)
        pr = client.post("/api/participants", {"consent": True}, {})
        base, h = f"/api/participants/{pr['id']}", auth(pr["token"])
        reply, people = client.post(f"{base}/next", {}, h), {}
        while not reply["done"]:  # each search's person, with a generator of their own
            slot, screen = reply["slot"], reply["screen"]
            if slot not in people:
                rng = np.random.default_rng(0)
                people[slot] = FindPerson(study.catalogue, reply["target"]["id"], None, rng)
            body = {**people[slot].answer(screen), "slot": slot}
            number = screen["number"] if slot == 0 else -1
            reply = client.post(f"{base}/answer", body, h, "answer", number)
    return client, db


# 9 screens: 2 of burn-in, an attention check, the fault at the 4th (its next screen from the
# buffer), both repeats after it (seed 4: each of an earlier query the embedding predicts
# clearly, asserted in outcome())
COLLECT = collect_toml(
    test_share=0.0, dim=2, max_queries=9, attention=[2], repeats=[7, 8], seed=4, title=None
)


@pytest.fixture(scope="module")
def collect_template(tmp_path_factory):
    """A collect file, and a database with the sampler's embedding and buffer ready.

    The people answer by the embedding (the candidate nearest the head), so that every
    repeat is of a query it predicts clearly and an honest person agrees on each.
    """
    root = tmp_path_factory.mktemp("collect")
    catalogue_folder(root, n=20)
    (root / "collect.toml").write_text(textwrap.dedent(COLLECT))
    cfg = load_collect(root / "collect.toml")
    rng = np.random.default_rng(0)
    truth = rng.normal(size=(20, 2))
    rows = []
    for _ in range(600):
        h, a, b = (int(v) for v in rng.choice(20, size=3, replace=False))
        near = np.sum((truth[[a, b]] - truth[h]) ** 2, axis=1)
        rows.append((h, a, b) if near[0] < near[1] else (h, b, a))
    emb = Embedding(dim=2, gamma=3.0, random_state=0, n_jobs=1).fit(np.array(rows), n_items=20)
    store = Store(f"sqlite:///{root / 'template.sqlite'}")
    store.setup()
    version = EmbeddingVersion(
        model="gamma-ckl",
        n_rows=len(rows),
        used={},
        n_test=0,
        accuracy=None,
        embedding=embedding_state(emb),
    )
    store.add_embedding(cfg.fingerprint, "random", version)
    queries = [[int(v) for v in rng.choice(20, size=3, replace=False)] for _ in range(40)]
    store.add_queries(cfg.fingerprint, "random", 1, queries)
    store.dispose()
    return cfg, root / "template.sqlite", np.asarray(emb.embedding_)


def collect_run(tmp_path, inj: Injector, template, fault_at=("answer", 3)) -> tuple[Client, str]:
    cfg, template_file, X = template
    path = tmp_path / "collect.sqlite"
    with sqlite3.connect(template_file) as src, sqlite3.connect(path) as dst:
        src.backup(dst)
    db = f"sqlite:///{path}"
    app = create_app(cfg.catalogue, db, collect=cfg)
    with in_process(app) as c:
        inj.install(app, ["collect"])
        client = Client(c, inj, fault_at)
        pr, h = enrol(c)
        base = f"/api/participants/{pr['id']}"
        reply = client.post(f"{base}/next", {}, h)
        person = CollectPerson("person", X, gamma=None, lapse=0.0, seconds=0.9, spread=0.0)
        while not reply["done"]:
            q = reply["screen"]
            body = person.answer(q)  # the nearest to the head, in 900 ms
            reply = client.post(f"{base}/answer", body, h, "answer", q["number"])
    return client, db


# ---------------------------------------------------------------------- what is compared
# what differs from run to run: times, and the tokens drawn
VARYING = ("shown_at", "answered_at", "created", "updated", "exported_at", "token")


def _untimed(value):
    if isinstance(value, dict):
        return {
            k: _untimed(v)
            for k, v in value.items()
            if k not in VARYING and not k.startswith("seconds") and not k.endswith("_ms")
        }
    if isinstance(value, list | tuple):
        return [_untimed(v) for v in value]
    return value


def outcome(client: Client, db: str, collect=None) -> dict:
    """Everything a run leaves: replies, sessions, export (collect: checks, buffer).

    Ids and tokens (drawn at random) replaced by their order of appearance; times left out.
    """
    store = Store(db)
    sessions = list(store.iter_sessions())
    answered = store.all_answers()
    got = {
        "replies": client.replies,
        "sessions": [
            {k: v for k, v in vars(s).items() if k not in ("id", "token_hash")} for s in sessions
        ],
        "histories": [answered.get(s.id, []) for s in sessions],
        # (in process, people answer at once: the server's clock check off, as a setting)
        "export": export_data(
            store, None if collect is None else collect.catalogue, fast_server_ms=0
        ),
    }
    got["export"].pop("experiments")
    if collect is not None:
        got["checks"] = [quality.checks(answered.get(s.id, []), fast_server_ms=0) for s in sessions]
        q = collect_queries
        with store.read.connect() as c:
            rows = c.execute(sa.select(q.c.id, q.c.head, q.c.candidates, q.c.taken_by)).all()
        got["buffer"] = sorted(tuple(r) for r in rows)
        assert all(c["repeats"][1] == 2 for c in got["checks"])  # the repeats were asked
        assert all(c["attention"][1] == 1 for c in got["checks"])  # and the attention check
    store.dispose()
    text = json.dumps(_untimed(got), sort_keys=True, default=str)
    ids = {s.id for s in sessions} | {s.participant for s in sessions if s.participant}
    for i, name in enumerate(sorted(ids, key=text.find)):
        text = text.replace(name, f"<id {i}>")
    return json.loads(text)


RUNS = {
    "search": lambda tmp, inj, template: search_run(tmp, inj),
    "study": lambda tmp, inj, template: study_run(tmp, inj),
    "collect": lambda tmp, inj, template: collect_run(tmp, inj, template),
}


def run_kind(kind, tmp_path_factory, template, inj: Injector) -> tuple[Client, dict]:
    tmp = tmp_path_factory.mktemp(kind)
    client, db = RUNS[kind](tmp, inj, template)
    return client, outcome(client, db, template[0] if kind == "collect" else None)


@pytest.mark.parametrize("kind", list(RUNS))
def test_a_fault_at_any_step_of_an_answer_leaves_the_run_as_without_it(
    kind, tmp_path_factory, collect_template
):
    counted = Injector()  # the run without a fault: the steps of the request to break
    _, expected = run_kind(kind, tmp_path_factory, collect_template, counted)
    steps = counted.steps
    mode = "collect" if kind == "collect" else "find"
    path = {"store.screen", f"{mode}.apply", f"{mode}.next_screen", "store.record_answer"}
    assert path | {"sql UPDATE", "sql INSERT", "sql COMMIT"} <= {name for name, _ in steps}
    if kind == "collect":  # its next screen from the sampler's buffer
        assert "store.take_query" in {name for name, _ in steps}
    # every step broken before it and after it, once, the fault's kind rotating over the
    # cases (shifted by one in each kind of run): a third of the runs of every kind at
    # every step, and each kind still breaks statements and calls alike
    points = [
        (i, when)
        for i, (name, after) in enumerate(steps)
        for when in (("before", "after") if after else ("before",))
    ]
    kinds = list(FAULTS)
    shift = list(RUNS).index(kind)
    cases = [(i, when, kinds[(n + shift) % len(kinds)]) for n, (i, when) in enumerate(points)]
    for fault in FAULTS:
        broken = {steps[i][0].startswith("sql") for i, _, f in cases if f == fault}
        assert broken == {True, False}, fault
    different = []
    for i, when, fault in cases:
        inj = Injector(i, when, fault)
        client, got = run_kind(kind, tmp_path_factory, collect_template, inj)
        assert inj.fired, (i, when, steps[i])
        assert client.refused == [(STATUS[fault], "5" if STATUS[fault] == 503 else None)]
        if got != expected:
            different.append((steps[i][0], when, fault))
    assert not different, different

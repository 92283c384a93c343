"""A collect keeps its data across safe edits of its file (the owner's dashboard still shows
its participants, the refitter still finds its buffers and versions), and an edit of its
design after people took part is refused naming the keys."""

from __future__ import annotations

import textwrap

import pytest

from serve.helpers import (
    answer_all,
    catalogue_folder,
    claiming,
    collect_toml,
    enrol,
    in_process,
    parts_of,
)
from tripletsearch.serve import create_app
from tripletsearch.serve.collect import load_collect
from tripletsearch.serve.collect.dashboard import collect_dashboard
from tripletsearch.serve.collect.refitter import refit_once
from tripletsearch.serve.experiment import ExperimentChanged, bind
from tripletsearch.serve.store import Store

COLLECT = collect_toml()


def start(tmp_path, text, db):
    (tmp_path / "collect.toml").write_text(textwrap.dedent(text))
    cfg = load_collect(tmp_path / "collect.toml")
    return create_app(cfg.catalogue, db, collect=cfg), cfg


def answer_some(c, n=4):
    pr, h = enrol(c)
    answer_all(c, pr["id"], h, body=claiming(900), most=n)
    return pr


def test_a_collect_keeps_its_data_across_safe_edits(tmp_path):
    catalogue_folder(tmp_path)
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    app, cfg = start(tmp_path, COLLECT, db)
    with in_process(app) as c:
        first = answer_some(c)
    store = Store(db)
    key = cfg.design_fingerprint  # the key it began with
    assert refit_once(store, bind(cfg, store, register=False))["random"] > 0
    edited = (
        COLLECT.replace('title = "Alike?"', 'title = "Which is more alike?"').replace(
            "max_queries = 12", "max_queries = 20"
        )
        + 'models = ["gamma-ckl", "t-ste"]\ndebrief = "Thanks a lot."\n'
    )
    app, again = start(tmp_path, edited, db)
    assert again.design_fingerprint != key  # (its old identity would have lost the rows)
    with in_process(app) as c:
        second = answer_some(c)
        bound = parts_of(c.app).collect.config
    assert bound.fingerprint == key and bound.name == "alike"
    board = collect_dashboard(store, bound)
    assert {p["id"] for p in board["participants"]} == {first["id"], second["id"]}
    assert board["title"] == "Which is more alike?" and board["max_queries"] == 20
    assert store.free_queries(key, "random") > 0  # the buffer it filled is still its own
    (session,) = store.participant_sessions(second["id"])
    assert session.params["max_queries"] == 20


@pytest.mark.parametrize(
    "edit, changed",
    [
        (("seed = 5", "seed = 6"), "seed"),
        (('samplers = ["random"]', 'samplers = ["random", "active"]'), "samplers"),
        (("burn_in = 2", "burn_in = 3"), "burn_in"),
        (("n_choices = 2", "n_choices = 3"), "n_choices"),
        (("seed = 5", "seed = 5\ndim = 3"), "dim"),
        (("seed = 5", "seed = 5\nattention = [4]"), "attention"),
    ],
)
def test_an_edit_of_the_design_is_refused(tmp_path, edit, changed):
    catalogue_folder(tmp_path)
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    app, _ = start(tmp_path, COLLECT, db)
    with in_process(app) as c:
        answer_some(c, 1)
    with pytest.raises(ExperimentChanged, match=rf"this file changes {changed}\. Undo"):
        start(tmp_path, COLLECT.replace(*edit), db)


def test_k_spelled_the_old_way_is_the_same_collect(tmp_path):
    catalogue_folder(tmp_path)
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    app, _ = start(tmp_path, COLLECT, db)
    with in_process(app) as c:
        first = answer_some(c, 1)
    with pytest.warns(DeprecationWarning, match="'k' was renamed 'n_choices'"):
        app, cfg = start(tmp_path, COLLECT.replace("n_choices = 2", "k = 2"), db)
    with in_process(app) as c:
        assert c.get("/api/experiment").json()["n_choices"] == 2
    assert Store(db).participant(first["id"]).study == parts_of(c.app).collect.fingerprint


def test_an_unchanged_file_adopts_its_collect_of_an_older_version(tmp_path):
    """A schema-4 database keeps the collect's participants, buffers and embedding versions
    under the design's hash; the unchanged file, served again, adopts all of them."""
    import sqlite3

    catalogue_folder(tmp_path)
    db_file = tmp_path / "s.sqlite"
    db = f"sqlite:///{db_file}"
    app, cfg = start(tmp_path, COLLECT, db)
    with in_process(app) as c:
        first = answer_some(c)
    store = Store(db)
    refit_once(store, bind(cfg, store, register=False))
    buffered = store.free_queries(cfg.design_fingerprint, "random")
    with sqlite3.connect(db_file) as con:  # as 0.2.0 left it: no experiments table
        con.execute("DROP TABLE ts_experiments")
        con.execute("UPDATE ts_meta SET value = '4' WHERE key = 'schema_version'")
    app, _ = start(tmp_path, COLLECT, db)  # upgrades, then adopts
    with in_process(app) as c:
        second = answer_some(c)
        bound = parts_of(c.app).collect.config
    store = Store(db)
    (row,) = store.experiments()
    assert (row.name, row.key) == ("alike", cfg.design_fingerprint)
    assert bound.fingerprint == cfg.design_fingerprint
    assert store.participant_ids(row.key) == {first["id"], second["id"]}
    assert 0 < store.free_queries(row.key, "random") <= buffered  # its buffer, in use

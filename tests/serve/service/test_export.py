"""The export of a search server's sessions: the admin's export over the API and the
``tripletsearch export`` command close the loop (triplets ready for ``Embedding.fit``), and
no export without an admin token."""

from __future__ import annotations

import csv
import json
import re

import numpy as np

import tripletsearch as ts
from serve.helpers import ADMIN, auth, in_process, run_search, start
from tripletsearch.people import FindPerson, MixPerson
from tripletsearch.serve import create_app, demo_catalogue
from tripletsearch.serve.export import data_path

CAT = demo_catalogue()


def test_admin_export_and_cli_export_close_the_loop(server, tmp_path):
    client, app, db = server
    rng = np.random.default_rng(5)
    targets = rng.choice(CAT.n_items, size=6, replace=False)
    for t in targets:
        run_search(
            client, start(client, mode="find", n_choices=4), FindPerson(CAT, int(t), 3.0, rng)
        )
    assert client.get("/api/admin/export").status_code == 401
    assert client.get("/api/admin/export", headers=auth("wrong")).status_code == 401
    data = client.get("/api/admin/export", headers=auth(ADMIN)).json()
    assert data["format"] == "tripletsearch.export" and data["version"] == 8
    T = np.array(data["triplets"])
    by_session = {s["session"]: s for s in data["sessions"]}
    for c in data["choices"]:  # one triplet per other shown item, head = the target
        assert by_session[c["session"]]["target"] == c["target"]
        assert c["item"] in c["shown"] and c["target"] not in c["shown"]
    assert len(T) == sum(len(c["shown"]) - 1 for c in data["choices"])
    assert set(T[:, 0]) <= {int(t) for t in by_session_targets(data)}
    # the answers as recorded: every chosen item is closer to the target, for a gamma = 3
    # user, more often than not (a statistical check of the row order)
    d_close = np.linalg.norm(CAT.embedding[T[:, 1]] - CAT.embedding[T[:, 0]], axis=1)
    d_far = np.linalg.norm(CAT.embedding[T[:, 2]] - CAT.embedding[T[:, 0]], axis=1)
    assert np.mean(d_close < d_far) > 0.7
    # the CLI writes the same, ready for Embedding.fit
    out = tmp_path / "export"
    from tripletsearch.cli import main

    assert (
        main(["export", "--database", f"sqlite:///{db}", "--out", str(out), "--demo", "colours"])
        == 0
    )
    path = out / data_path("triplets.csv")
    rows = np.loadtxt(path, delimiter=",", skiprows=1, dtype=int, ndmin=2)
    np.testing.assert_array_equal(rows, T)
    sessions = (out / data_path("sessions.csv")).read_text().splitlines()
    header = sessions[0].split(",")
    assert header[:3] == ["session", "mode", "n_choices"] and "n_queries" in header
    assert len(sessions) == 1 + len(data["sessions"])
    choices = (out / data_path("choices.csv")).read_text()
    assert choices.startswith("session,screen,target,item,shown\n")
    with open(out / data_path("triplets_info.csv"), newline="") as fh:  # row for row
        info = list(csv.DictReader(fh))
    assert len(info) == len(rows) and {i["source"] for i in info} == {"search"}
    screens = {(c["session"], c["screen"]) for c in data["choices"]}
    assert all((i["session"].removeprefix("'"), int(i["screen"])) in screens for i in info)
    assert [i["head_name"] for i in info] == [CAT.names[t] for t in rows[:, 0]]
    meta = json.loads((out / "export.json").read_text())
    assert meta["counts"]["triplets"] == len(T)
    emb = ts.Embedding("gamma-ckl", 3, random_state=0, max_epochs=20, n_items=CAT.n_items)
    emb.fit(rows)
    assert emb.embedding_.shape == (CAT.n_items, 3)


def by_session_targets(data):
    return [s["target"] for s in data["sessions"] if s["target"] is not None]


def test_admin_export_is_off_without_a_token(tmp_path):
    app = create_app(CAT, f"sqlite:///{tmp_path / 's.sqlite'}")
    with in_process(app) as c:
        r = c.get("/api/admin/export", headers=auth("anything"))
    assert r.status_code == 404 and "off" in r.json()["error"]


def test_an_export_never_overwrites_or_mixes(server, tmp_path, capsys):
    """--out must be new or empty (else exit 2, nothing written); --force replaces an earlier
    export whole (and nothing else);
    the printed paths are the folder's own; lists in cells space-separated (a record is
    JSON: the collect's export)."""
    from tripletsearch.cli import main

    client, app, db = server
    run_search(client, start(client, mode="mix"), MixPerson([0.3, 0.6, 0.2], 3.0, rng(2)))
    # a find search of its own (the module's others may run in another worker)
    run_search(client, start(client, mode="find", n_choices=4), FindPerson(CAT, 7, 3.0, rng(3)))
    out = tmp_path / "export"
    out.mkdir()
    (out / "old-notes.txt").write_text("an earlier export's file")
    argv = ["export", "--database", f"sqlite:///{db}", "--out", str(out) + "/", "--demo", "colours"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "exists and is not empty" in err and "--force" in err and len(err.splitlines()) == 1
    assert sorted(p.name for p in out.iterdir()) == ["old-notes.txt"]  # nothing written
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export"]  # no stray folder
    assert main([*argv, "--force"]) == 2  # --force: an earlier export only
    err = capsys.readouterr().err
    assert "is not an earlier export (it holds no datapackage.json of an export)" in err
    assert sorted(p.name for p in out.iterdir()) == ["old-notes.txt"]  # nothing written
    (out / "old-notes.txt").unlink()
    assert main(argv) == 0  # an empty folder: written
    (out / data_path("answers.csv")).write_text("an earlier export's file, edited")
    assert main([*argv, "--force"]) == 0
    said = capsys.readouterr().out
    assert "//" not in said and f"to {out}" in said
    names = sorted(p.relative_to(out).as_posix() for p in out.rglob("*"))
    edited = (out / data_path("answers.csv")).read_text()
    assert "edited" not in edited  # replaced whole, never mixed
    data = {data_path(n) for n in ("triplets.csv", "collect_triplets.csv", "answers.csv")}
    assert {*data, "export.json"} <= set(names)
    meta = json.loads((out / "export.json").read_text())
    assert meta["version"] == 8
    assert set(meta["files"]) == {
        data_path(n) for n in ("triplets.csv", "collect_triplets.csv", "collect_trials.csv")
    }
    with open(out / data_path("answers.csv"), newline="") as fh:
        rows = list(csv.DictReader(fh))
    mixes = [r["shown"] for r in rows if r["mode"] == "mix"]  # a list: space-separated
    assert mixes and all(re.fullmatch(r"#[0-9a-f]{6} #[0-9a-f]{6}", s) for s in mixes)
    finds = [r["shown"] for r in rows if r["mode"] == "find"]
    assert finds and all(re.fullmatch(r"\d+( \d+)*", s) for s in finds)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export"]  # no temporary left


def rng(seed):
    return np.random.default_rng(seed)

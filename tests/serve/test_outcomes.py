"""Completion codes per outcome (finished, withdrawn), recorded once and never depending on
a participant's checks; the participants' table
(:mod:`tripletsearch.serve.participation.roster`) of a study and a collect, and its
``participants.csv`` in the export."""

from __future__ import annotations

import csv
import json

import pytest
import sqlalchemy as sa

from serve.helpers import (
    answer_all,
    claiming,
    collect_toml,
    finding,
    in_process,
    study_toml,
    write_design,
)
from tripletsearch.serve import create_app
from tripletsearch.serve.collect import load_collect
from tripletsearch.serve.commands.export_folder import experiment_roster, write_export
from tripletsearch.serve.export import TABLES as DECLARED
from tripletsearch.serve.export import data_path
from tripletsearch.serve.store import Store
from tripletsearch.serve.store.tables import participants as t
from tripletsearch.serve.study import load_study

FIN = "https://app.prolific.com/submissions/complete?cc=FIN-1"
WD = "https://app.prolific.com/submissions/complete?cc=WD-2"
TABLES = (
    f'\n[completion.finished]\ncode = "FIN-1"\nredirect = "{FIN}"\n'
    f'[completion.withdrawn]\ncode = "WD-2"\nredirect = "{WD}"\n'
)


def enrol(c, **extra):
    r = c.post("/api/participants", json={"consent": True, **extra})
    assert r.status_code == 201, r.text
    p = r.json()
    return p["id"], {"Authorization": "Bearer " + p["token"]}


def post(c, pid, what, h, body=None, status=200):
    r = c.post(f"/api/participants/{pid}/{what}", json=body or {}, headers=h)
    assert r.status_code == status, r.text
    return r.json()


@pytest.fixture
def collect(tmp_path):
    text = collect_toml(catalogue="colours", n_choices=2, max_queries=6, debrief="Thanks!")
    cfg = load_collect(write_design(tmp_path, "collect.toml", text + TABLES))
    url = f"sqlite:///{tmp_path / 'c.sqlite'}"
    with in_process(create_app(cfg.catalogue, url, collect=cfg)) as c:
        yield cfg, c, Store(url), url


def test_the_file_keys_per_outcome_and_their_errors(tmp_path):
    cfg = load_collect(write_design(tmp_path, "a.toml", collect_toml() + TABLES))
    assert cfg.completion == {
        "finished": {"code": "FIN-1", "redirect": FIN},
        "withdrawn": {"code": "WD-2", "redirect": WD},
    }
    assert (cfg.completion_code, cfg.redirect) == ("FIN-1", FIN)  # the finished outcome's
    old = load_study(
        write_design(tmp_path, "b.toml", study_toml(completion_code="X", redirect=FIN))
    )
    assert old.completion == {"finished": {"code": "X", "redirect": FIN}}
    assert load_study(write_design(tmp_path, "c.toml", study_toml())).completion == {}
    bad = [  # (top-level keys, tables, what the error says)
        ({"completion_code": "X"}, TABLES, "completion_code and completion.finished"),
        ({}, '[completion.done]\ncode = "A"\n', "completion.done: unknown outcome"),
        ({}, '[completion.withdrawn]\ncode = ""\n', "completion.withdrawn.code"),
        ({}, '[completion.withdrawn]\ncode = "a\\tb"\n', "printable"),
        ({}, '[completion.withdrawn]\nredirect = "ftp://x"\n', "withdrawn.redirect"),
        ({}, '[completion.withdrawn]\nurl = "https://x"\n', "completion.withdrawn:"),
        ({}, f'[completion.finished]\ncode = "A"\nredirect = "{FIN}"\n', "cc=FIN-1"),
    ]
    for i, (top, tables, said) in enumerate(bad):
        for load, text in ((load_study, study_toml), (load_collect, collect_toml)):
            path = write_design(tmp_path, f"bad{i}.toml", text(**top) + tables)
            with pytest.raises(ValueError, match=said) as err:
                load(path)
            assert str(err.value).startswith(str(path))


def test_each_outcome_gets_its_code_and_redirect_recorded_once(collect):
    cfg, c, store, _ = collect
    a, ha = enrol(c)
    end = answer_all(c, a, ha, body=claiming(900))
    assert (end["outcome"], end["completion_code"], end["redirect"]) == ("finished", "FIN-1", FIN)
    assert store.participant(a).code == "FIN-1"
    assert post(c, a, "next", ha) == end == post(c, a, "debrief", ha)
    b, hb = enrol(c)
    post(c, b, "next", hb)
    post(c, b, "debrief", hb, status=409)  # before the end
    gone = post(c, b, "withdraw", hb)
    assert gone["withdrawn"] is True and gone["done"] is True
    assert (gone["outcome"], gone["completion_code"], gone["redirect"]) == ("withdrawn", "WD-2", WD)
    assert store.participant(b).code == "WD-2"
    back = post(c, b, "next", hb)  # they come back: their end screen, not a 409
    assert back == {k: v for k, v in gone.items() if k != "withdrawn"} == post(c, b, "debrief", hb)
    post(c, b, "answer", hb, {"screen": 0, "choice": 0}, status=409)
    # a finished participant cannot withdraw: a 409 carrying the finished end screen
    late = post(c, a, "withdraw", ha, status=409)
    assert "finished every part" in late.pop("error")
    assert late == end
    assert store.participant(a).withdrawn is None and store.participant(a).code == "FIN-1"
    assert post(c, a, "next", ha) == end  # still finished
    rows = {r["participant"]: r for r in experiment_roster(store, fast_server_ms=0)}
    assert (rows[a]["outcome"], rows[a]["code"]) == ("finished", "FIN-1")


def test_a_flagged_participant_gets_the_same_code(collect):
    cfg, c, store, url = collect
    quick, hq = enrol(c)
    slow, hs = enrol(c)
    ends = [
        answer_all(c, quick, hq, body=claiming(20)),
        answer_all(c, slow, hs, body=claiming(900)),
    ]
    # the server's clock check off (0): in process every answer comes at once
    rows = {r["participant"]: r for r in experiment_roster(store, fast_server_ms=0)}
    assert rows[quick]["flagged"] and "page_time" in rows[quick]["flagged_by"]
    assert "20 ms" in rows[quick]["why"] and not rows[slow]["flagged"]
    assert ends[0]["completion_code"] == ends[1]["completion_code"] == "FIN-1"
    assert ends[0] == {**ends[1]}
    assert rows[quick]["code"] == rows[slow]["code"] == "FIN-1"


def test_the_roster_of_a_collect_with_a_duplicate_and_its_csv(collect, tmp_path):
    cfg, c, store, url = collect
    done, hd = enrol(c)
    answer_all(c, done, hd, body=claiming(900))
    gone, hg = enrol(c)
    post(c, gone, "withdraw", hg)
    started, hs = enrol(c)
    post(c, started, "next", hs)
    params = json.dumps({"PROLIFIC_PID": "pp-1", "STUDY_ID": "s"})
    with sa.create_engine(url).begin() as conn:  # two of one id, one kept without a key
        conn.execute(
            sa.update(t)
            .where(t.c.id == done)
            .values(platform_id="pp-1", platform_key="pp-1", platform_params=params)
        )
        conn.execute(sa.update(t).where(t.c.id == started).values(platform_id="pp-1"))
    rows = experiment_roster(store)
    assert [r["participant"] for r in rows] == [done, gone, started]
    assert [r["number"] for r in rows] == [0, 1, 2]
    assert [r["outcome"] for r in rows] == ["finished", "withdrawn", "started"]
    assert [r["code"] for r in rows] == ["FIN-1", "WD-2", None]
    assert [r["duplicate"] for r in rows] == [False, False, True]
    assert rows[0]["platform_params"] == {"PROLIFIC_PID": "pp-1", "STUDY_ID": "s"}
    assert {r["experiment"] for r in rows} == {cfg.identity().name}
    write_export(store, tmp_path / "out", experiment=cfg.fingerprint)
    with open(tmp_path / "out" / data_path("participants.csv"), newline="") as fh:
        got = list(csv.DictReader(fh))
    assert list(got[0]) == DECLARED["participants.csv"].names
    assert [g["participant"] for g in got] == [done, gone, started]
    assert [g["duplicate"] for g in got] == ["false", "false", "true"]
    assert [g["code"] for g in got] == ["FIN-1", "WD-2", ""]
    assert json.loads(got[0]["platform_params"]) == {"PROLIFIC_PID": "pp-1", "STUDY_ID": "s"}
    assert got[1]["platform_params"] == "" and got[2]["flagged"] == "false"
    assert got[0]["enrolled"].endswith("+00:00")
    # described in the export's Data Package, and valid by it (platform_params: JSON)
    frictionless = pytest.importorskip("frictionless")
    from tripletsearch.serve.export import describe_folder

    pkg = describe_folder(tmp_path / "out", title="outcomes")
    (res,) = [r for r in pkg["resources"] if r["path"] == data_path("participants.csv")]
    assert [f["name"] for f in res["schema"]["fields"]] == DECLARED["participants.csv"].names
    report = frictionless.validate(str(tmp_path / "out" / "datapackage.json"))
    assert report.valid, report.flatten(["rowNumber", "fieldName", "type", "note"])


def test_participants_csv_never_holds_a_spreadsheet_formula(collect, tmp_path):
    """A platform id is the participant's own text: one that a spreadsheet would run as a
    formula is written after a ``'``; others as they are."""
    from tripletsearch.serve.export import cell

    cfg, c, store, url = collect
    ids = ['=HYPERLINK("http://evil.example","x")', "+1+1", "-2", "@SUM(A1)", "pp-2"]
    for pid in ids:
        enrol(c, platform_id=pid)
    write_export(store, tmp_path / "out", experiment=cfg.fingerprint)
    with open(tmp_path / "out" / data_path("participants.csv"), newline="") as fh:
        got = [g["platform_id"] for g in csv.DictReader(fh)]
    assert got == ["'" + i for i in ids[:4]] + ["pp-2"]
    assert [cell(v) for v in ("\tx", "\rx", "a=b", 5, -1)] == ["'\tx", "'\rx", "a=b", "5", "-1"]


def test_the_roster_of_a_study(tmp_path):
    s = load_study(write_design(tmp_path, "s.toml", study_toml(targets=2) + TABLES))
    url = f"sqlite:///{tmp_path / 's.sqlite'}"
    with in_process(create_app(s.catalogue, url, study=s)) as c:
        a, ha = enrol(c)
        reply = answer_all(c, a, ha, body=finding(s.catalogue))  # the nearest, then found
        assert (reply["outcome"], reply["completion_code"]) == ("finished", "FIN-1")
        b, hb = enrol(c)
        post(c, b, "next", hb)
        out = tmp_path / "out"
        write_export(Store(url), out)
    rows = experiment_roster(Store(url), fast_server_ms=0)  # (answered instantly, in process)
    assert [(r["outcome"], r["code"], r["flagged"]) for r in rows] == [
        ("finished", "FIN-1", False),
        ("started", None, False),
    ]
    with open(out / data_path("participants.csv"), newline="") as fh:
        assert [g["outcome"] for g in csv.DictReader(fh)] == ["finished", "started"]


def test_no_participants_no_participants_csv(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'e.sqlite'}")
    store.setup()
    write_export(store, tmp_path / "out")
    assert not (tmp_path / "out" / data_path("participants.csv")).exists()


def test_the_dashboards_show_outcome_code_and_duplicates(tmp_path):
    from tripletsearch.serve.config import ServeConfig

    s = load_study(write_design(tmp_path, "s.toml", study_toml(targets=1) + TABLES))
    url = f"sqlite:///{tmp_path / 's.sqlite'}"
    admin = {"Authorization": "Bearer t"}
    app = create_app(s.catalogue, url, study=s, config=ServeConfig(admin_token="t"))
    with in_process(app) as c:
        a, ha = enrol(c)
        post(c, a, "withdraw", ha)
        b, _ = enrol(c)
        with sa.create_engine(url).begin() as conn:
            conn.execute(sa.update(t).where(t.c.id == b).values(platform_id="pp-9"))
        assert c.get("/api/admin/study").status_code == 401
        board = c.get("/api/admin/study", headers=admin).json()
        assert c.get("/study/dashboard").status_code == 200
        assert c.get("/collect/dashboard").status_code == 404
    assert board["kind"] == "study" and board["title"] == s.title
    got = [
        (p["participant"], p["outcome"], p["code"], p["duplicate"]) for p in board["participants"]
    ]
    assert got == [(a, "withdrawn", "WD-2", False), (b, "started", None, True)]


def test_the_collect_dashboard_rows_carry_the_table(collect):
    cfg, c, store, url = collect
    from tripletsearch.serve.collect.dashboard import collect_dashboard

    a, ha = enrol(c)
    answer_all(c, a, ha, body=claiming(20))
    b, hb = enrol(c)
    post(c, b, "withdraw", hb)
    board = collect_dashboard(store, cfg, fast_server_ms=0)
    rows = {p["id"]: p for p in board["participants"]}
    assert (rows[a]["outcome"], rows[a]["code"], rows[a]["flagged_by"]) == (
        "finished",
        "FIN-1",
        "page_time",
    )
    assert (rows[b]["outcome"], rows[b]["code"], rows[b]["duplicate"]) == (
        "withdrawn",
        "WD-2",
        False,
    )

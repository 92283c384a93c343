"""The study ``export --collect`` writes keeps the participants' task: the collect's
``show_names`` (pictures only stay pictures only), the search task's title (or the
owner's ``--title``), and the search task's own texts, never the collect's instructions or
consent (they describe another task)."""

from __future__ import annotations

import pytest

from serve.helpers import claiming, in_process, take_part
from tripletsearch.cli import main
from tripletsearch.serve import create_app
from tripletsearch.serve.collect import load_collect
from tripletsearch.serve.collect.export import study_title
from tripletsearch.serve.study import load_study
from tripletsearch.serve.study.file import DEFAULT_CONSENT

COLLECT = dict(  # this collect file's keys over the shared ones
    title="Pictures alike",
    max_queries=40,
    burn_in=5,
    seed=2,
    show_names=False,
    instructions="Pick the picture most like the one on top.",
    consent="We ask which pictures look alike.",
)


@pytest.fixture
def collected(tmp_path, collect_file):
    collect_file(tmp_path, **COLLECT)
    cfg = load_collect(tmp_path / "collect.toml")
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    with in_process(create_app(cfg.catalogue, db, collect=cfg)) as c:
        for _ in range(2):
            take_part(c, body=claiming(800))
    return db


@pytest.mark.parametrize("title", [None, "Find the picture you saw"])
def test_the_exported_study_keeps_the_participants_task(collected, tmp_path, title):
    out = tmp_path / "export"
    argv = ["export", "--database", collected, "--out", str(out)]
    # (people in process answer at once: the server's clock check off, as the server ran)
    argv += ["--fast-server-ms=0", "--collect", str(tmp_path / "collect.toml")]
    assert main(argv + ([] if title is None else ["--title", title])) == 0
    text = (out / "study.toml").read_text()
    assert "Pick the picture" not in text and "which pictures look alike" not in text
    study = load_study(out / "study.toml")
    assert study.title == (title or study_title(study.catalogue))
    assert study.show_names is False
    assert study.consent == DEFAULT_CONSENT  # the search task's own text
    app = create_app(study.catalogue, f"sqlite:///{tmp_path / 'study.sqlite'}", study=study)
    with in_process(app) as c:  # what a participant's page is given
        info = c.get("/api/experiment").json()
    assert info["title"] == study.title and info["show_names"] is False
    assert info["consent"] == DEFAULT_CONSENT


def test_title_is_for_a_collects_study_only(collected, tmp_path, capsys):
    argv = ["export", "--database", collected, "--out", str(tmp_path / "o"), "--title", "X"]
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == (
        "error: --title: the title of the study an export --collect writes"
    )


ENDS = (
    '\n[completion.finished]\ncode = "FIN-7"\n'
    'redirect = "https://app.prolific.com/submissions/complete?cc=FIN-7"\n'
    '[completion.withdrawn]\ncode = "WD-8"\n'
)
PID = "5f1a2b3c4d5e6f7a8b9c0d1e"


def test_the_exported_study_keeps_the_collects_platform_and_codes(tmp_path, collect_file):
    """Served as written, the study of a collect on Prolific asks for the id, and a
    withdraw returns the collect's code; its title is the search task's, not the collect's."""
    path = collect_file(tmp_path, **{**COLLECT, "max_queries": 12, "burn_in": 2})
    path.write_text('platform = "prolific"\nrequire_platform_id = true\n' + path.read_text() + ENDS)
    cfg = load_collect(path)
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    with in_process(create_app(cfg.catalogue, db, collect=cfg)) as c:
        for i in range(2):
            ids = {"PROLIFIC_PID": PID[:-1] + str(i), "SESSION_ID": f"v{i}"}
            take_part(c, body=claiming(800), platform=ids)
    out = tmp_path / "export"
    argv = ["export", "--database", db, "--out", str(out), "--fast-server-ms=0"]
    assert main([*argv, "--collect", str(path)]) == 0
    study = load_study(out / "study.toml")
    assert study.platform is not None and study.platform.name == "prolific"
    assert study.platform.required and study.completion == cfg.completion
    assert study.title != cfg.title and "alike" not in (out / "study.toml").read_text()
    app = create_app(study.catalogue, f"sqlite:///{tmp_path / 'study.sqlite'}", study=study)
    with in_process(app) as c:
        assert c.get("/api/experiment").json()["title"] == study.title
        r = c.post("/api/participants", json={"consent": True})
        assert r.status_code >= 400 and "PROLIFIC_PID" in r.text  # no id: no participant
        ids = {"PROLIFIC_PID": PID, "SESSION_ID": "s1"}
        p = c.post("/api/participants", json={"consent": True, "platform": ids}).json()
        h = {"Authorization": "Bearer " + p["token"]}
        gone = c.post(f"/api/participants/{p['id']}/withdraw", json={}, headers=h).json()
        assert gone["outcome"] == "withdrawn" and gone["completion_code"] == "WD-8"

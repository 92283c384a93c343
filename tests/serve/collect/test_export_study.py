"""The study ``export --collect`` writes keeps the participants' task: the collect's
``show_names`` (pictures only stay pictures only), its title without a suffix (or the
owner's ``--title``), and the search task's own texts, never the collect's instructions or
consent (they describe another task)."""

from __future__ import annotations

import pytest

from serve.helpers import enrol, in_process
from tripletsearch.cli import main
from tripletsearch.serve import create_app
from tripletsearch.serve.collect import load_collect
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
            pr, h = enrol(c)
            base = f"/api/collect/participants/{pr['id']}"
            reply = c.post(f"{base}/next", json={}, headers=h).json()
            while "query" in reply:
                body = {"screen": reply["query"]["screen"], "choice": 0, "response_ms": 800}
                reply = c.post(f"{base}/answer", json=body, headers=h).json()
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
    assert study.title == (title or "Pictures alike")
    assert study.show_names is False
    assert study.consent == DEFAULT_CONSENT  # the search task's own text
    app = create_app(study.catalogue, f"sqlite:///{tmp_path / 'study.sqlite'}", study=study)
    with in_process(app) as c:  # what a participant's page is given
        info = c.get("/api/study").json()
    assert info["title"] == study.title and info["show_names"] is False
    assert info["consent"] == DEFAULT_CONSENT


def test_title_is_for_a_collects_study_only(collected, tmp_path, capsys):
    argv = ["export", "--database", collected, "--out", str(tmp_path / "o"), "--title", "X"]
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == (
        "error: --title: the title of the study an export --collect writes"
    )

"""``max_queries`` may go up, never down, once people took part: the stored value is the
highest a start gave it, and a file that lowers it (the very file people began with, after a
start raised it) is refused with the value to write, not as a change of the design."""

from __future__ import annotations

import textwrap

import pytest

from serve.helpers import catalogue_folder, collect_toml, enrol, in_process, study_toml
from tripletsearch.serve import create_app
from tripletsearch.serve.collect import load_collect
from tripletsearch.serve.experiment import ExperimentChanged
from tripletsearch.serve.store import Store
from tripletsearch.serve.study import load_study

STUDY = study_toml(methods=None, n_choices=None)
COLLECT = collect_toml(n_choices=None)


def start_study(tmp_path, text, db):
    (tmp_path / "study.toml").write_text(text)
    study = load_study(tmp_path / "study.toml")
    return create_app(study.catalogue, db, study=study)


def start_collect(tmp_path, text, db):
    (tmp_path / "collect.toml").write_text(textwrap.dedent(text))
    cfg = load_collect(tmp_path / "collect.toml")
    return create_app(cfg.catalogue, db, collect=cfg)


def begin(kind, c):
    """A participant enrolled; in a study, their first search begun."""
    pr, h = enrol(c)
    if kind == "study":
        c.post(f"/api/participants/{pr['id']}/next", json={}, headers=h)


@pytest.mark.parametrize(
    "kind, text, start, old, new",
    [
        ("study", STUDY, start_study, "max_queries = 30", "max_queries = 45"),
        ("collect", COLLECT, start_collect, "max_queries = 12", "max_queries = 20"),
    ],
)
def test_the_original_file_after_a_raise_is_told_what_to_write(
    tmp_path, kind, text, start, old, new
):
    if kind == "collect":
        catalogue_folder(tmp_path)
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    with in_process(start(tmp_path, text, db)) as c:
        begin(kind, c)
    with in_process(start(tmp_path, text.replace(old, new), db)) as c:  # raised: applies
        begin(kind, c)
    (row,) = Store(db).experiments()
    highest = int(new.split()[-1])
    assert row.settings["max_queries"] == highest
    with pytest.raises(ExperimentChanged) as refused:  # the file people began with
        start(tmp_path, text, db)
    said = str(refused.value)
    assert f"took part in {kind} {row.name!r} with {new}" in said
    assert f"this file says {old}" in said and "may be raised, never lowered" in said
    assert f"Write {new} (or more)" in said
    assert "changes" not in said and "Undo" not in said  # not a change of the design
    assert Store(db).experiments()[0].settings["max_queries"] == highest  # kept
    start(tmp_path, text.replace(old, new), db)  # as it says: goes on


def test_a_design_change_and_a_lowered_max_queries_are_both_said(tmp_path):
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    with in_process(start_study(tmp_path, STUDY, db)) as c:
        begin("study", c)
    edited = STUDY.replace("seed = 3", "seed = 4").replace("max_queries = 30", "max_queries = 9")
    with pytest.raises(ExperimentChanged) as refused:
        start_study(tmp_path, edited, db)
    said = str(refused.value)
    assert "this file changes seed, targets. Undo the change" in said  # (drawn with it)
    assert "It also lowers max_queries from 30 to 9: write max_queries = 30 or more." in said

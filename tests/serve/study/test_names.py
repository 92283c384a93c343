"""Experiments keep their data: a study's name maps to its rows whatever safe edits its file
gets; an edit that would change what people took part in is refused before the server
listens, naming the keys; a new name starts a new study in the same database; a database
of an older version is adopted by an unchanged file; report and export list the
experiments and take --name."""

from __future__ import annotations

import sqlite3

import pytest

from serve import helpers
from serve.helpers import in_process, study_toml
from tripletsearch.cli import main
from tripletsearch.serve import create_app
from tripletsearch.serve.experiment import ExperimentChanged, derive_name
from tripletsearch.serve.store import Store
from tripletsearch.serve.study import load_study

STUDY = study_toml(consent="We record clicks under a random id.")


def write(tmp_path, text, name="study.toml"):
    (tmp_path / name).write_text(text)
    return tmp_path / name


def enrol(c):
    pr, h = helpers.enrol(c)
    n = c.post(f"/api/participants/{pr['id']}/next", json={}, headers=h).json()
    return pr, n


def start(tmp_path, text, db, **kw):
    study = load_study(write(tmp_path, text))
    return create_app(study.catalogue, db, study=study, **kw), study


def test_a_name_is_derived_from_the_title():
    assert derive_name("Find the colour!", "study") == "find-the-colour"
    assert derive_name("  Café  noir: 2 ", "collect") == "cafe-noir-2"
    assert derive_name("???", "study") == "study"


def test_safe_edits_apply_and_keep_the_participants(tmp_path):
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    app, study = start(tmp_path, STUDY, db)
    with in_process(app) as c:
        first, _ = enrol(c)
    edited = (
        STUDY.replace('title = "Find the colour"', 'title = "Find your colour"')
        .replace("max_queries = 30", "max_queries = 40")
        .replace("We record clicks", "We record your clicks")
        + 'completion_code = "DONE-1"\nshow_names = false\n'
    )
    app, again = start(tmp_path, edited, db)
    with in_process(app) as c:
        info = c.get("/api/experiment").json()
        assert info["title"] == "Find your colour" and info["show_names"] is False
        second, n = enrol(c)
    store = Store(db)
    (row,) = store.experiments()
    assert (row.name, row.kind) == ("find-the-colour", "study")  # derived at its first start
    assert row.settings["title"] == "Find your colour" and row.settings["max_queries"] == 40
    assert {first["id"], second["id"]} <= store.participant_ids(row.key)
    assert store.participant(second["id"]).number == 1  # the same study: numbered on
    assert store.participant(second["id"]).study == store.participant(first["id"]).study
    (session,) = store.participant_sessions(second["id"])
    assert session.params["max_queries"] == 40  # for the searches that start afterwards


@pytest.mark.parametrize(
    "edit, changed",
    [
        (("seed = 3", "seed = 4"), "seed"),
        (("targets = 3", "targets = [1, 2, 3]"), "targets"),
        (('methods = ["gamma-ckl", "gauss"]', 'methods = ["gamma-ckl"]'), "methods"),
        (("n_choices = 4", "n_choices = 3"), "n_choices"),
        (("seed = 3", "seed = 3\ngamma = 2.0"), "gamma"),
        (("seed = 3", 'seed = 3\nexclude = ["red"]'), "exclude"),
        (("seed = 3", "seed = 3\nguesses = 4"), "guesses"),
    ],
)
def test_an_edit_people_took_part_in_is_refused_naming_the_keys(tmp_path, edit, changed):
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    app, _ = start(tmp_path, STUDY, db)
    with in_process(app) as c:
        enrol(c)
    with pytest.raises(ExperimentChanged) as refused:
        start(tmp_path, STUDY.replace(*edit), db)
    message = str(refused.value)
    said = message.split("this file changes ")[1].split(". ")[0].split(", ")
    # (an exclude also moves the targets' ids and sigma="auto"'s value: named too)
    assert changed in said and len(said) <= 3, said
    assert "1 participant took part in study 'find-the-colour'" in message
    assert "Undo the change" in message and 'name = "..."' in message
    assert len(Store(db).experiments()) == 1  # nothing registered


def test_serve_refuses_the_edit_in_one_line_before_listening(tmp_path, capsys):
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    app, _ = start(tmp_path, STUDY, db)
    with in_process(app) as c:
        enrol(c)
    file = write(tmp_path, STUDY.replace("seed = 3", "seed = 5"))
    argv = ["serve", "--study", str(file), "--database", db, "--port", "9"]
    assert main([*argv, "--admin-token", "x"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "changes seed" in err[0]


def test_before_anyone_took_part_an_edit_takes_the_new_design(tmp_path):
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    start(tmp_path, STUDY, db)
    start(tmp_path, STUDY.replace("seed = 3", "seed = 8"), db)  # nobody enrolled: fine
    (row,) = Store(db).experiments()
    assert row.design["seed"] == 8


def test_k_is_no_change_and_a_new_name_is_a_new_study(tmp_path, capsys):
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    app, _ = start(tmp_path, STUDY, db)
    with in_process(app) as c:
        enrol(c)
    with pytest.warns(DeprecationWarning, match="'k' was renamed"):
        app, _ = start(tmp_path, STUDY.replace("n_choices = 4", "k = 4"), db)
    second = STUDY.replace("seed = 3", 'seed = 4\nname = "second"')
    app, other = start(tmp_path, second, db)
    with in_process(app) as c:
        pr, _ = enrol(c)
    store = Store(db)
    names = {r.name: r for r in store.experiments()}
    assert set(names) == {"find-the-colour", "second"}
    assert store.participant(pr["id"]).study == names["second"].key
    assert store.participant(pr["id"]).number == 0  # numbered within its own study
    # report and export list both; report needs --name between them
    out = tmp_path / "report"
    assert main(["report", "--database", db, "--out", str(out)]) == 2
    said = capsys.readouterr()
    assert "study 'find-the-colour': 1 participants" in said.out
    assert "study 'second': 1 participants" in said.out
    assert "--name: this database holds several" in said.err
    assert main(["report", "--database", db, "--out", str(out), "--name", "second"]) == 0
    said = capsys.readouterr().out
    assert "study 'second'" in said and "1 searches (1 unfinished, counted apart)" in said
    assert main(["report", "--database", db, "--out", str(out), "--name", "third"]) == 2
    assert "no study 'third' here" in capsys.readouterr().err


def test_an_unchanged_file_adopts_its_study_of_an_older_version(tmp_path):
    """A database of schema 4 (no names) keeps its participants under the old identity;
    the same file served again adopts them, and a report reads them under a derived name
    until then."""
    db_file = tmp_path / "s.sqlite"
    db = f"sqlite:///{db_file}"
    app, study = start(tmp_path, STUDY, db)
    with in_process(app) as c:
        first, _ = enrol(c)
    with sqlite3.connect(db_file) as con:  # as 0.2.0 left it: no experiments table
        con.execute("DROP TABLE ts_experiments")
        con.execute("UPDATE ts_meta SET value = '4' WHERE key = 'schema_version'")
    assert Store(db).setup() == 4
    assert Store(db).experiments() == []
    from tripletsearch.serve.experiment import listing

    (legacy,) = listing(Store(db))
    assert legacy["name"] == f"study-{study.design_fingerprint[:8]}"
    assert legacy["participants"] == 1
    app, _ = start(tmp_path, STUDY, db)
    with in_process(app) as c:
        second, _ = enrol(c)
    store = Store(db)
    (row,) = store.experiments()
    assert row.key == study.design_fingerprint  # its rows stayed where they were
    assert store.participant(second["id"]).number == 1
    assert store.participant_ids(row.key) == {first["id"], second["id"]}

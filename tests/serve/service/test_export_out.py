"""``tripletsearch export`` never deletes what it must not: an ``--out`` that is or holds
the SQLite database (its path given relative, or through a symlink), or holds a study or
collect file of the database's experiments, is refused in one line (exit 2), with or
without ``--force``, and nothing is touched."""

from __future__ import annotations

import os

import pytest

from serve.helpers import catalogue_folder, collect_toml, in_process, study_toml
from tripletsearch.cli import main
from tripletsearch.serve import create_app
from tripletsearch.serve.collect import load_collect
from tripletsearch.serve.store import Store
from tripletsearch.serve.study import load_study

STUDY = study_toml(methods=None, n_choices=None, max_queries=None)
COLLECT = collect_toml(catalogue="../items", n_choices=None, seed=None)


def database(folder):
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / "db.sqlite"
    Store(f"sqlite:///{db}").setup()
    return db


def refused(capsys, argv, what):
    for force in ([], ["--force"]):
        assert main(["export", *argv, *force]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error: --out: ") and what in err[0], err


@pytest.mark.parametrize("out", ["db", "folder", "parent", "relative", "symlink", "wal"])
def test_an_out_that_is_or_holds_the_database_is_refused(tmp_path, capsys, monkeypatch, out):
    db = database(tmp_path / "data")
    (tmp_path / "data" / "notes.txt").write_text("keep me")
    url = f"sqlite:///{db}"
    if out == "relative":  # the URL and --out both relative to the working directory
        monkeypatch.chdir(tmp_path / "data")
        url, given = "sqlite:///db.sqlite", "."
    elif out == "symlink":
        os.symlink(tmp_path / "data", tmp_path / "link")
        given = str(tmp_path / "link")
    elif out == "wal":
        given = str(db) + "-wal"
    else:
        given = {"db": db, "folder": db.parent, "parent": tmp_path}[out]
    refused(capsys, ["--database", url, "--out", str(given)], "the database")
    Store.existing(f"sqlite:///{db}").check()  # there, its tables too
    assert (tmp_path / "data" / "notes.txt").exists()
    assert not [p for p in (tmp_path / "data").iterdir() if p.name.startswith(".")]


def test_an_out_holding_a_study_or_collect_file_of_the_database_is_refused(tmp_path, capsys):
    db = database(tmp_path / "db")
    url = f"sqlite:///{db}"
    (tmp_path / "served").mkdir()
    (tmp_path / "served" / "study.toml").write_text(STUDY)
    study = load_study(tmp_path / "served" / "study.toml")
    with in_process(create_app(study.catalogue, url, study=study)):
        pass  # a server started: the study is registered with its file
    catalogue_folder(tmp_path)
    (tmp_path / "collecting").mkdir()
    (tmp_path / "collecting" / "collect.toml").write_text(COLLECT)
    cfg = load_collect(tmp_path / "collecting" / "collect.toml")
    with in_process(create_app(cfg.catalogue, url, collect=cfg)):
        pass
    refused(
        capsys,
        ["--database", url, "--out", str(tmp_path / "served")],
        "the file of study 'find-the-colour' in this database",
    )
    assert (tmp_path / "served" / "study.toml").read_text() == STUDY
    refused(capsys, ["--database", url, "--out", str(tmp_path / "collecting")], "collect 'alike'")
    # export --collect: its file and its catalogue folder are read, so kept too
    argv = ["--database", url, "--collect", str(tmp_path / "collecting" / "collect.toml")]
    refused(capsys, [*argv, "--out", str(tmp_path / "items")], "items")
    # elsewhere: written (and --force replaces an earlier export there)
    (tmp_path / "old").mkdir()
    assert main(["export", "--database", url, "--out", str(tmp_path / "old")]) == 0
    (tmp_path / "old" / "export.json").unlink()
    assert main(["export", "--database", url, "--out", str(tmp_path / "old"), "--force"]) == 0
    assert (tmp_path / "old" / "export.json").exists()

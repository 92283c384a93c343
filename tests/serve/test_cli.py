"""The command line as a new user meets it: help in plain text with defaults, a bare
``tripletsearch``, export and report on a database that is not there, and the report's
people's gamma at the edge of the range it was fitted on."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys

import pytest

from tripletsearch.cli import main
from tripletsearch.serve.study.report import GAMMA_RANGE, MAX_LAPSE, format_report

pytest.importorskip("sqlalchemy")


def test_bare_command_prints_the_help_and_runs_nothing():
    out = subprocess.run(
        [sys.executable, "-m", "tripletsearch"], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0
    assert out.stdout.startswith("usage: tripletsearch")
    for command in ("demo", "reproduce", "serve", "export", "report", "prune"):
        assert re.search(rf"^\s+{command}\b", out.stdout, re.M), command
    assert "Simulated" not in out.stdout  # the demo did not run
    assert "``" not in out.stdout


@pytest.mark.parametrize("command", [[], ["serve"], ["export"], ["report"], ["reproduce"]])
def test_help_is_plain_text_with_defaults(command, capsys):
    with pytest.raises(SystemExit) as stop:
        main([*command, "--help"])
    assert stop.value.code == 0
    text = capsys.readouterr().out
    assert "``" not in text and ":class:" not in text and ":func:" not in text
    if command == ["serve"]:
        assert "--port PORT           port to listen on (default: 8000)" in text
        assert "(default: 127.0.0.1)" in text and "worker processes (default: 1)" in text
        assert "(default: info)" in text
    if command == ["reproduce"]:
        assert "(default: reproduce-out)" in text


@pytest.mark.parametrize("command", ["export", "report", "prune"])
def test_a_missing_database_is_named_and_not_created(command, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    args = {"export": ["--out", "x"], "report": ["--out", "x"], "prune": ["--older-than", "30"]}[
        command
    ]
    assert main([command, *args]) == 2  # the default database: none in this folder
    err = capsys.readouterr().err
    assert f"no database at {tmp_path / 'tripletsearch-sessions.sqlite'}" in err
    elsewhere = tmp_path / "sub" / "db.sqlite"
    assert main([command, "--database", f"sqlite:///{elsewhere}", *args]) == 2
    assert f"no database at {elsewhere}" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no file, no folder, no output


def test_a_database_without_the_service_tables_is_named(tmp_path, capsys):
    db = tmp_path / "other.sqlite"
    sqlite3.connect(db).execute("create table t (x)").connection.close()
    assert main(["export", "--database", f"sqlite:///{db}", "--out", str(tmp_path / "o")]) == 2
    assert "holds no tripletsearch tables" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def people_report(gamma, interval, lapse=0.02, lapse_interval=(0.0, 0.1)):
    return {
        "methods": [],
        "searches": [{"method": "gamma-CKL"}],
        "participants": 1,
        "paired": None,
        "people": {
            "gamma": gamma,
            "gamma_interval": list(interval),
            "gamma_range": list(GAMMA_RANGE),
            "lapse": lapse,
            "lapse_interval": list(lapse_interval),
            "max_lapse": MAX_LAPSE,
            "choices": 40,
            "level": 0.95,
        },
    }


def people_line(rep):
    (line,) = [x for x in format_report(rep).splitlines() if x.startswith("people's")]
    return line


def test_report_says_when_gamma_sits_at_the_edge_of_its_range():
    top = GAMMA_RANGE[1]
    line = people_line(people_report(top, (17.87, top)))
    assert "gamma >= 17.87" in line and "from below only" in line
    assert "gamma = 60.00" not in line
    line = people_line(people_report(GAMMA_RANGE[0], (GAMMA_RANGE[0], 0.4)))
    assert "gamma <= 0.40" in line and "from above only" in line
    line = people_line(people_report(3.1, (2.2, 4.5)))
    assert "gamma = 3.10 [2.20, 4.50]" in line and "lapse = 0.020 [0.000, 0.100]" in line
    line = people_line(people_report(3.1, (2.2, 4.5), 0.5, (0.3, MAX_LAPSE)))
    assert "lapse >= 0.300" in line
    line = people_line(people_report(3.1, GAMMA_RANGE))
    assert "gamma: not determined" in line


BAD_DATABASES = [
    ("/some/where/file.sqlite", "is not a database URL; for a SQLite file give sqlite:///"),
    ("sqlite:////no/such/folder/s.sqlite", "no folder /no/such/folder"),
    (
        "postgresql+psycopg://ada:s3cret@127.0.0.1:9/db",
        "cannot reach postgresql+psycopg://ada:***@",
    ),
]


@pytest.mark.parametrize("url, message", BAD_DATABASES)
@pytest.mark.parametrize("command", ["serve", "export", "report", "prune"])
def test_a_bad_database_is_one_line_not_a_traceback(command, url, message, tmp_path, capsys):
    args = {
        "serve": ["--demo", "colours", "--admin-token", "x", "--port", "9"],
        "export": ["--out", str(tmp_path / "x")],
        "report": ["--out", str(tmp_path / "x")],
        "prune": ["--older-than", "30"],
    }[command]
    if command != "serve" and url.startswith("sqlite:////no"):
        message = "no database at /no/such/folder/s.sqlite"
    assert main([command, "--database", url, *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert 1 <= len(err) <= 3 and message in err[0], err
    assert not any("Traceback" in line or "s3cret" in line for line in err)

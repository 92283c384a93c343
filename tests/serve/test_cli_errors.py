"""Every error line of the service's commands begins the same way, ``error: `` (argparse's
spelling), and is one line with exit code 2: a missing extra, a bad option, a bad file."""

from __future__ import annotations

import importlib.util

import pytest

from tripletsearch.cli import main

pytest.importorskip("sqlalchemy")


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: "), err
    return err[0]


def test_a_missing_extra_is_an_error_line(monkeypatch, capsys):
    real = importlib.util.find_spec
    # no seam: a missing extra is a missing package, found by importlib
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "uvicorn" else real(name, *a)
    )
    assert main(["serve", "--demo", "colours"]) == 2
    assert "pip install 'tripletsearch[serve]' (missing: uvicorn)" in one_error_line(capsys)


@pytest.mark.parametrize(
    "argv",
    [
        ["serve", "--demo", "colours", "--workers", "0"],
        ["serve", "--study", "no-such-study.toml"],
        ["prune", "--older-than", "-1"],
        ["export", "--out", "x", "--database", "sqlite:///no-such.sqlite"],
    ],
)
def test_each_command_says_its_errors_alike(argv, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TRIPLETSEARCH_ADMIN_TOKEN", "x")
    assert main(argv) == 2
    one_error_line(capsys)


def test_reproduce_says_its_errors_alike():
    for argv in (
        ["reproduce", "theory", "--workers", "1"],
        ["reproduce", "discrete", "--workers", "0"],
    ):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert str(exc.value.code).startswith("error: --"), exc.value.code


@pytest.mark.parametrize("value", ["9", "-1", "two"])
def test_guesses_out_of_range_is_argparses_error(value, capsys):
    with pytest.raises(SystemExit) as ended:
        main(["serve", "--demo", "colours", "--guesses", value])
    assert ended.value.code == 2
    assert "argument --guesses: expected an integer from 0 to 8" in capsys.readouterr().err

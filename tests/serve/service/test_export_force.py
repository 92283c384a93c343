"""``export --force`` replaces only an earlier export: a folder holding the files its own
manifest names (``datapackage.json``'s resources, the description files, every file the
export wrote) and nothing else, whatever the export's layout; never through a symbolic
link; anything else is refused in one line (exit 2) and left as it was."""

from __future__ import annotations

import json
import os

import pytest

from serve.helpers import answer_all, claiming, collect_toml, enrol, in_process
from tripletsearch.cli import main
from tripletsearch.serve import create_app
from tripletsearch.serve.collect import load_collect
from tripletsearch.serve.export.outfolder import CONTENTS_KEY, check_replaceable, export_files
from tripletsearch.serve.store import Store


def database(tmp_path):
    db = f"sqlite:///{tmp_path / 'db.sqlite'}"
    Store(db).setup()
    return db


def tree(folder):
    """Every path under ``folder`` (links not followed) with a file's bytes or a link's target."""
    out = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            p = os.path.join(root, name)
            rel = os.path.relpath(p, folder)
            if os.path.islink(p):
                out[rel] = ("link", os.readlink(p))
            elif os.path.isfile(p):
                out[rel] = open(p, "rb").read()
            else:
                out[rel] = "dir"
    return out


def refused(capsys, argv, what):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: --out: ") and what in err[0], err


def test_a_link_to_a_home_is_never_replaced(tmp_path, capsys):
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    (home / ".bashrc").write_text("export PATH\n")
    before = tree(home)
    os.symlink(home, tmp_path / "results")
    argv = ["export", "--database", database(tmp_path), "--out", str(tmp_path / "results")]
    for force in ([], ["--force"]):
        refused(capsys, [*argv, *force], "is a symbolic link")
    assert tree(home) == before and os.path.islink(tmp_path / "results")
    # a link to an earlier export: refused too (nothing is written through a link)
    assert main(["export", "--database", database(tmp_path), "--out", str(tmp_path / "e")]) == 0
    os.symlink(tmp_path / "e", tmp_path / "to-e")
    refused(capsys, [*argv[:-1], str(tmp_path / "to-e"), "--force"], "is a symbolic link")
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_only_an_earlier_export_is_replaced(tmp_path, capsys):
    db = database(tmp_path)
    out = tmp_path / "out"
    argv = ["export", "--database", db, "--out", str(out)]
    assert main(argv) == 0
    first = tree(out)
    pkg = json.loads((out / "datapackage.json").read_text())
    assert set(pkg[CONTENTS_KEY]) == {k for k, v in first.items() if v != "dir"}
    assert main([*argv, "--force"]) == 0  # an earlier export: replaced whole
    assert set(tree(out)) == set(first)
    capsys.readouterr()
    strangers = {
        "notes.txt": b"my thesis",  # a stranger file beside the export's
        "notes/notes.csv": b"a\n1\n",  # in a folder of its own
        "data/notes.csv": b"a\n1\n",  # in the export's data folder
        "export.json/x": None,  # a folder where the export has a file
        "link.csv": "../elsewhere.csv",  # a link
    }
    for name, content in strangers.items():
        assert main([*argv, "--force"]) == 0
        path = out / name
        if name == "export.json/x":
            (out / "export.json").unlink()
            path.parent.mkdir()
            path.write_text("x")
        elif name == "link.csv":
            os.symlink(content, path)
        else:
            path.parent.mkdir(exist_ok=True)
            path.write_bytes(content)
        capsys.readouterr()
        before = tree(out)
        refused(capsys, [*argv, "--force"], "is not an earlier export")
        assert tree(out) == before, name  # untouched
        refused(capsys, argv, "exists and is not empty")
        path.unlink()
        if path.parent != out and not any(path.parent.iterdir()):
            path.parent.rmdir()
    (out / "datapackage.json").unlink()  # no manifest: not an export
    refused(capsys, [*argv, "--force"], "holds no datapackage.json of an export")
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "x.csv").write_text("1\n")
    refused(capsys, [*argv[:-1], str(plain), "--force"], "is not an earlier export")
    (tmp_path / "file").write_text("a file")
    refused(capsys, [*argv[:-1], str(tmp_path / "file"), "--force"], "(it is a file)")
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_any_layout_its_manifest_names_is_replaced_and_no_other(tmp_path):
    """A Psych-DS layout (a ``data/`` folder, keyword-named files) and an export of an older
    release (no contents recorded): what its datapackage.json names is its own."""
    out = tmp_path / "psychds"
    (out / "data").mkdir(parents=True)
    (out / "data" / "study-x_data.csv").write_text("a\n1\n")
    (out / "dataset_description.json").write_text("{}")
    resources = [{"name": "x", "path": "data/study-x_data.csv"}]
    (out / "datapackage.json").write_text(json.dumps({"resources": resources}))
    assert export_files(out) == {
        "data/study-x_data.csv", "datapackage.json", "dataset_description.json", "export.json",
    }  # fmt: skip
    assert check_replaceable(out, force=True) == out.resolve()
    for forged in (["../outside.txt"], ["/etc/passwd"], ["data/../notes.txt"], [3]):
        pkg = {"resources": resources, CONTENTS_KEY: forged}
        (out / "datapackage.json").write_text(json.dumps(pkg))
        (out / "notes.txt").write_text("mine")  # named only by a path that is not inside
        with pytest.raises(ValueError, match="notes.txt is not a file of the export"):
            check_replaceable(out, force=True)


def test_an_earlier_collect_export_is_replaced(tmp_path):
    """Its fitted embeddings, catalogue folder and study file are its own too."""
    root = tmp_path / "items"
    root.mkdir()
    (root / "items.csv").write_text(
        "name,hex\n" + "".join(f"c{i},#{i:02x}80c0\n" for i in range(12))
    )
    (tmp_path / "collect.toml").write_text(collect_toml())
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    cfg = load_collect(tmp_path / "collect.toml")
    with in_process(create_app(cfg.catalogue, db, collect=cfg)) as c:
        pr, h = enrol(c)
        assert not answer_all(c, pr["id"], h, body=claiming(900), most=8)["done"]
    out = tmp_path / "out"
    argv = ["export", "--database", db, "--out", str(out), "--fast-server-ms=0"]
    argv += ["--collect", str(tmp_path / "collect.toml")]
    assert main(argv) == 0
    first = tree(out)
    assert {"study.toml", "collect.toml", "embeddings", "catalogue"} <= set(first)
    assert main([*argv, "--force"]) == 0
    assert set(tree(out)) == set(first)

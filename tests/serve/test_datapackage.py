"""A self-describing export: every export folder carries a Frictionless Data Package that
``frictionless`` validates against its CSVs (every row), and is a Psych-DS dataset by the
rules its validator checks (a ``data/`` folder of keyword-named ``_data.csv`` files whose
columns are all in ``dataset_description.json``'s ``variableMeasured``); a CSV column
without a declaration is an error at export time."""

from __future__ import annotations

import csv
import json
import math
import re
import subprocess
import sys

import numpy as np
import pytest

import tripletsearch.serve.export as exported
from serve.helpers import (
    answer_all,
    claiming,
    collect_toml,
    enrol,
    finding,
    in_process,
    study_toml,
    take_part,
)
from tripletsearch import __version__
from tripletsearch.serve import create_app
from tripletsearch.serve.catalogue import load_catalogue
from tripletsearch.serve.collect import load_collect
from tripletsearch.serve.export import describe_folder
from tripletsearch.serve.study import load_study

frictionless = pytest.importorskip("frictionless")


def export(db, out, *extra):
    cmd = [sys.executable, "-m", "tripletsearch", "export", "--database", db]
    cmd += ["--out", str(out), "--fast-server-ms", "0", *extra]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return out


def csvs(folder):
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.csv"))


def check_package(folder, export=True):
    """The package: valid (frictionless reads every row of every CSV against its types),
    one resource per CSV of the folder with every column described; the Psych-DS file."""
    pkg = json.loads((folder / "datapackage.json").read_text())
    assert pkg["version"] == __version__ and pkg["created"] and pkg["title"] and pkg["name"]
    assert sorted(r["path"] for r in pkg["resources"]) == csvs(folder)
    for res in pkg["resources"]:
        with open(folder / res["path"], newline="") as fh:
            header = next(csv.reader(fh))
        fields = res["schema"]["fields"]
        assert [f["name"] for f in fields] == header
        assert all(f["type"] in exported.TYPES and f["description"] for f in fields)
    report = frictionless.validate(str(folder / "datapackage.json"))
    assert report.valid, report.flatten(["rowNumber", "fieldName", "type", "note"])[:10]
    desc = json.loads((folder / "dataset_description.json").read_text())
    assert desc["@context"] == "https://schema.org/" and desc["@type"] == "Dataset"
    assert desc["name"] and desc["description"] and desc["version"] == __version__
    names = {v["name"] for v in desc["variableMeasured"]}
    assert names == {f["name"] for r in pkg["resources"] for f in r["schema"]["fields"]}
    assert (folder / "export.json").is_file() == export
    if export:
        psych_ds(folder, desc)
    obeys_the_cell_rule(folder, pkg)
    return pkg


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet would run
INTEGER = re.compile(r"-?[0-9]+")


def obeys_the_cell_rule(folder, pkg):
    """Every cell of every CSV of the folder, by its declared type: booleans true/false,
    integers their digits, numbers finite, in their shortest spelling, to at most 12
    significant digits and the decimals their column declares, JSON where declared, no
    text a spreadsheet would run as a formula; empty for none."""
    declared = {t.path: t for t in exported.TABLES.values()}
    for res in pkg["resources"]:
        with open(folder / res["path"], newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
        for f in res["schema"]["fields"]:
            digits = declared[res["path"]].column(f["name"]).digits
            for v in (row[f["name"]] for row in rows):
                where = (res["path"], f["name"], v)
                if v == "":
                    continue
                if f["type"] == "boolean":
                    assert v in ("true", "false"), where
                elif f["type"] == "integer":
                    assert INTEGER.fullmatch(v), where
                elif f["type"] == "number" and not INTEGER.fullmatch(v):
                    x = float(v)
                    assert math.isfinite(x) and repr(x) == v, where
                    assert float(f"{x:.12g}") == x, where
                    assert digits is None or round(x, digits) == x, where
                elif f["type"] in ("object", "array"):
                    json.loads(v)
                else:
                    assert not v.startswith(FORMULA_STARTS), where


# Psych-DS (its schema's rules, psych-ds.github.io): a data file's name (fileRegex), and
# the keys dataset_description.json must have
DATA_FILE = re.compile(r"([a-z]+-[a-zA-Z0-9]+)(_[a-z]+-[a-zA-Z0-9]+)*_data\.csv")
REQUIRED = ("@context", "@type", "name", "description", "variableMeasured")


def psych_ds(folder, desc):
    """The export as a Psych-DS dataset: dataset_description.json at the top with its
    required keys; data/ with at least one data file, each named by keywords, each column
    a variable measured; no data file elsewhere (the catalogue's are materials)."""
    assert all(desc.get(k) for k in REQUIRED) and desc["@type"] == "Dataset"
    data = sorted((folder / "data").rglob("*.csv"))
    assert data and all(DATA_FILE.fullmatch(p.name) for p in data), [p.name for p in data]
    measured = {v["name"] for v in desc["variableMeasured"]}
    for p in data:
        with open(p, newline="") as fh:
            assert set(next(csv.reader(fh))) <= measured, p.name
    assert not list(folder.glob("*.csv"))  # no data file outside data/


def test_a_study_export_describes_itself(tmp_path):
    (tmp_path / "study.toml").write_text(study_toml(targets=2, max_queries=15))
    study = load_study(tmp_path / "study.toml")
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    rng = np.random.default_rng(2)
    with in_process(create_app(study.catalogue, db, study=study)) as c:
        for _ in range(2):
            take_part(c, body=finding(study.catalogue, None, rng))
    out = export(db, tmp_path / "out")
    pkg = check_package(out)
    paths = {r["path"]: r["name"] for r in pkg["resources"]}
    names = ("triplets.csv", "sessions.csv", "answers.csv", "choices.csv")
    assert {exported.data_path(n) for n in names} <= set(paths)
    assert paths[exported.data_path("answers.csv")] == "answers"  # named as before
    sessions = next(r for r in pkg["resources"] if r["name"] == "sessions")
    assert {f["name"]: f["type"] for f in sessions["schema"]["fields"]}["found"] == "boolean"
    cmd = [sys.executable, "-m", "tripletsearch", "report", "--database", db]
    cmd += ["--out", str(tmp_path / "report"), "--study", str(tmp_path / "study.toml")]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    pkg = check_package(tmp_path / "report", export=False)
    assert {r["path"] for r in pkg["resources"]} == {"methods.csv", "searches.csv"}


def test_a_collect_export_describes_itself(tmp_path):
    root = tmp_path / "items"  # named items with pictures of their own
    (root / "pics").mkdir(parents=True)
    names = ["=SUM(A1)", "+1", "-x", "@y", *(f"thing {i}" for i in range(4, 10))]
    rows = ["name,hex,image"]
    for i, name in enumerate(names):
        (root / "pics" / f"p{i}.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes([i]) * 50)
        rows.append(f'"{name}",#00000{i},pics/p{i}.png')
    (root / "items.csv").write_text("\n".join(rows) + "\n")
    (tmp_path / "collect.toml").write_text(collect_toml())
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    cfg = load_collect(tmp_path / "collect.toml")
    assert list(cfg.catalogue.names) == names
    ids = ['=HYPERLINK("http://evil.example","x")', "@SUM(A1)"]  # the participants' own text
    with in_process(create_app(cfg.catalogue, db, collect=cfg)) as c:
        for pid, ms in zip(ids, (900, 1234)):
            pr, h = enrol(c, platform_id=pid)
            assert not answer_all(c, pr["id"], h, body=claiming(ms), most=8)["done"]
    out = export(db, tmp_path / "out", "--collect", str(tmp_path / "collect.toml"))
    pkg = check_package(out)  # (every cell by the one rule)
    paths = {r["path"] for r in pkg["resources"]}
    collect = exported.data_path("collect_participants.csv")
    assert {collect, "catalogue/stimuli.csv", "catalogue/items.csv"} <= paths
    # formula-like text written after a ', everywhere: drop it to get the text back
    with open(out / "catalogue" / "items.csv", newline="") as fh:
        assert [r["name"] for r in csv.DictReader(fh)][:4] == ["'" + n for n in names[:4]]
    with open(out / exported.data_path("participants.csv"), newline="") as fh:
        assert [r["platform_id"] for r in csv.DictReader(fh)] == ["'" + i for i in ids]
    with open(out / exported.data_path("collect_triplets_info.csv"), newline="") as fh:
        info = list(csv.DictReader(fh))
    assert {r["head_name"] for r in info} <= {"'" + n for n in names[:4]} | set(names[4:])
    # the exported catalogue loads with the names it was served with
    assert list(load_catalogue(out / "catalogue").names) == names


def test_a_column_without_a_description_is_an_error(tmp_path):
    (tmp_path / "answers.csv").write_text("session,screen,mood\nS-1,0,fine\n")
    with pytest.raises(ValueError, match=r"answers.csv: column 'mood' has no description"):
        describe_folder(tmp_path, title="x")
    (tmp_path / "answers.csv").unlink()
    (tmp_path / "notes.csv").write_text("a\n1\n")
    with pytest.raises(ValueError, match="notes.csv: a CSV of the export without a declaration"):
        describe_folder(tmp_path, title="x")
    assert not (tmp_path / "datapackage.json").exists()


def test_a_declaration_without_a_description_is_an_error():
    with pytest.raises(ValueError, match="column 'a' needs"):
        exported.Column("a", "integer", " ")
    with pytest.raises(ValueError, match="column 'a' needs"):
        exported.Column("a", "text", "A text.")
    a = exported.Column("a", "integer", "A number.")
    with pytest.raises(ValueError, match="x.csv: a column declared twice"):
        exported.Table("x.csv", (a, a))


def test_a_column_added_to_its_declaration_is_in_the_csv_the_package_and_the_description(
    tmp_path, monkeypatch
):
    """One declaration: a column added to participants.csv's (``released``: a key of each
    participant's record) is written, typed and described with no other change."""
    from tripletsearch.serve.commands.export_folder import write_export
    from tripletsearch.serve.store import Store

    text = "Released by the owner for a fresh start."
    grown = exported.TABLES["participants.csv"].with_columns(
        exported.Column("released", "boolean", text)
    )
    monkeypatch.setitem(exported.TABLES, "participants.csv", grown)
    (tmp_path / "collect.toml").write_text(collect_toml(catalogue="colours", max_queries=6))
    cfg = load_collect(tmp_path / "collect.toml")
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    with in_process(create_app(cfg.catalogue, db, collect=cfg)) as c:
        for _ in range(2):
            enrol(c)
    out = tmp_path / "out"
    write_export(Store(db), out, experiment=cfg.fingerprint)
    pkg = describe_folder(out, title="grown")
    with open(out / exported.data_path("participants.csv"), newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0])[-1] == "released" and [r["released"] for r in rows] == ["false"] * 2
    (res,) = [r for r in pkg["resources"] if r["path"] == exported.data_path("participants.csv")]
    field = {"name": "released", "type": "boolean", "description": text}
    assert res["schema"]["fields"][-1] == field
    desc = json.loads((out / "dataset_description.json").read_text())
    measured = desc["variableMeasured"]
    assert {"@type": "PropertyValue", "name": "released", "description": text} in measured
    report = frictionless.validate(str(out / "datapackage.json"))
    assert report.valid, report.flatten(["rowNumber", "fieldName", "type", "note"])[:10]


def test_the_one_cell_rule():
    """Against the rule as the export's documentation states it, value by value."""
    cell, Column = exported.cell, exported.Column
    ms, pair = Column("ms", "number", "A time.", digits=1), Column("p", "array", "A pair.")
    said = [
        (None, ""),
        (True, "true"),
        (np.bool_(False), "false"),
        (np.int64(7), "7"),
        (-3, "-3"),
        (0.1 + 0.2, "0.3"),
        (1 / 3, "0.333333333333"),
        (1e-07, "1e-07"),
        (float("nan"), ""),
        (float("inf"), ""),
        (-0.0, "0.0"),
        ("=1+1", "'=1+1"),
        ("+x", "'+x"),
        ("-x", "'-x"),
        ("@x", "'@x"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("a=b", "a=b"),
        ("'=x", "'=x"),
    ]
    for value, text in said:
        assert cell(value) == text, value
    assert cell(1234.5678, ms) == "1234.6" and cell(np.float32(2.5), ms) == "2.5"
    assert cell([1, 2, 3]) == "1 2 3" and cell([0.1 + 0.2, float("nan")], pair) == "[0.3, null]"
    assert cell({"b": 1, "a": "é"}) == '{"a": "é", "b": 1}'


def test_the_export_package_sits_low():
    """serve/export imports the library and serve's errors, clock, catalogue and store only
    (imports inside functions too), so that every writer above it can import it."""
    import ast
    from pathlib import Path

    allowed = {"errors", "clock", "catalogue", "store", "export"}
    folder = Path(exported.__file__).parent
    for path in sorted(folder.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level >= 2:
                first = (node.module or "").split(".")[0] if node.level == 2 else "(library)"
                names = [first] if first else [a.name for a in node.names]
                assert set(names) <= allowed | {"(library)"}, (path.name, names)
            elif isinstance(node, (ast.Import, ast.ImportFrom)) and not getattr(node, "level", 0):
                mods = (
                    [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
                )
                assert not any(m.startswith("tripletsearch") for m in mods), (path.name, mods)

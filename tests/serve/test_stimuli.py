"""Stimuli fixed by checksum: a catalogue's files recorded at an experiment's first start,
checked at every later start (a changed or missing file refuses ``tripletsearch serve``),
served only as recorded while it runs, and written with their hashes in the export."""

from __future__ import annotations

import csv
import hashlib
import logging
import subprocess
import sys

import numpy as np
import pytest

from serve.helpers import answer_all, claiming, collect_toml, enrol, in_process
from tripletsearch.serve import create_app
from tripletsearch.serve.catalogue.stimuli import MANIFEST_KEY
from tripletsearch.serve.collect import load_collect
from tripletsearch.serve.experiment import bind
from tripletsearch.serve.store import Store

N = 12
PNG = b"\x89PNG\r\n\x1a\n"


def picture_catalogue(tmp_path, n=N, embedding=False):
    """``tmp_path / "items"``: n named items, each with a (PNG-headed) picture of its own
    (``embedding``: and an ``embedding.npy``)."""
    root = tmp_path / "items"
    (root / "pics").mkdir(parents=True)
    rng = np.random.default_rng(3)
    if embedding:
        np.save(root / "embedding.npy", rng.normal(size=(n, 3)))
    rows = ["name,image"]
    for i in range(n):
        (root / "pics" / f"p{i}.png").write_bytes(PNG + rng.bytes(500 + i))
        rows.append(f"thing {i},pics/p{i}.png")
    (root / "items.csv").write_text("\n".join(rows) + "\n")
    return root


def sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def start(tmp_path, embedding=False):
    """A collect on the picture catalogue, its app (in process) and its database URL."""
    root = picture_catalogue(tmp_path, embedding=embedding)
    (tmp_path / "collect.toml").write_text(collect_toml())
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    cfg = load_collect(tmp_path / "collect.toml")
    return create_app(cfg.catalogue, db, collect=cfg), cfg, db, root


def serve(tmp_path, db, timeout=120):
    """The real ``tripletsearch serve`` of the collect: refused before it listens."""
    cmd = [sys.executable, "-m", "tripletsearch", "serve", "--collect"]
    cmd += [str(tmp_path / "collect.toml"), "--database", db, "--port", "0"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def test_the_first_start_records_every_file_with_its_sha256(tmp_path):
    app, cfg, db, root = start(tmp_path)
    row = Store(db).experiment("alike")
    files = row.settings[MANIFEST_KEY]["files"]
    expected = {"items.csv": root / "items.csv"}
    expected.update({f"pics/p{i}.png": root / "pics" / f"p{i}.png" for i in range(N)})
    assert set(files) == set(expected)
    for rel, path in expected.items():
        assert files[rel] == {"bytes": path.stat().st_size, "sha256": sha(path)}


def _took_part(app, answers=0):
    with in_process(app) as c:
        pr, h = enrol(c)
        if answers:
            answer_all(c, pr["id"], h, body=claiming(900), most=answers)


def test_a_changed_picture_refuses_the_start_naming_the_item_and_file(tmp_path):
    app, cfg, db, root = start(tmp_path)
    _took_part(app)
    (root / "pics" / "p5.png").write_bytes(PNG + b"another picture")
    r = serve(tmp_path, db)
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "'thing 5'" in lines[0] and "p5.png" in lines[0]
    assert "changed" in lines[0]


def test_a_missing_file_refuses_the_start(tmp_path):
    app, cfg, db, root = start(tmp_path, embedding=True)
    _took_part(app)
    X = np.load(root / "embedding.npy")
    (root / "embedding.npy").unlink()  # the same numbers in another file: the design holds
    rows = [",".join(repr(float(v)) for v in x) for x in X]
    (root / "embedding.csv").write_text("\n".join(rows) + "\n")
    r = serve(tmp_path, db)
    assert r.returncode == 2, r.stdout + r.stderr
    (line,) = r.stderr.strip().splitlines()
    assert "embedding.npy is missing" in line and "'alike'" in line
    (root / "embedding.csv").unlink()
    np.save(root / "embedding.npy", X)
    (root / "pics" / "p2.png").unlink()  # a missing picture: the catalogue's own check
    r = serve(tmp_path, db)
    assert r.returncode == 2
    (line,) = r.stderr.strip().splitlines()
    assert "row 4" in line and "pics/p2.png" in line


def test_before_anyone_took_part_the_files_are_recorded_anew(tmp_path):
    app, cfg, db, root = start(tmp_path)
    (root / "pics" / "p1.png").write_bytes(PNG + b"a new picture")
    bind(load_collect(tmp_path / "collect.toml"), Store(db))
    files = Store(db).experiment("alike").settings[MANIFEST_KEY]["files"]
    assert files["pics/p1.png"]["sha256"] == sha(root / "pics" / "p1.png")


def test_a_picture_changed_while_running_is_not_served(tmp_path, caplog):
    app, cfg, db, root = start(tmp_path)
    pic = root / "pics" / "p3.png"
    original = pic.read_bytes()
    with in_process(app) as c, caplog.at_level(logging.ERROR, "tripletsearch.serve"):
        r = c.get("/images/3")
        assert r.status_code == 200 and r.content == original
        pic.write_bytes(PNG + b"swapped under the data")
        for _ in range(3):
            r = c.get("/images/3")
            assert r.status_code == 409 and r.content != pic.read_bytes()
        said = [m for m in caplog.messages if "thing 3" in m]
        assert len(said) == 1 and "p3.png" in said[0]
        pic.write_bytes(original)  # put back: served again
        r = c.get("/images/3")
        assert r.status_code == 200 and r.content == original
        assert c.get("/images/4").content == (root / "pics" / "p4.png").read_bytes()


def test_an_older_experiment_records_its_files_at_its_next_start_and_says_so_once(tmp_path, capsys):
    app, cfg, db, root = start(tmp_path)
    _took_part(app)
    store = Store(db)
    row = store.experiment("alike")
    old = {k: v for k, v in row.settings.items() if k != MANIFEST_KEY}  # as before
    store.update_experiment("alike", row.design, old)
    capsys.readouterr()
    bind(load_collect(tmp_path / "collect.toml"), store)
    said = capsys.readouterr().err
    (line,) = said.strip().splitlines()
    assert "'alike'" in line and f"{N + 1} files recorded" in line
    assert MANIFEST_KEY in store.experiment("alike").settings
    bind(load_collect(tmp_path / "collect.toml"), store)
    assert capsys.readouterr().err == ""


def test_the_collect_export_writes_the_manifest_of_the_copied_pictures(tmp_path):
    app, cfg, db, root = start(tmp_path)
    _took_part(app, answers=6)
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "tripletsearch", "export", "--collect"]
    cmd += [str(tmp_path / "collect.toml"), "--database", db, "--out", str(out)]
    cmd += ["--fast-server-ms", "0"]  # (answers in process come at once)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    cat = out / "catalogue"
    with open(cat / "stimuli.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == N
    for row in rows:
        copied = cat / row["file"]
        assert row["sha256"] == sha(copied) and int(row["bytes"]) == copied.stat().st_size
        assert row["sha256"] == sha(root / row["source"])  # the catalogue's own file


def test_the_collect_export_refuses_a_picture_changed_since_the_first_start(tmp_path):
    app, cfg, db, root = start(tmp_path)
    _took_part(app, answers=6)
    recorded = Store(db).experiment("alike").settings[MANIFEST_KEY]["files"]
    original = (root / "pics" / "p5.png").read_bytes()
    (root / "pics" / "p5.png").write_bytes(PNG + b"another picture, never shown")
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "tripletsearch", "export", "--collect"]
    cmd += [str(tmp_path / "collect.toml"), "--database", db, "--out", str(out)]
    cmd += ["--fast-server-ms", "0"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 2, r.stdout + r.stderr
    (line,) = r.stderr.strip().splitlines()
    assert "'thing 5'" in line and "p5.png" in line and "changed" in line
    assert not out.exists()
    (root / "pics" / "p5.png").unlink()  # missing: refused as well
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and not out.exists()
    assert "p5.png" in r.stderr, r.stderr
    (root / "pics" / "p5.png").write_bytes(original)  # put back: exported as recorded
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    with open(out / "catalogue" / "stimuli.csv", newline="") as fh:
        rows = {row["source"]: row for row in csv.DictReader(fh)}
    assert rows["pics/p5.png"]["sha256"] == recorded["pics/p5.png"]["sha256"]
    # a picture changed between the check and its copy: refused too
    from tripletsearch.serve.catalogue.stimuli import StimuliChanged
    from tripletsearch.serve.collect.export import _catalogue_folder

    cat = load_collect(tmp_path / "collect.toml").catalogue
    wrong = {**recorded, "pics/p1.png": {"bytes": 1, "sha256": "0" * 64}}
    X = {"gamma-ckl": np.zeros((N, 2))}
    with pytest.raises(StimuliChanged, match="thing 1"):
        _catalogue_folder(cat, tmp_path / "cat", X, wrong)

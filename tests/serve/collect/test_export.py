"""One tool end to end: collected triplets exported (triplets.csv integer-only, the details
in triplets_info.csv), the file's models fitted, a catalogue folder and a study that
serves each method its own embedding."""

from __future__ import annotations

import csv
import json
import re
import threading

import numpy as np
import pytest

from serve.helpers import (
    answer_all,
    catalogue_folder,
    claiming,
    enrol,
    in_process,
    parts_of,
    study_toml,
    take_part,
    thread_server,
    wait_until,
)
from tripletsearch.cli import main
from tripletsearch.people import CollectPerson
from tripletsearch.serve import create_app
from tripletsearch.serve.catalogue import load_catalogue
from tripletsearch.serve.collect import load_collect
from tripletsearch.serve.collect.screens import BUFFER_KINDS
from tripletsearch.serve.export import data_path
from tripletsearch.serve.modes.find import FindMode
from tripletsearch.serve.store import Store
from tripletsearch.serve.study import load_study

COLLECT = dict(  # this collect file's keys over the shared ones
    test_share=0.2,
    n_choices=3,
    dim=2,
    models=["gamma-ckl", "probit"],
    max_queries=30,
    burn_in=5,
    attention=[3, 17],
    repeats=[10],
    seed=2,
    title=None,
)


def answer(c, pid, h, pick):
    answer_all(c, pid, h, body=claiming(700, pick))


def by_hue(q):
    """The candidate nearest the head along a hidden 1-D order (the item ids)."""
    return CollectPerson("person", np.arange(30.0)[:, None], gamma=None, lapse=0.0).pick(q)


def never_the_head(q):
    return next(i for i, x in enumerate(q["candidates"]) if x["id"] != q["head"]["id"])


@pytest.fixture
def collected(tmp_path, collect_file):
    collect_file(tmp_path, **COLLECT)
    cfg = load_collect(tmp_path / "collect.toml")
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    with in_process(create_app(cfg.catalogue, db, collect=cfg)) as c:
        people = [enrol(c) for _ in range(7)]
        for pr, h in people[:6]:
            answer(c, pr["id"], h, by_hue)
        # never the head itself: fails both attention checks, so flagged
        answer(c, people[6][0]["id"], people[6][1], never_the_head)
    return cfg, db, [pr["id"] for pr, _ in people]


def expected_triplets(store, flagged_pid):
    """The triplets that count, recomputed from the stored answers."""
    rows = []
    for s in store.iter_sessions():
        if s.participant == flagged_pid:
            continue
        for h in store.history(s.id):
            q = h["query"]
            kinds = ("burn-in", *BUFFER_KINDS, "fallback", "test")
            if q["kind"] in kinds and h["choice"] is not None:
                picked = q["candidates"][h["choice"]]
                rows += [(q["head"], picked, o) for o in q["candidates"] if o != picked]
    return rows


def test_export_writes_the_triplets_their_details_the_fits_a_catalogue_and_a_study(
    collected, tmp_path, capsys
):
    cfg, db, pids = collected
    out = tmp_path / "export"
    # (people in process answer at once: the server's clock check off, as the server ran)
    argv = ["export", "--database", db, "--out", str(out), "--fast-server-ms=0", "--collect"]
    assert main([*argv, str(tmp_path / "collect.toml")]) == 0
    said = capsys.readouterr().out
    assert "fitted gamma-ckl, probit" in said and "--study" in said
    # the collected triplets in their own file (no searches in this database: none apart)
    assert (out / data_path("triplets.csv")).read_text().splitlines() == ["head,closer,farther"]
    lines = (out / data_path("collect_triplets.csv")).read_text().splitlines()
    assert lines[0] == "head,closer,farther"
    assert all(re.fullmatch(r"\d+,\d+,\d+", line) for line in lines[1:])  # integers only
    T = np.loadtxt(out / data_path("collect_triplets.csv"), delimiter=",", skiprows=1, dtype=int)
    store = Store(db)
    want = expected_triplets(store, pids[6])
    assert sorted(map(tuple, T.tolist())) == sorted(want)
    with open(out / data_path("collect_triplets_info.csv"), newline="") as fh:
        info = list(csv.DictReader(fh))
    assert len(info) == len(T)
    names = cfg.catalogue.names
    for row, meta in zip(T, info):
        assert meta["source"] == "collect" and meta["participant"] in pids[:6]
        assert meta["kind"] in ("burn-in", *BUFFER_KINDS, "fallback", "test")
        assert meta["response_ms"] == "700" and meta["sampler"] in ("random", "test")
        assert [meta["head_name"], meta["closer_name"], meta["farther_name"]] == [
            names[i] for i in row
        ]
    with open(out / data_path("answers.csv"), newline="") as fh:  # a record in a cell: JSON
        shown = [json.loads(r["shown"]) for r in csv.DictReader(fh) if r["mode"] == "collect"]
    assert shown and all(set(s) == {"head", "candidates", "kind"} for s in shown)
    assert (out / "collect.toml").read_text() == (tmp_path / "collect.toml").read_text()
    for model in cfg.models:  # fitted to every triplet that counts
        X = np.load(out / "embeddings" / f"{model}.npy")
        assert X.shape == (cfg.catalogue.n_items, cfg.dim) and np.isfinite(X).all()
        near = np.sum((X[T[:, 0]] - X[T[:, 1]]) ** 2, axis=1)
        far = np.sum((X[T[:, 0]] - X[T[:, 2]]) ** 2, axis=1)
        assert np.mean(near < far) > 0.75  # the people's 1-D order, learned
    cat = load_catalogue(out / "catalogue")
    assert cat.names == cfg.catalogue.names and cat.hex == cfg.catalogue.hex
    np.testing.assert_array_equal(cat.embedding, np.load(out / "embeddings" / "gamma-ckl.npy"))
    study = load_study(out / "study.toml")
    assert study.methods == ("gamma-ckl", "gauss")
    np.testing.assert_array_equal(study.embeddings["gauss"], np.load(out / "embeddings/probit.npy"))
    # a study server on it: each method's sessions search its own embedding
    app = create_app(study.catalogue, f"sqlite:///{tmp_path / 'study.sqlite'}", study=study)
    with in_process(app) as c:
        r = c.post("/api/participants", json={"consent": True})
        assert r.status_code == 201, r.text
        find = parts_of(c.app).service.modes[FindMode.name]
        for method, own in study.embeddings.items():
            template = find._template(4, {"method": method, "gamma": 3.0, "sigma": study.sigma})
            np.testing.assert_array_equal(template._X, own)
    probit = np.load(out / "embeddings/probit.npy")
    rms = np.sqrt(np.mean(np.sum((probit - probit.mean(0)) ** 2, axis=1)))
    assert study.sigma == pytest.approx(0.1 * rms)  # gauss's sigma from its own embedding


def test_export_without_collected_triplets_says_so(tmp_path, capsys, collect_file):
    collect_file(tmp_path, **COLLECT)
    db = tmp_path / "s.sqlite"
    cfg = load_collect(tmp_path / "collect.toml")
    create_app(cfg.catalogue, f"sqlite:///{db}", collect=cfg)
    argv = ["export", "--database", f"sqlite:///{db}", "--out", str(tmp_path / "o")]
    assert main([*argv, "--collect", str(tmp_path / "collect.toml")]) == 2
    assert "no triplets collected yet" in capsys.readouterr().err
    assert main([*argv, "--collect", str(tmp_path / "collect.toml"), "--demo", "colours"]) == 2
    assert "--collect names the catalogue" in capsys.readouterr().err


STUDY = study_toml(catalogue="items", title=None, n_choices=None, seed=None, max_queries=None)


@pytest.mark.parametrize(
    "table, message",
    [
        ('[embeddings]\nbogus = "e.npy"', "'bogus' is not one of the methods"),
        ('[embeddings]\ngauss = "missing.npy"', "embeddings.gauss: no file"),
        ('[embeddings]\ngauss = "short.npy"', "embeddings.gauss"),
        ("[embeddings]\ngauss = 3", "embeddings.gauss: a file name"),
        ('embeddings = "e.npy"', "embeddings: a table"),
    ],
)
def test_a_studys_bad_embeddings_are_named(tmp_path, table, message):
    root = catalogue_folder(tmp_path)
    np.save(root / "embedding.npy", np.random.default_rng(0).normal(size=(30, 2)))
    np.save(tmp_path / "e.npy", np.random.default_rng(1).normal(size=(30, 2)))
    np.save(tmp_path / "short.npy", np.random.default_rng(1).normal(size=(29, 2)))
    (tmp_path / "study.toml").write_text(STUDY + table + "\n")
    with pytest.raises(ValueError, match=message) as err:
        load_study(tmp_path / "study.toml")
    assert "study.toml" in str(err.value)


def test_a_study_with_its_own_embeddings_has_its_own_fingerprint(tmp_path):
    root = catalogue_folder(tmp_path)
    np.save(root / "embedding.npy", np.random.default_rng(0).normal(size=(30, 2)))
    np.save(tmp_path / "e.npy", np.random.default_rng(1).normal(size=(30, 2)))
    (tmp_path / "plain.toml").write_text(STUDY)
    (tmp_path / "own.toml").write_text(STUDY + '[embeddings]\ngauss = "e.npy"\n')
    plain, own = load_study(tmp_path / "plain.toml"), load_study(tmp_path / "own.toml")
    assert plain.embeddings == {} and plain.fingerprint != own.fingerprint


def test_a_sqlite_backup_taken_while_serving_exports_the_same(collected, tmp_path):
    """The documented online backup (sqlite3's backup API) is a whole, consistent copy."""
    import sqlite3

    cfg, db, _ = collected
    with in_process(create_app(cfg.catalogue, db, collect=cfg)) as c:
        pr, h = enrol(c)  # a participant mid-way while the backup is taken
        answer_all(c, pr["id"], h, most=1)
        src = sqlite3.connect(db.removeprefix("sqlite:///"))
        dst = sqlite3.connect(tmp_path / "backup.sqlite")
        src.backup(dst)
        src.close()
        dst.close()
    outs = []
    for url in (db, f"sqlite:///{tmp_path / 'backup.sqlite'}"):
        out = tmp_path / f"out{len(outs)}"
        assert main(["export", "--database", url, "--out", str(out)]) == 0
        outs.append(out)
    for name in ("triplets.csv", "triplets_info.csv", "answers.csv", "sessions.csv"):
        name = data_path(name)
        assert (outs[0] / name).read_text() == (outs[1] / name).read_text(), name
    assert len((outs[1] / data_path("answers.csv")).read_text().splitlines()) == 1 + 7 * 30 + 1


def answering(base: str, stop: threading.Event) -> None:
    """Participants answering by hue, one after another, until ``stop``."""
    import httpx

    with httpx.Client(base_url=base, timeout=30) as c:
        while not stop.is_set():
            take_part(c, by_hue, until=lambda _: stop.is_set())


@pytest.mark.once  # a real server and writer threads: once, not under the sanitizers
def test_an_export_under_concurrent_writes_fits_the_triplets_it_writes(tmp_path, collect_file):
    collect_file(tmp_path, **COLLECT)
    cfg = load_collect(tmp_path / "collect.toml")
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    stop = threading.Event()
    with thread_server(create_app(cfg.catalogue, db, collect=cfg)) as base:
        writers = [threading.Thread(target=answering, args=(base, stop)) for _ in range(3)]
        for t in writers:
            t.start()
        try:
            store = Store(db)  # some answers in before the first export
            wait_until(lambda: store.count_answers() >= 20, message="20 answers recorded")
            outs = []
            for i in range(3):  # each export while answers keep coming
                out = tmp_path / f"export{i}"
                argv = ["export", "--database", db, "--out", str(out), "--fast-server-ms=0"]
                assert main([*argv, "--collect", str(tmp_path / "collect.toml")]) == 0
                outs.append(out)
        finally:
            stop.set()
            for t in writers:
                t.join(30)
    sizes = []
    for out in outs:
        written = len((out / data_path("collect_triplets.csv")).read_text().splitlines()) - 1
        for model in ("gamma-ckl", "probit"):
            info = json.loads((out / "embeddings" / f"{model}.json").read_text())
            assert info["n_triplets"] == written, (out.name, model)
        # and the answers written are the ones those triplets came from (k - 1 each)
        with open(out / data_path("answers.csv"), newline="") as fh:
            picks = [
                r for r in csv.DictReader(fh)
                if r["mode"] == "collect" and r["kind"] == "answer" and r["choice"] != ""
                and r["undone"] == "false"
                and json.loads(r["shown"])["kind"] in ("burn-in", "random", "test", "fallback")
            ]  # fmt: skip
        assert written == (cfg.k - 1) * len(picks), out.name
        sizes.append(written)
    assert sizes[0] < sizes[-1]  # the writes went on during the exports

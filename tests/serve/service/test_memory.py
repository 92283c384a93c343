"""The memory budget: live searchers bounded by bytes, evicted least recently used first and
rebuilt from the database (the same replies as a server that kept them), 503 when a
searcher cannot fit, sizes as ``--memory`` reads them, and a real server that stays within
``--memory`` measured as PSS."""

from __future__ import annotations

import contextlib
import threading

import httpx
import numpy as np
import pytest

from serve.helpers import ServeProcess, auth, in_process, interleaved, make_catalogue, parts_of
from tripletsearch.serve import create_app
from tripletsearch.serve.config import ServeConfig
from tripletsearch.serve.service.memory import format_size, parse_size, process_memory


@pytest.mark.parametrize("gamma", [3.0, "auto"])
def test_evicted_sessions_are_rebuilt_with_the_same_replies(tmp_path, gamma):
    """A budget of two and a half searchers for three people answering in turn: every
    answer evicts the least recently used searcher and rebuilds its own by replay, and
    every reply is the one a server that kept all three gives."""
    cat = make_catalogue(tmp_path / "cat", 3000)
    kept = create_app(
        cat, f"sqlite:///{tmp_path / 'a.db'}", config=ServeConfig(gamma=gamma, random_state=0)
    )
    tight = create_app(
        cat,
        f"sqlite:///{tmp_path / 'b.db'}",
        config=ServeConfig(gamma=gamma, random_state=0, admin_token="owner"),
    )
    service = parts_of(tight).service
    mode = service.modes["find"]
    one = mode.session_bytes(*mode.new_params(4))
    assert one >= 4 * 3000 * (14 if gamma == "auto" else 1)  # single-precision weights
    service.live.budget = int(2.5 * one)
    with in_process(kept) as a, in_process(tight) as b:
        expect, got = interleaved(a, cat), interleaved(b, cat)
        stats = service.live.stats()
        health = b.get("/api/health", headers=auth("owner")).json()["worker"]  # the owner's
    assert got == expect
    assert stats["evictions"] >= 10 and stats["rebuilds"] >= 10
    assert stats["bytes"] <= service.live.budget and stats["searchers"] <= 2
    assert health["searcher_bytes"] == stats["bytes"] and health["rebuilds"] == stats["rebuilds"]
    assert parts_of(kept).service.live.stats()["rebuilds"] == 0  # the reference kept them all


def test_a_searcher_that_cannot_fit_gets_503(tmp_path):
    """Requests in flight pin their searchers: a new one that cannot fit beside them gets 503
    with Retry-After (and a message), and fits once they are done; a budget below one
    searcher tells the operator to raise --memory. The requests in flight hold every lock
    stripe: a new session waits on none of them (its id was 1 in 256 times on the stripe
    of the one request in flight, and the POST then waited it out and fitted)."""
    cat = make_catalogue(tmp_path / "cat", 2000)
    app = create_app(cat, f"sqlite:///{tmp_path / 'a.db'}", config=ServeConfig(random_state=0))
    live = parts_of(app).service.live
    mode = parts_of(app).service.modes["find"]
    one = mode.session_bytes(*mode.new_params(4))
    live.budget = int(1.5 * one)
    with in_process(app) as c:
        held, release = threading.Event(), threading.Event()

        stripe = {hash(f"other {i}") % live.STRIPES: f"other {i}" for i in range(8000)}
        assert len(stripe) == live.STRIPES  # (a miss: 256 e^(-8000/256), under 1e-11)

        def in_flight():  # requests answering other sessions, one holding its searcher
            with contextlib.ExitStack() as stack:
                for sid in stripe.values():
                    stack.enter_context(live.hold(sid))
                live.reserve(stripe[0], one)
                held.set()
                release.wait(30)

        t = threading.Thread(target=in_flight)
        t.start()
        assert held.wait(30)
        r = c.post("/api/sessions", json={"n_choices": 4})
        assert r.status_code == 503 and int(r.headers["Retry-After"]) >= 1
        assert "being answered" in r.json()["error"]
        release.set()
        t.join()
        assert c.post("/api/sessions", json={"n_choices": 4}).status_code == 201
        live.budget = one // 2
        r = c.post("/api/sessions", json={"n_choices": 4})
        assert r.status_code == 503 and "raise --memory" in r.json()["error"]
        assert live.stats()["pinned"] == 0


@pytest.mark.parametrize(
    "text,expect",
    [("2GB", 2 << 30), ("1.5G", 3 << 29), ("512MiB", 512 << 20), ("2", 2 << 30), ("4 gib", 4 << 30)]
    + [("300mb", 300 << 20), ("1048576B", 1 << 20), (".5T", 1 << 39)],
)
def test_sizes_are_binary(text, expect):
    assert parse_size(text) == expect


@pytest.mark.parametrize(
    "text,match",
    [("", "a size such as"), ("2XB", "a size such as"), ("-1G", "a size such as")]
    + [("1e9", "a size such as"), ("0.5KB", "at least 1MB"), (None, "a size such as")],
)
def test_bad_sizes_name_the_option(text, match):
    with pytest.raises(ValueError, match=f"--memory: .*{match}"):
        parse_size(text)


def test_serve_help_states_the_memory_default(capsys):
    from tripletsearch.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["serve", "--help"])
    assert exit_.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "--memory SIZE" in out and "50% of the machine's memory" in out


def test_sizes_read_as_people_write_them():
    assert format_size(3 << 29) == "1.5 GiB" and format_size(512) == "512 B"
    assert 1 << 20 < process_memory() < 1 << 40  # this process, measured


@pytest.mark.parametrize("option,value", [("--memory", "lots"), ("--threads", "0")])
def test_bad_serve_options_exit_with_their_name(tmp_path, capsys, option, value):
    from tripletsearch.cli import main

    assert main(["serve", "--demo", "colours", option, value]) == 2
    assert option in capsys.readouterr().err


@pytest.mark.once
def test_a_server_stays_within_its_memory(tmp_path):
    """``serve --memory 320MB --gamma auto`` over 200,000 items, where a search holds 11 MB:
    forty people start and answer, the first ones come back (rebuilt), and the worker's PSS
    stays within its budget (without it: over 600 MB)."""
    n = 200_000
    root = tmp_path / "cat"
    root.mkdir()
    rng = np.random.default_rng(1)
    np.save(root / "embedding.npy", rng.normal(size=(n, 10)).astype(np.float32))
    (root / "items.csv").write_text("name\n" + "\n".join(f"item {i}" for i in range(n)) + "\n")
    budget = 320 << 20
    args = ["--catalogue", str(root), "--gamma", "auto", "--memory", "320MB"]
    args += ["--database", f"sqlite:///{tmp_path / 's.db'}"]
    with ServeProcess(*args) as server, httpx.Client(base_url=server.base, timeout=60) as c:
        sessions = []
        for _ in range(40):
            r = c.post("/api/sessions", json={"n_choices": 4})
            assert r.status_code == 201, r.text
            s = r.json()
            r = c.post(
                f"/api/sessions/{s['id']}/answer",
                json={"screen": 0, "choice": 1},
                headers=auth(s["token"]),
            )
            assert r.status_code == 200, r.text
            sessions.append((s, r.json()["screen"]))
        for s, screen in sessions[:5]:  # evicted long ago: rebuilt by replay
            r = c.post(
                f"/api/sessions/{s['id']}/answer",
                json={"screen": screen["number"], "choice": 0},
                headers=auth(s["token"]),
            )
            assert r.status_code == 200, r.text
        worker = c.get("/api/health", headers=auth("test-admin")).json()["worker"]  # the owner's
    assert worker["budget"] == budget
    assert worker["evictions"] >= 20 and worker["rebuilds"] >= 5
    assert worker["searcher_bytes"] <= budget - worker["baseline"]
    assert worker["process"] <= budget, {k: format_size(v) for k, v in worker.items()}
    print({k: format_size(v) for k, v in worker.items() if k != "pid"})

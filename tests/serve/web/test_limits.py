"""Limits on what one client may create (serve/limits.py): sessions and enrolments per
address per minute (429 with Retry-After), the address behind trusted proxies only, open
sessions at once (503), bad settings."""

from __future__ import annotations

import json
import textwrap

import pytest

from serve.helpers import in_process, parts_of
from tripletsearch.cli import main
from tripletsearch.serve import create_app, demo_catalogue
from tripletsearch.serve.config import ServeConfig
from tripletsearch.serve.errors import TooManyRequests
from tripletsearch.serve.study import load_study
from tripletsearch.serve.web.limits import Limits, RateLimiter, client_address, rate_key

CAT = demo_catalogue()


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


def test_rate_limiter_sliding_minute_and_bounded_memory():
    clock = Clock()
    rate = RateLimiter(3, max_keys=2, clock=clock)
    for dt in (0.0, 10.0, 20.0):
        clock.t += dt
        rate.hit("a", "things")
    with pytest.raises(TooManyRequests, match=r"3 per minute\); try again in 30 s") as e:
        rate.hit("a", "things")  # the first of the three leaves the window at 1060
    assert e.value.retry_after == 30
    rate.hit("b", "things")  # another address has its own count
    clock.t = 1060.0
    rate.hit("a", "things")  # 60 s after the first: room again
    rate.hit("c", "things")
    assert list(rate._events) == ["a", "c"]  # at most 2 addresses kept, the oldest dropped
    unlimited = RateLimiter(0, clock=clock)
    for _ in range(1000):
        unlimited.hit("a", "things")
    assert not unlimited._events


class FakeRequest:
    def __init__(self, peer, forwarded=None):
        self.client = type("C", (), {"host": peer})()
        self.headers = {} if forwarded is None else {"x-forwarded-for": forwarded}


def test_limits_round_trip_to_the_workers():
    limits = Limits(5, 0, 7, frozenset({"10.0.0.2", "10.0.0.1"}))
    d = limits.to_dict()
    assert d["trusted_proxies"] == ["10.0.0.1", "10.0.0.2"]
    assert Limits.from_dict(json.loads(json.dumps(d))) == limits


def test_client_address_believes_trusted_proxies_only():
    proxy = {"10.0.0.1", "10.0.0.2"}
    # a client's own X-Forwarded-For is not believed
    assert client_address(FakeRequest("203.0.113.9", "1.2.3.4"), proxy) == "203.0.113.9"
    # through the proxies: the right-most address they did not add
    r = FakeRequest("10.0.0.1", "6.6.6.6, 198.51.100.7, 10.0.0.2")
    assert client_address(r, proxy) == "198.51.100.7"
    assert client_address(FakeRequest("10.0.0.1"), proxy) == "10.0.0.1"
    assert client_address(FakeRequest("10.0.0.1", "10.0.0.2"), proxy) == "10.0.0.1"


def test_ipv6_clients_count_by_their_64_network():
    assert (
        rate_key("2001:db8:1:2:aaaa::1")
        == rate_key("2001:db8:1:2:ffff::9")
        == ("2001:db8:1:2::/64")
    )
    assert rate_key("2001:db8:1:3::1") != rate_key("2001:db8:1:2::1")
    assert rate_key("::ffff:192.0.2.7") == "192.0.2.7" == rate_key("192.0.2.7")
    assert rate_key("testclient") == "testclient"


def test_sessions_per_client_per_minute(tmp_path):
    limits = Limits(sessions_per_minute=3, trusted_proxies=frozenset({"testclient"}))
    app = create_app(CAT, f"sqlite:///{tmp_path / 's.sqlite'}", config=ServeConfig(limits=limits))
    with in_process(app) as c:
        for _ in range(3):
            assert c.post("/api/sessions", json={}).status_code == 201
        r = c.post("/api/sessions", json={})
        assert r.status_code == 429 and int(r.headers["retry-after"]) >= 1
        assert "too many new sessions from your address" in r.json()["error"]
        # behind the trusted proxy (the test client's peer) each forwarded address counts
        other = {"X-Forwarded-For": "198.51.100.7"}
        assert c.post("/api/sessions", json={}, headers=other).status_code == 201
        # an answer is not a new session: never limited
        s = c.post("/api/sessions", json={}, headers={"X-Forwarded-For": "198.51.100.8"}).json()
        for screen in range(5):
            r = c.post(
                f"/api/sessions/{s['id']}/answer",
                json={"screen": screen, "choice": 0},
                headers={"Authorization": "Bearer " + s["token"]},
            )
            assert r.status_code == 200


def test_enrolments_per_client_per_minute(tmp_path):
    (tmp_path / "study.toml").write_text(
        textwrap.dedent(
            """
            title = "limits"
            catalogue = "colours"
            methods = ["gamma-ckl", "gauss"]
            targets = 2
            seed = 1
            """
        )
    )
    study = load_study(tmp_path / "study.toml")
    app = create_app(
        study.catalogue,
        f"sqlite:///{tmp_path / 's.sqlite'}",
        study=study,
        config=ServeConfig(limits=Limits(enrolments_per_minute=2)),
    )
    with in_process(app) as c:
        for _ in range(2):
            assert c.post("/api/participants", json={"consent": True}).status_code == 201
        r = c.post("/api/participants", json={"consent": True})
        assert r.status_code == 429 and "too many enrolments" in r.json()["error"]


def test_open_sessions_at_once(tmp_path):
    app = create_app(
        CAT,
        f"sqlite:///{tmp_path / 's.sqlite'}",
        config=ServeConfig(limits=Limits(max_open_sessions=2)),
    )
    with in_process(app) as c:
        a = c.post("/api/sessions", json={}).json()
        assert c.post("/api/sessions", json={}).status_code == 201
        r = c.post("/api/sessions", json={})
        assert r.status_code == 503 and r.headers["retry-after"] == "60"
        assert "2 searches open (at most 2)" in r.json()["error"]
        # a finished session is not open: "this is it" ends a
        h = {"Authorization": "Bearer " + a["token"]}
        r = c.post(
            f"/api/sessions/{a['id']}/answer",
            json={"screen": 0, "choice": 0, "found": True},
            headers=h,
        )
        assert r.status_code == 200 and r.json()["done"]
        # no seam: the open sessions are counted once a second by the service's own clock
        parts_of(app).service._open_count = (-1e9, 0)  # count again now
        assert c.post("/api/sessions", json={}).status_code == 201


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"sessions_per_minute": -1}, "sessions_per_minute: expected an integer >= 0"),
        ({"enrolments_per_minute": 1.5}, "enrolments_per_minute: expected an integer"),
        ({"max_open_sessions": True}, "max_open_sessions: expected an integer"),
    ],
)
def test_bad_limits(kw, match, capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # nothing written where the tests run
    with pytest.raises(ValueError, match=match):
        Limits(**kw)
    assert main(["serve", "--demo", "colours", "--sessions-per-minute", "-3"]) == 2
    assert "sessions_per_minute: expected an integer >= 0, got -3" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())  # refused before a token file or a database

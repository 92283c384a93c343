"""The service's HTTP connections through a real uvicorn (serve/protocol.py): request heads
bounded in size and time, bodies in time, normal requests and keep-alive unaffected; a
client that leaves mid-body is one line at info; ``X-Forwarded-For`` from 127.0.0.1 is not
believed (only ``--trusted-proxy``'s is). An in-process client bypasses the parser and the
proxy headers, so these talk to a socket."""

from __future__ import annotations

import logging
import socket
import textwrap
import time

import httpx
import pytest

from serve.helpers import catalogue_folder, collect_toml, thread_server, wait_until
from tripletsearch.serve import create_app, demo_catalogue
from tripletsearch.serve.collect import load_collect
from tripletsearch.serve.config import ServeConfig
from tripletsearch.serve.web import protocol as protocol_mod
from tripletsearch.serve.web.limits import Limits

CAT = demo_catalogue()
# a real server over sockets, with waits: once, not again under the sanitizers
pytestmark = pytest.mark.once


def connect(base):
    host, port = base.removeprefix("http://").split(":")
    s = socket.create_connection((host, int(port)), timeout=10)
    return s


def read_reply(s):
    """The bytes until the server closes the connection or stops (one reply, small)."""
    out = b""
    while True:
        try:
            chunk = s.recv(65536)
        except (TimeoutError, ConnectionResetError):
            break
        if not chunk:
            break
        out += chunk
    return out


@pytest.fixture
def base(tmp_path, monkeypatch):
    # no seam: the timeouts are module constants of the protocol uvicorn builds per connection
    monkeypatch.setattr(protocol_mod, "HEAD_TIMEOUT", 1.0)
    app = create_app(CAT, f"sqlite:///{tmp_path / 's.sqlite'}")
    with thread_server(app) as url:
        yield url


def test_a_head_over_the_limit_gets_431_and_the_connection_closes(base):
    s = connect(base)
    head = b"GET /api/health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (100 * 1024)
    try:
        s.sendall(head)  # the server may close before all of it is read
    except (BrokenPipeError, ConnectionResetError):
        pass
    reply = read_reply(s)
    assert reply.startswith(b"HTTP/1.1 431 Request Header Fields Too Large"), reply[:100]
    # many headers, each small, count together
    s = connect(base)
    head = b"GET /api/health HTTP/1.1\r\nHost: x\r\n" + b"X-A: bbbbbbbbbbbbbbbb\r\n" * 4000
    try:
        s.sendall(head + b"\r\n")
    except (BrokenPipeError, ConnectionResetError):
        pass
    assert read_reply(s).startswith(b"HTTP/1.1 431")


def test_a_slow_head_gets_408_and_the_connection_closes(base):
    s = connect(base)
    s.sendall(b"GET /api/health HTTP/1.1\r\nHost: x\r\n")
    for _ in range(3):  # a byte now and then: never a whole head
        time.sleep(0.2)  # the slow client under test, not a wait
        s.sendall(b"X")
    reply = read_reply(s)
    assert reply.startswith(b"HTTP/1.1 408 Request Timeout"), reply[:100]
    s = connect(base)  # a connection that never sends a byte
    assert read_reply(s).startswith(b"HTTP/1.1 408")


def test_normal_requests_and_keep_alive_pass(base):
    s = connect(base)
    ok = b"GET /api/health HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"p" * 30_000 + b"\r\n\r\n"
    for _ in range(3):  # three requests on one connection, the head timed afresh each time
        s.sendall(ok)
        data = b""
        while b"\r\n\r\n" not in data or not data.rstrip().endswith(b"}"):
            data += s.recv(65536)
        assert data.startswith(b"HTTP/1.1 200"), data[:100]
        # the idle client under test, not a wait: below the keep-alive timeout, above half
        # the head timeout
        time.sleep(0.6)
    s.close()


def test_a_slow_body_gets_408_and_the_connection_closes(tmp_path, monkeypatch):
    # no seam: the timeouts are module constants of the protocol uvicorn builds per connection
    monkeypatch.setattr(protocol_mod, "BODY_TIMEOUT", 1.0)
    app = create_app(CAT, f"sqlite:///{tmp_path / 's.sqlite'}")
    with thread_server(app) as url:
        s = connect(url)
        head = b"POST /api/sessions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        s.sendall(head + b"Content-Length: 100\r\n\r\n{")
        t0 = time.monotonic()
        for _ in range(4):  # a byte now and then, as the 1 byte/s clients of the report
            time.sleep(0.3)  # the slow client under test, not a wait
            try:
                s.sendall(b" ")
            except (BrokenPipeError, ConnectionResetError):
                break
        reply = read_reply(s)
        assert reply.startswith(b"HTTP/1.1 408 Request Timeout"), reply[:100]
        assert time.monotonic() - t0 < 5


def test_a_client_leaving_mid_body_is_one_line_at_info(tmp_path, caplog):
    app = create_app(CAT, f"sqlite:///{tmp_path / 's.sqlite'}")
    with thread_server(app) as url, caplog.at_level(logging.INFO):
        for _ in range(3):
            s = connect(url)
            head = b"POST /api/sessions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            s.sendall(head + b"Content-Length: 500\r\n\r\n{")
            time.sleep(0.2)  # the client under test: a moment mid-body, then gone
            s.close()  # 499 bytes short
        wait_until(lambda: len(_left(caplog)) >= 3, timeout=5, message="three lines said")
    assert len(_left(caplog)) == 3
    assert all(r.levelno == logging.INFO and not r.exc_info for r in _left(caplog))
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
    assert "Traceback" not in caplog.text


def _left(caplog) -> list:
    return [r for r in caplog.records if "left mid-request" in r.getMessage()]


COLLECT = collect_toml(max_queries=10, title=None, burn_in=None, seed=None)


@pytest.mark.parametrize("mode", ["find", "collect"])
def test_forwarded_for_from_this_host_is_not_believed(tmp_path, mode):
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    limits = Limits(sessions_per_minute=10, enrolments_per_minute=10)  # no trusted proxy
    if mode == "find":
        app, path, body = (
            create_app(CAT, db, config=ServeConfig(limits=limits)),
            "/api/sessions",
            {},
        )
    else:
        catalogue_folder(tmp_path)
        (tmp_path / "c.toml").write_text(textwrap.dedent(COLLECT))
        cfg = load_collect(tmp_path / "c.toml")
        app = create_app(cfg.catalogue, db, collect=cfg, config=ServeConfig(limits=limits))
        path, body = "/api/participants", {"consent": True}
    with thread_server(app) as url, httpx.Client(base_url=url, timeout=10) as c:
        codes = [
            c.post(path, json=body, headers={"X-Forwarded-For": f"203.0.113.{i}"}).status_code
            for i in range(30)
        ]
    assert codes == [201] * 10 + [429] * 20  # every one counted as 127.0.0.1

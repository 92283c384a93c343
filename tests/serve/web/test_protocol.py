"""The service's HTTP connections through a real uvicorn (serve/protocol.py): request heads
bounded in size and time, normal requests and keep-alive unaffected. An in-process client
bypasses the parser, so these talk to a socket."""

from __future__ import annotations

import socket
import time

import pytest

from serve.helpers import thread_server
from tripletsearch.serve import create_app, demo_catalogue
from tripletsearch.serve.web import protocol as protocol_mod

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
        time.sleep(0.2)
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
        time.sleep(0.6)  # below the keep-alive timeout; above half the head timeout
    s.close()

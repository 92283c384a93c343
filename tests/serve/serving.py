"""Components for the service's tests: the app in process (Starlette's TestClient: no
server, no socket), and the real ones for what needs them: a uvicorn server in a thread (the
browser), the ``tripletsearch serve`` command in its own process group (kill -9, several
workers), and a throwaway PostgreSQL cluster (Debian's ``postgresql``; as root, the
cluster runs as the ``postgres`` user)."""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_healthy(base: str, timeout: float = 60.0, proc: subprocess.Popen | None = None) -> None:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if proc is not None and proc.poll() is not None:
            out = proc.stdout.read() if proc.stdout else ""
            raise RuntimeError(f"the server exited ({proc.returncode}): {out}")
        try:
            if httpx.get(base + "/api/health", timeout=2.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise TimeoutError(f"{base} did not become healthy in {timeout} s")


@contextlib.contextmanager
def in_process(app: Any) -> Iterator[Any]:
    """``app`` served in this process by Starlette's TestClient (an ``httpx.Client``), with
    its lifespan; requests run through the whole ASGI stack, without a socket."""
    with warnings.catch_warnings():  # Starlette 1.x, importing it: "install httpx2 instead"
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient
    with TestClient(app) as client:
        yield client


@contextlib.contextmanager
def thread_server(app: Any) -> Iterator[str]:
    """``app`` served by uvicorn on a free port in this process; yields the base URL."""
    import uvicorn

    from tripletsearch.serve.protocol import uvicorn_options

    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            host="127.0.0.1",
            port=port,
            log_level="warning",
            lifespan="on",
            **uvicorn_options(),  # as tripletsearch serve runs it
        )
    )
    t = threading.Thread(target=server.run, daemon=True)
    t.start()
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base)
        yield base
    finally:
        server.should_exit = True
        t.join(timeout=10)


class ServeProcess:
    """``python -m tripletsearch serve`` in its own process group."""

    def __init__(self, *args: str, port: int | None = None, env: dict | None = None):
        self.port = port or free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        cmd = [sys.executable, "-m", "tripletsearch", "serve", "--port", str(self.port)]
        cmd += ["--log-level", "warning", *args]
        if "--sessions-per-minute" not in args:  # every test client is 127.0.0.1
            cmd += ["--sessions-per-minute", "0", "--enrolments-per-minute", "0"]
        self.proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
            # a given admin token: no token file written to the working directory
            env={**os.environ, "TRIPLETSEARCH_ADMIN_TOKEN": "test-admin", **(env or {})},
        )
        wait_healthy(self.base, proc=self.proc)

    def kill9(self) -> None:
        """SIGKILL to every process of the server: no shutdown, no flushing."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill9()
        with contextlib.suppress(ProcessLookupError):  # any orphaned worker
            os.killpg(self.proc.pid, signal.SIGKILL)

    def __enter__(self) -> ServeProcess:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def postgres_bindir() -> str | None:
    """The PostgreSQL server binaries (Debian: /usr/lib/postgresql/<v>/bin)."""
    for cand in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if os.path.exists(os.path.join(cand, "pg_ctl")):
            return cand
    pg_ctl = shutil.which("pg_ctl")
    return os.path.dirname(pg_ctl) if pg_ctl else None


@contextlib.contextmanager
def postgres_cluster() -> Iterator[str]:
    """A throwaway PostgreSQL cluster on a free port; yields its SQLAlchemy URL."""
    bindir = postgres_bindir()
    if bindir is None:
        raise RuntimeError("PostgreSQL is not installed (Debian: apt-get install postgresql)")
    root = Path(tempfile.mkdtemp(prefix="ts-pg-"))
    data, sock = root / "data", root / "sock"
    sock.mkdir()
    as_user: list[str] = []
    if os.geteuid() == 0:  # initdb refuses root: run the cluster as postgres
        as_user = ["runuser", "-u", "postgres", "--"]
        shutil.chown(root, "postgres")
        shutil.chown(sock, "postgres")
        os.chmod(root, 0o755)
    port = free_port()

    # PostgreSQL is not ours to sanitize: without the sanitizer runtime the CI preloads
    # (postgres hangs under it)
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS")}

    def run(*cmd: str) -> None:
        subprocess.run(
            [*as_user, *cmd], check=True, capture_output=True, text=True, env=env, timeout=120
        )

    run(f"{bindir}/initdb", "-D", str(data), "-A", "trust", "-U", "ts", "--no-sync")
    run(
        f"{bindir}/pg_ctl",
        "-D",
        str(data),
        "-l",
        str(root / "log"),
        "-w",
        "-o",
        f"-p {port} -k {sock} -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=off",
        "start",
    )
    try:
        yield f"postgresql+psycopg://ts@127.0.0.1:{port}/postgres"
    finally:
        with contextlib.suppress(subprocess.CalledProcessError):
            run(f"{bindir}/pg_ctl", "-D", str(data), "-m", "immediate", "stop")
        shutil.rmtree(root, ignore_errors=True)


# ---------------------------------------------------------------------- API clients
def auth(token):
    return {"Authorization": f"Bearer {token}"}


def start(client, **body):
    r = client.post("/api/sessions", json=body)
    assert r.status_code == 201, r.text
    return r.json()


def run_search(client, session, person, limit=400):
    """Answer screens until done; the replies."""
    screen, replies = session["screen"], []
    for _ in range(limit):
        r = client.post(
            f"/api/sessions/{session['id']}/answer",
            json=person.answer(screen),
            headers=auth(session["token"]),
        )
        assert r.status_code == 200, r.text
        replies.append(r.json())
        if r.json()["done"]:
            return replies
        screen = r.json()["screen"]
    raise AssertionError("the search did not end")

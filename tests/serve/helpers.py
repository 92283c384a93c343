"""Components for the service's tests: the app in process (Starlette's TestClient: no
server, no socket), and the real ones for what needs them: a uvicorn server in a thread (the
browser), the ``tripletsearch serve`` command in its own process group (kill -9, several
workers), and a throwaway PostgreSQL database (Debian's ``postgresql``: one cluster per test
process, as root run as the ``postgres`` user); the API clients, the collect and study files (one
set of keys) and the catalogues several test modules share; :func:`wait_until`, how a test
waits (on a condition, never a time)."""

from __future__ import annotations

import atexit
import contextlib
import glob
import json
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
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import httpx
import numpy as np

from tripletsearch.people import FindPerson
from tripletsearch.serve import load_catalogue
from tripletsearch.serve.collect.rules import AGREEMENT_AFTER

ADMIN = "admin-secret"  # the admin token of the shared server (conftest's ``server``)


def wait_until(
    predicate: Callable[[], Any],
    timeout: float = 60.0,
    message: str | Callable[[], str] = "the condition",
    every: float = 0.05,
) -> Any:
    """Poll ``predicate()`` until it is truthy; its value.

    Fails (AssertionError) with ``message`` (or what ``message()`` says then) if it is not
    within ``timeout`` seconds. A
    test waits on what it waits for (a row written, a process gone, a file present), never
    a fixed time: ``timeout`` only bounds a failure, it is not how long a pass takes.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            said = message() if callable(message) else message
            raise AssertionError(f"{said}: not within {timeout:g} s")
        time.sleep(every)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_healthy(base: str, timeout: float = 60.0, proc: subprocess.Popen | None = None) -> None:
    """Wait until the server at ``base`` answers its health check (:func:`wait_until`);
    a RuntimeError with its output if ``proc``, its process, exits first."""

    def healthy() -> bool:
        if proc is not None and proc.poll() is not None:
            out = proc.stdout.read() if proc.stdout else ""
            raise RuntimeError(f"the server exited ({proc.returncode}): {out}")
        try:
            return httpx.get(base + "/api/health", timeout=2.0).status_code == 200
        except httpx.HTTPError:
            return False

    wait_until(healthy, timeout, f"{base} healthy", every=0.1)


@contextlib.contextmanager
def in_process(app: Any) -> Iterator[Any]:
    """``app`` served in this process by Starlette's TestClient (an ``httpx.Client``), with
    its lifespan; requests run through the whole ASGI stack, without a socket."""
    with warnings.catch_warnings():  # Starlette 1.x, importing it: "install httpx2 instead"
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient
    with TestClient(app) as client:
        yield client


class Parts(NamedTuple):
    """What :func:`parts_of` gives: an app's configuration, search service, store, study and
    collect services (None: not one)."""

    config: Any
    service: Any
    store: Any
    study: Any
    collect: Any

    @property
    def experiment(self) -> Any:
        """The study's or the collect's service (None: a free server)."""
        return self.study if self.study is not None else self.collect


def parts_of(app: Any) -> Parts:
    """The parts ``create_app`` built ``app`` of: the one place tests read ``app.state``.

    A test reads what a route shows through the route. What no route shows is read here:
    the live searchers and their memory, a mode's shared state, the store a fault is put
    into, the experiment as bound (its key), the configuration a worker rebuilt. No public
    seam gives them, by design: a server's owner reaches its parts through the routes, the
    database and the command line, and the app keeps its parts in Starlette's
    ``app.state``; reading them in this one function keeps the tests' knowledge of that
    layout in one place.
    """
    state = app.state
    return Parts(state.config, state.service, state.store, state.study, state.collect)


@contextlib.contextmanager
def thread_server(app: Any) -> Iterator[str]:
    """``app`` served by uvicorn on a free port in this process; yields the base URL."""
    import uvicorn

    from tripletsearch.serve.web.protocol import uvicorn_options

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


class _Cluster:
    """A throwaway PostgreSQL server on a free port, stopped when the test process exits."""

    def __init__(self, bindir: str):
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="ts-pg-"))
        self.data, sock = self.root / "data", self.root / "sock"
        sock.mkdir()
        self.as_user: list[str] = []
        if os.geteuid() == 0:  # initdb refuses root: run the cluster as postgres
            self.as_user = ["runuser", "-u", "postgres", "--"]
            shutil.chown(self.root, "postgres")
            shutil.chown(sock, "postgres")
            os.chmod(self.root, 0o755)
        self.port = free_port()
        self.run(f"{bindir}/initdb", "-D", str(self.data), "-A", "trust", "-U", "ts", "--no-sync")
        options = f"-p {self.port} -k {sock} -c listen_addresses=127.0.0.1 -c fsync=off"
        log = str(self.root / "log")
        self.run(
            f"{bindir}/pg_ctl", "-D", str(self.data), "-l", log, "-w",
            "-o", options + " -c max_connections=200", "start",
        )  # fmt: skip
        self.databases = 0

    def run(self, *cmd: str) -> None:
        # PostgreSQL is not ours to sanitize: without the sanitizer runtime the CI preloads
        # (postgres hangs under it)
        env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS")}
        subprocess.run(
            [*self.as_user, *cmd], check=True, capture_output=True, text=True, env=env, timeout=120
        )

    def sql(self, statement: str) -> None:
        import psycopg

        url = f"host=127.0.0.1 port={self.port} user=ts dbname=postgres"
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(statement)

    def stop(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError):
            self.run(f"{self.bindir}/pg_ctl", "-D", str(self.data), "-m", "immediate", "stop")
        shutil.rmtree(self.root, ignore_errors=True)


_CLUSTER: list[_Cluster] = []  # this test process's, started at its first use


@contextlib.contextmanager
def postgres_cluster() -> Iterator[str]:
    """A fresh, empty PostgreSQL database; yields its SQLAlchemy URL.

    Its server is this test process's one throwaway cluster (started at the first use, a
    few seconds; stopped at the process's exit); each use gets a database of its own,
    dropped after it with its connections.
    """
    bindir = postgres_bindir()
    if bindir is None:
        raise RuntimeError("PostgreSQL is not installed (Debian: apt-get install postgresql)")
    if not _CLUSTER:
        _CLUSTER.append(_Cluster(bindir))
        atexit.register(_CLUSTER[0].stop)
    cluster = _CLUSTER[0]
    cluster.databases += 1
    name = f"ts_{cluster.databases}"
    cluster.sql(f"CREATE DATABASE {name}")
    try:
        yield f"postgresql+psycopg://ts@127.0.0.1:{cluster.port}/{name}"
    finally:
        cluster.sql(f"DROP DATABASE {name} WITH (FORCE)")


class DemoServer:
    """A search server's app and database, as the service tests use it (conftest's
    ``server``): ``client`` (in process, :func:`in_process`), ``app``, ``db`` (its SQLite
    file) and ``url``; ``base``, the URL of the same database served by uvicorn in a thread
    (:func:`thread_server`, started at the first use: the browser's). Unpacks as
    ``client, app, db``."""

    def __init__(self, make_app: Callable[[], Any], db: Path, stack: contextlib.ExitStack):
        self.make_app, self.db, self._stack = make_app, db, stack
        self.url = f"sqlite:///{db}"
        self.app = make_app()
        self.client = stack.enter_context(in_process(self.app))
        self._base: str | None = None

    @property
    def base(self) -> str:
        """The URL of another app of ``make_app`` on the same database, served by uvicorn."""
        if self._base is None:
            self._base = self._stack.enter_context(thread_server(self.make_app()))
        return self._base

    def __iter__(self) -> Iterator[Any]:
        return iter((self.client, self.app, self.db))


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


def enrol(c, status=201, **extra):
    """A participant enrolled with consent through ``POST /api/participants`` (``extra``:
    the body's other keys, ``platform`` or ``platform_id``): their reply and authorization
    header. The reply's status is asserted (``status``; a resumed one's is 201 too)."""
    r = c.post("/api/participants", json={"consent": True, **extra})
    assert r.status_code == status, r.text
    pr = r.json()
    return pr, {"Authorization": "Bearer " + pr["token"]}


def first(screen: dict) -> int:
    """The first candidate of ``screen`` (a script's pick)."""
    return 0


def claiming(ms: int, pick=first):
    """:func:`answer_all`'s ``body``: ``pick(screen)`` with ``"response_ms": ms``."""
    return lambda reply: {
        "screen": reply["screen"]["number"],
        "choice": pick(reply["screen"]),
        "response_ms": ms,
    }


def finding(catalogue, gamma=None, rng=None, answer=None):
    """:func:`answer_all`'s ``body`` for a study: a :class:`FindPerson` (``gamma``, ``rng``)
    for each search, made when its first screen shows (the reply's ``target``), answers
    its screens (``answer(person, screen)``: their answer otherwise), with the ``slot``."""
    people: dict[int, FindPerson] = {}

    def body(reply: dict) -> dict:
        slot = reply["slot"]
        if slot not in people:
            people[slot] = FindPerson(catalogue, reply["target"]["id"], gamma, rng)
        person = people[slot]
        said = person.answer(reply["screen"]) if answer is None else answer(person, reply["screen"])
        return {**said, "slot": slot}

    return body


def answer_all(
    c, pid, h, pick=first, *, body=None, seen=None, most=None, until=None, withdraw=False
):
    """Participant ``pid`` (header ``h``) asks for their current screen, then answers each
    screen through the participants' routes until their part ends, after ``most`` answers,
    or at the first reply for which ``until(reply)`` is true; the last reply (their end, or
    the screen then shown).

    Each answer: ``{"screen", "choice": pick(screen)}`` (None: a skip), or ``body(reply)``,
    the whole body from the reply that showed the screen (``found``, ``slot``,
    ``response_ms``). ``seen``: a list to which each (reply shown, body sent, answer's
    reply) is appended. ``withdraw``: stopped before their part's end, they then stop
    taking part (``POST .../withdraw``), and its reply is the one returned. Every reply
    must be 200.
    """
    url = f"/api/participants/{pid}"
    r = c.post(url + "/next", json={}, headers=h)
    for n in range(100_000 if most is None else most + 1):
        assert r.status_code == 200, r.text
        reply = r.json()
        if reply["done"] or n == most or (until is not None and until(reply)):
            if withdraw and not reply["done"]:
                r = c.post(url + "/withdraw", json={}, headers=h)
                assert r.status_code == 200, r.text
                return r.json()
            return reply
        sent = body(reply) if body else {"screen": reply["screen"]["number"]}
        if body is None:
            sent["choice"] = pick(reply["screen"])
        r = c.post(url + "/answer", json=sent, headers=h)
        if seen is not None:
            seen.append((reply, sent, r.json()))
    raise AssertionError(f"{pid}'s part did not end within 100,000 answers")


def take_part(
    c, pick=first, *, body=None, seen=None, most=None, until=None, withdraw=False, **extra
):
    """A participant enrolled (:func:`enrol` with ``extra``: ``platform``, ``status``) who
    answers every screen (:func:`answer_all` with ``pick``, ``body``, ``seen``; or stops
    after ``most`` answers or at ``until``, then ``withdraw``): their enrolment reply,
    authorization header and last reply."""
    pr, h = enrol(c, **extra)
    stop = {"most": most, "until": until, "withdraw": withdraw}
    return pr, h, answer_all(c, pr["id"], h, pick, body=body, seen=seen, **stop)


def interleaved(client, cat, people=3, rounds=8):
    """Sessions of ``people`` answered in turn; every reply, in order. Each person picks the
    item nearest their target, and says "found" when the target is shown."""
    rng = np.random.default_rng(0)  # unused: the nearest item, never a draw
    out, sessions = [], []
    for p in range(people):
        r = client.post("/api/sessions", json={"n_choices": 4})
        assert r.status_code == 201, r.text
        sessions.append((r.json(), FindPerson(cat, 100 + 37 * p, None, rng)))
        out.append(r.json()["screen"])
    screens = [s["screen"] for s, _ in sessions]
    for _ in range(rounds):
        for p, (s, person) in enumerate(sessions):
            if screens[p] is None:
                continue
            r = client.post(
                f"/api/sessions/{s['id']}/answer",
                json=person.answer(screens[p]),
                headers=auth(s["token"]),
            )
            assert r.status_code == 200, r.text
            out.append(r.json())
            screens[p] = r.json()["screen"]
    return out


# ---------------------------------------------------------------------- design files
# the keys most test files share; a test names only what it needs otherwise (None: leave out)
COLLECT_KEYS: dict[str, Any] = {
    "title": "Alike?",
    "catalogue": "items",
    "samplers": ["random"],
    "n_choices": 2,
    "max_queries": 12,
    "burn_in": 2,
    "seed": 5,
}
STUDY_KEYS: dict[str, Any] = {
    "title": "Find the colour",
    "catalogue": "colours",
    "methods": ["gamma-ckl", "gauss"],
    "targets": 3,
    "n_choices": 4,
    "seed": 3,
    "max_queries": 30,
}


def toml_text(keys: dict[str, Any]) -> str:
    """``keys`` as the top-level lines of a TOML file, one ``key = value`` a line (values
    of None left out; strings, numbers, booleans and lists spelled as JSON spells them)."""
    return "".join(f"{k} = {json.dumps(v)}\n" for k, v in keys.items() if v is not None)


def collect_toml(**keys: Any) -> str:
    """A collect file's text: :data:`COLLECT_KEYS` with ``keys`` (None: a key left out).

    A collect too short for the agreement rule (``max_queries`` less its check screens
    under 40) says ``agreement = false`` unless ``keys`` give it, as its file must.
    """
    got = {**COLLECT_KEYS, **keys}
    most = got.get("max_queries") or 100
    left = most - len(got.get("attention") or []) - len(got.get("repeats") or [])
    if "agreement" not in got and left < AGREEMENT_AFTER:
        got["agreement"] = False
    return toml_text(got)


def study_toml(**keys: Any) -> str:
    """A study file's text: :data:`STUDY_KEYS` with ``keys`` (None: a key left out)."""
    return toml_text({**STUDY_KEYS, **keys})


def write_design(folder: Path, name: str, text: str) -> Path:
    """``folder / name`` written with ``text``; its catalogue ``items`` (a folder beside it,
    :func:`catalogue_folder`) made too where the file names it and it is not there yet."""
    folder.mkdir(parents=True, exist_ok=True)
    if 'catalogue = "items"' in text and not (folder / "items").exists():
        catalogue_folder(folder)
    (folder / name).write_text(text)
    return folder / name


def write_collect(folder: Path, file: str = "collect.toml", **keys: Any) -> Path:
    """A collect file (:func:`collect_toml` of ``keys``) written as ``folder / file``, with its
    catalogue ``items`` beside it when it names that (:func:`write_design`); its path.
    Conftest's ``collect_file``."""
    return write_design(folder, file, collect_toml(**keys))


def write_study(folder: Path, file: str = "study.toml", **keys: Any) -> Path:
    """A study file (:func:`study_toml` of ``keys``) written as ``folder / file``, with its
    catalogue ``items`` beside it when it names that (:func:`write_design`); its path.
    Conftest's ``study_file``."""
    return write_design(folder, file, study_toml(**keys))


# ---------------------------------------------------------------------- catalogues
def make_catalogue(root, n, dim=3, seed=0):
    """A catalogue folder of ``n`` named items with a random embedding, loaded."""
    root.mkdir()
    rng = np.random.default_rng(seed)
    np.save(root / "embedding.npy", rng.normal(size=(n, dim)).astype(np.float32))
    (root / "items.csv").write_text("name\n" + "\n".join(f"item {i}" for i in range(n)) + "\n")
    return load_catalogue(root)


def catalogue_folder(tmp_path, n=30):
    """``tmp_path / "items"``: ``n`` colours by name and hex, without an embedding."""
    root = tmp_path / "items"
    root.mkdir(parents=True)
    rng = np.random.default_rng(1)
    rows = ["name,hex"] + [
        f"colour {i},#{''.join(f'{int(v):02x}' for v in rng.integers(0, 256, 3))}" for i in range(n)
    ]
    (root / "items.csv").write_text("\n".join(rows) + "\n")
    return root


# ---------------------------------------------------------------------- processes (Linux /proc)
def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid``."""
    out = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            with open(f"/proc/{entry}/stat", encoding="ascii") as fh:
                if int(fh.read().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(entry))
    return out


def cmdline(pid: int) -> str:
    """The command line of process ``pid`` ("" when it is gone)."""
    with contextlib.suppress(OSError):
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode()
    return ""


def refitter_of(pid: int) -> int | None:
    """The refitter child of server ``pid``, or None."""
    return next((c for c in children(pid) if "collect.refitter" in cmdline(c)), None)

"""Processes that die with their server: the kernel's parent-death signal and a parent watch.

A server's children (its uvicorn workers, the collect's refitter) must not outlive it: a
worker left serving the port makes a restart fail ("Address already in use"), a refitter
left running keeps its lease and refits with an old file. :func:`die_with_parent` asks the
kernel (Linux: ``PR_SET_PDEATHSIG``) to send a signal when the parent goes, and watches
the parent itself as well (other systems, and a parent that went before the request).

Every process of a server runs the server's design: the experiment the server read, checked
and registered at its start is handed to its children in a file (:func:`write_design`,
:func:`read_design`), never read again from the experiment's file, which its owner may edit
while the server runs. :func:`server_id` names the server a process belongs to.
The standard library and :mod:`..catalogue.shared`'s private folder.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import pickle
import signal
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from ..catalogue.shared import private_directory

__all__ = [
    "die_with_parent",
    "mark_server",
    "nice_of",
    "server_id",
    "write_design",
    "read_design",
]

PR_SET_PDEATHSIG = 1  # linux/prctl.h
SERVER_PID = "TRIPLETSEARCH_SERVER_PID"  # the parent a child must die with
SERVER_ID = "TRIPLETSEARCH_SERVER_ID"  # the server's name: where it listens


def mark_server(address: str | None = None) -> None:
    """Name this process, in the environment its children inherit, as the one they die with.

    A child that starts while its server is already gone (killed during the child's
    imports) then knows: its parent is no longer the one named. ``address``: where the
    server listens (``"host:port"``), its name in :func:`server_id`.
    """
    os.environ[SERVER_PID] = str(os.getpid())
    if address is not None:
        os.environ[SERVER_ID] = address


def server_id() -> str:
    """The server this process belongs to: the address :func:`mark_server` named.

    A server restarted on the same address is the same server (what it keeps in the
    database under its name replaces what its last run kept). Without an address,
    ``"host:pid"`` of the server (a process no server named, a test's app: its own).
    """
    named = os.environ.get(SERVER_ID)
    return named or f"{socket.gethostname()}:{os.environ.get(SERVER_PID) or os.getpid()}"


def write_design(design: Any) -> str:
    """Keep ``design`` (the experiment the server checked) in a new owner-only file; its path.

    A pickle in ``tripletsearch-<uid>`` of the temporary directory (owner-only, as the
    shared catalogue's files): the server's children read it (:func:`read_design`), never
    the experiment's file again. The server removes it when it ends; the files of servers
    gone without (killed) are removed here. ValueError when the folder is not private
    (:func:`~..catalogue.shared.private_directory`).
    """
    root = private_directory()
    for old in root.glob("design-*-*.pickle"):  # of servers that are gone
        pid = old.name.split("-")[1]
        if pid.isdigit() and not _running(int(pid)):
            with contextlib.suppress(OSError):
                old.unlink()
    fd, path = tempfile.mkstemp(prefix=f"design-{os.getpid()}-", suffix=".pickle", dir=root)
    with os.fdopen(fd, "wb") as fh:
        pickle.dump(design, fh, protocol=pickle.HIGHEST_PROTOCOL)
    return path


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's
    return True


def read_design(path: str) -> Any:
    """The design :func:`write_design` kept in ``path`` (a file of this user only).

    ValueError when its folder is not private or the file is another user's or writable
    by others (it is unpickled: it must be this user's server's own).
    """
    private_directory(Path(path).parent, create=False)
    st = os.stat(path)
    if (hasattr(os, "getuid") and st.st_uid != os.getuid()) or st.st_mode & 0o022:
        raise ValueError(f"{path}: not this user's own file")
    with open(path, "rb") as fh:
        return pickle.load(fh)  # noqa: S301 - written by this user's server, owner-only


def die_with_parent(sig: int = signal.SIGTERM, *, every: float = 1.0, grace: float = 5.0) -> int:
    """End this process when its parent ends; the parent's pid.

    The kernel sends ``sig`` when the parent's thread that started this process ends
    (Linux); a daemon thread also checks the parent every ``every`` seconds and sends
    ``sig`` itself, then exits the process ``grace`` seconds later if ``sig`` did not.
    The parent is the server named by :func:`mark_server` where there is one: a parent
    gone before this call is then seen at once.
    """
    parent = int(os.environ.get(SERVER_PID) or 0) or os.getppid()
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every)
        os.kill(os.getpid(), sig)
        time.sleep(grace)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()
    return parent


def nice_of(pid: int) -> int | None:
    """The nice value of process ``pid`` (Linux ``/proc``), or None where it cannot tell."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[16])  # field 19 of stat: the state is field 3, the first after ")"

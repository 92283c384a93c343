"""Processes that die with their server: the kernel's parent-death signal and a parent watch.

A server's children (its uvicorn workers, the collect's refitter) must not outlive it: a
worker left serving the port makes a restart fail ("Address already in use"), a refitter
left running keeps its lease and refits with an old file. :func:`die_with_parent` asks the
kernel (Linux: ``PR_SET_PDEATHSIG``) to send a signal when the parent goes, and watches
the parent itself as well (other systems, and a parent that went before the request).
NumPy and the standard library only.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
import time

__all__ = ["die_with_parent", "mark_server", "nice_of"]

PR_SET_PDEATHSIG = 1  # linux/prctl.h
SERVER_PID = "TRIPLETSEARCH_SERVER_PID"  # the parent a child must die with


def mark_server() -> None:
    """Name this process, in the environment its children inherit, as the one they die with.

    A child that starts while its server is already gone (killed during the child's
    imports) then knows: its parent is no longer the one named.
    """
    os.environ[SERVER_PID] = str(os.getpid())


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

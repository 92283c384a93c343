"""A child that must die with its server: gone at once when the server it names is already
gone, and when its parent goes later; ``nice_of`` against the kernel's own answer."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from serve.helpers import cmdline, wait_until
from tripletsearch.serve.service.processes import SERVER_PID, nice_of

CHILD = (
    "import time; from tripletsearch.serve.service.processes import die_with_parent; "
    "die_with_parent(every=0.1, grace=1.0); print('waiting', flush=True); time.sleep(60)"
)


def dead_pid() -> int:
    """A pid no process has now (one that ran and was reaped)."""
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_a_child_whose_named_server_is_gone_ends_at_once():
    env = {**os.environ, SERVER_PID: str(dead_pid())}
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", CHILD], env=env, timeout=30, check=False)
    assert time.monotonic() - t0 < 30 and proc.returncode != 0  # SIGTERM: -15


def test_a_child_ends_when_its_parent_does():
    # the parent: a shell that starts the child in the background, waits, and exits
    script = f'{sys.executable} -c "{CHILD}" >/dev/null & echo $!; sleep 3'
    env = {k: v for k, v in os.environ.items() if k != SERVER_PID}
    out = subprocess.run(["sh", "-c", script], env=env, capture_output=True, text=True)
    child = int(out.stdout.split()[0])
    wait_until(lambda: ended(child), timeout=15, message=f"the child {child} ended")


def ended(pid: int) -> bool:
    """Whether process ``pid`` is gone or a zombie (ended, not yet reaped)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_nice_of_reads_what_the_kernel_says():
    p = subprocess.Popen(["nice", "-n", "7", sys.executable, "-c", "import time; time.sleep(30)"])
    try:  # nice sets the priority, then runs python
        # nice's own command line names python too: wait until nice has exec'd it
        started = lambda: cmdline(p.pid).startswith(sys.executable)  # noqa: E731
        wait_until(started, timeout=30, message="python started")
        assert nice_of(p.pid) == min(19, os.nice(0) + 7)
    finally:
        p.kill()
        p.wait()
    assert nice_of(dead_pid()) is None

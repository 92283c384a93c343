"""A server removes its design file (the study it checked, pickled for its children) when
it stops on SIGTERM, with one worker as with several: uvicorn raises the signal again once
it shut down, which ended a one-worker server before it could clean up."""

from __future__ import annotations

import os
import signal

import pytest

from serve.helpers import ServeProcess, write_study

pytestmark = pytest.mark.once  # server processes


@pytest.mark.parametrize("workers", [1, 2])
def test_sigterm_leaves_no_design_file(tmp_path, workers):
    (tmp_path / "tmp").mkdir()
    folder = tmp_path / "tmp" / f"tripletsearch-{os.getuid()}"
    study = write_study(tmp_path / "served")
    args = ["--study", str(study), "--database", f"sqlite:///{tmp_path / 's.sqlite'}"]
    server = ServeProcess(*args, "--workers", str(workers), env={"TMPDIR": str(tmp_path / "tmp")})
    try:
        (design,) = folder.glob("design-*.pickle")  # the server's, while it runs
        assert design.name.startswith(f"design-{server.proc.pid}-")
        os.killpg(server.proc.pid, signal.SIGTERM)
        code = server.proc.wait(timeout=30)
    finally:
        server.stop()
    assert code in (0, 128 + signal.SIGTERM), code  # an exit, not a death by the signal
    assert not design.exists() and not list(folder.glob("design-*"))

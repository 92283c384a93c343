"""The guide "Running a study on Prolific" runs as written: every ``tripletsearch`` command
of docs/guide/prolific.rst, in its order, on its study file and a small catalogue of
pictures, with the participants a Prolific study would send (over HTTPS, ids in the link).

The serve command runs as the page gives it but on a free port of 127.0.0.1 (the page's
``--host 0.0.0.0 --port 8443``: another test may hold the port); its certificate is one the
test makes (trustme), which the test's client trusts alone.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shlex
import signal
import ssl
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from serve import helpers

from tripletsearch.serve.export import data_path

pytest.importorskip("starlette")
trustme = pytest.importorskip("trustme")
httpx = pytest.importorskip("httpx")

# Prolific ids (24 hexadecimal digits): one who finishes, one who withdraws, one who
# never submits
FIN_ID, WD_ID, UN_ID = "f1" * 12, "d0" * 12, "0a" * 12
GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guide" / "prolific.rst"
pytestmark = [
    pytest.mark.once,
    pytest.mark.skipif(not GUIDE.is_file(), reason="docs/ not next to the tests"),
]


def blocks(text: str, language: str) -> list[str]:
    """The bodies of the page's ``.. code-block:: <language>`` directives, dedented."""
    pattern = rf"^\.\. code-block:: {language}\n\n((?:   .*\n|\n)+)"
    return [
        "\n".join(line[3:] for line in m.group(1).splitlines()).strip() + "\n"
        for m in re.finditer(pattern, text, re.M)
    ]


def commands(text: str) -> list[list[str]]:
    """Every ``$ tripletsearch ...`` line of the page's console blocks, split, in order."""
    return [
        shlex.split(line[2:])
        for body in blocks(text, "console")
        for line in body.splitlines()
        if line.startswith("$ tripletsearch")
    ]


def option(cmd: list[str], name: str) -> str:
    return cmd[cmd.index(name) + 1]


def pictures(root: Path, n: int = 24) -> None:
    """A catalogue folder ``root``: n pictures (PNG), items.csv naming them, an embedding."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(0)
    (root / "img").mkdir(parents=True)
    rows = ["name,image"]
    for i in range(n):
        plt.imsave(root / "img" / f"shoe{i}.png", rng.random((16, 24, 3)))
        rows.append(f"shoe {i},img/shoe{i}.png")
    (root / "items.csv").write_text("\n".join(rows) + "\n")
    np.save(root / "embedding.npy", rng.normal(size=(n, 3)))


def run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess:
    exe = [sys.executable, "-m", "tripletsearch", *cmd[1:]]
    return subprocess.run(exe, cwd=cwd, capture_output=True, text=True, timeout=300)


def take_part(client, params: dict, finish: bool) -> dict:
    """A Prolific participant: enrols from the link's parameters (201, a new one or their
    part resumed), answers the first screen of every search (then each search runs to
    max_queries) or withdraws after one answer; their end."""
    end = helpers.take_part(client, platform=params, most=None if finish else 1, withdraw=True)[2]
    assert end["done"], end
    return end


def test_every_command_of_the_prolific_guide_runs(tmp_path):
    text = GUIDE.read_text()
    cmds = commands(text)
    toml = blocks(text, "toml")
    assert len(toml) == 2 and len(cmds) == 5, "the page's blocks changed: update this test"
    (tmp_path / "study.toml").write_text(toml[0])
    pictures(tmp_path / "shoes")
    # the SONA credit redirect: the study file on SONA loads (its {id} a SONA parameter)
    from tripletsearch.serve.study import load_study

    head = toml[0].split("[completion.finished]")[0].replace('"prolific"', '"sona"')
    (tmp_path / "sona.toml").write_text(head + toml[1])
    assert "{id}" in load_study(tmp_path / "sona.toml").completion["finished"]["redirect"]
    ran = []

    # the server over HTTPS, with a certificate of a CA the client trusts alone
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1", "localhost")
    cert.private_key_and_cert_chain_pem.write_to_path(str(tmp_path / "cert.pem"))
    cert.private_key_pem.write_to_path(str(tmp_path / "key.pem"))
    ca.cert_pem.write_to_path(str(tmp_path / "ca.pem"))
    serve = cmds[0]
    assert serve[:2] == ["tripletsearch", "serve"]
    port = str(_free_port())
    args = [a for a in serve[2:]]
    args[args.index("--port") + 1] = port
    args[args.index("--host") + 1] = "127.0.0.1"
    env = {**os.environ, "TRIPLETSEARCH_ADMIN_TOKEN": "guide-admin"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "tripletsearch", "serve", *args, "--log-level", "warning"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    ran.append(serve)
    base = f"https://127.0.0.1:{port}"
    try:
        trust = ssl.create_default_context(cafile=str(tmp_path / "ca.pem"))  # this CA alone
        with httpx.Client(base_url=base, verify=trust, timeout=30) as client:
            deadline = time.monotonic() + 90
            while True:
                assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
                try:
                    if client.get(base + "/api/health").status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.2)
            assert (
                "max-age=31536000"
                in client.get(base + "/api/experiment").headers["strict-transport-security"]
            )
            link = {"STUDY_ID": "S1", "SESSION_ID": "X1"}
            done = take_part(client, {**link, "PROLIFIC_PID": FIN_ID}, True)
            gone = take_part(client, {**link, "PROLIFIC_PID": WD_ID}, False)
            # the same id again (another browser): the same participant, the same end
            again = take_part(client, {**link, "PROLIFIC_PID": FIN_ID}, True)
            assert again["completion_code"] == done["completion_code"] == "C7F2K9Q1"
            assert gone["completion_code"] == "CWD0R4W5"
            r = client.post(
                base + "/api/participants",
                json={"consent": True, "platform": {**link, "PROLIFIC_PID": UN_ID}},
            )
            assert r.status_code == 201
            # a return and retake: the new SESSION_ID refused until the owner releases
            release = cmds[1]
            retake = {"STUDY_ID": "S1", "PROLIFIC_PID": option(release, "--platform-id")}
            first = take_part(client, {**retake, "SESSION_ID": "R1"}, False)
            again = {"consent": True, "platform": {**retake, "SESSION_ID": "R2"}}
            r = client.post(base + "/api/participants", json=again)
            assert r.status_code == 409 and "another session" in r.json()["error"]
            out = run(release, tmp_path)
            ran.append(release)
            assert out.returncode == 0 and out.stdout.startswith("released P-"), out.stderr
            fresh = take_part(client, again["platform"], True)
            assert fresh["completion_code"] == "C7F2K9Q1" != first["completion_code"]
            # the owner's preview: nothing of it counts
            r = client.post(
                base + "/api/preview/participants",
                json={},
                headers={"Authorization": "Bearer guide-admin"},
            )
            assert r.status_code == 201, r.text
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)

    # Prolific's submissions: the two who ended submitted their codes
    with open(tmp_path / "prolific_export.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["Submission id", "Participant id", "Status", "Completion code"])
        w.writerow(["s1", FIN_ID, "AWAITING REVIEW", "C7F2K9Q1"])
        w.writerow(["s2", WD_ID, "AWAITING REVIEW", "CWD0R4W5"])
    codes = cmds[2]
    out = run(codes, tmp_path)
    ran.append(codes)
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"NOT SUBMITTED {UN_ID} (started" in out.stdout and "PREVIEW" not in out.stdout
    assert "2 submitted: 2 match, 0 do not" in out.stdout, out.stdout

    export = cmds[3]
    out = run(export, tmp_path)
    ran.append(export)
    assert out.returncode == 0, out.stdout + out.stderr
    folder = tmp_path / option(export, "--out")
    with open(folder / data_path("participants.csv"), newline="") as fh:
        rows = {r["platform_id"]: r for r in csv.DictReader(fh)}
    assert set(rows) == {FIN_ID, WD_ID, UN_ID, option(cmds[1], "--platform-id")}
    assert rows[FIN_ID]["code"] == "C7F2K9Q1"
    assert json.loads(rows[WD_ID]["platform_params"])["STUDY_ID"] == "S1"
    assert {"datapackage.json", "dataset_description.json", "export.json"} <= {
        p.name for p in folder.iterdir()
    }

    # MTurk's batch results: the columns the page names, read with --platform mturk
    with open(tmp_path / "Batch_results.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["HITId", "AssignmentId", "WorkerId", "Answer.surveycode"])
        w.writerow(["h", "a1", FIN_ID, "C7F2K9Q1"])
        w.writerow(["h", "a2", WD_ID, "WRONG"])
    mturk = cmds[4]
    out = run(mturk, tmp_path)
    ran.append(mturk)
    assert out.returncode == 1, out.stdout + out.stderr  # a code that does not match
    said = f"MISMATCH {WD_ID}: submitted WRONG, recorded CWD0R4W5 (withdrawn)"
    assert said in out.stdout, out.stdout

    assert ran == cmds  # every command of the page, in its order


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])

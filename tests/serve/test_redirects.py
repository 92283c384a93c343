"""A redirect naming the participant's link parameters (SONA's survey code, MTurk's
assignment) is filled in, URL-encoded, at the end of their part; a name the platform's link
does not carry is refused when the file is read."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from serve import helpers
from serve.helpers import collect_toml, in_process, write_design
from tripletsearch.serve import create_app
from tripletsearch.serve.collect import load_collect
from tripletsearch.serve.participation.completion import fill_redirect
from tripletsearch.serve.store import Store

CREDIT = "https://uni.sona-systems.com/webstudy_credit.aspx?experiment_id=7&credit_token=t0k"
SONA = f"""
platform = "sona"

[completion.finished]
code = "DONE"
redirect = "{CREDIT}&survey_code={{id}}"

[completion.withdrawn]
redirect = "https://example.org/left?id={{id}}&code={{code}}"
"""


def take_part(c, link, finish=True):
    """Enrol from a platform link and answer every screen (or withdraw at the first):
    the participant and the end reply."""
    p, _h, end = helpers.take_part(c, platform=link, most=None if finish else 0, withdraw=True)
    return p, end


def test_fill_redirect_encodes_each_value_and_leaves_the_rest():
    url = "https://x.org/a?s={id}&c={code}&h={hitId}&keep=%7B"
    got = fill_redirect(url, {"id": "a&b c", "hitId": "H/1"}, "C=1")
    assert got == "https://x.org/a?s=a%26b%20c&c=C%3D1&h=H%2F1&keep=%7B"
    assert fill_redirect("https://x.org/?s={id}", {}, None) == "https://x.org/?s="


def test_sona_credit_url_gets_the_participants_survey_code(tmp_path):
    text = collect_toml(catalogue="colours", n_choices=2, max_queries=4) + SONA
    cfg = load_collect(write_design(tmp_path, "collect.toml", text))
    with in_process(create_app(cfg.catalogue, f"sqlite:///{tmp_path / 'c.db'}", collect=cfg)) as c:
        ends = {}
        for code, finish in (("51&2", True), ("77 3", False)):
            ends[code] = take_part(c, {"id": code}, finish)[1]
    done = urlsplit(ends["51&2"]["redirect"])
    assert parse_qs(done.query) == {
        "experiment_id": ["7"], "credit_token": ["t0k"], "survey_code": ["51&2"]
    }  # fmt: skip
    assert ends["51&2"]["redirect"].startswith(CREDIT + "&survey_code=51%262")
    assert ends["77 3"]["redirect"] == "https://example.org/left?id=77%203&code="


def test_a_prolific_redirect_may_name_the_code_by_its_placeholder(tmp_path):
    """``...?cc={code}`` is the code (not another one): loaded, and filled in at the end."""
    done = "https://app.prolific.com/submissions/complete?cc="
    text = collect_toml(catalogue="colours", n_choices=2, max_queries=4)
    text += 'platform = "prolific"\n[completion.finished]\ncode = "FIN-9"\n'
    text += f'redirect = "{done}{{code}}"\n'
    cfg = load_collect(write_design(tmp_path, "collect.toml", text))
    with in_process(create_app(cfg.catalogue, f"sqlite:///{tmp_path / 'p.db'}", collect=cfg)) as c:
        reply = take_part(c, {"PROLIFIC_PID": "5f1a2b3c4d5e6f7a8b9c0d1e"})[1]
    assert reply["redirect"] == done + "FIN-9" and reply["completion_code"] == "FIN-9"
    bad = text.replace("{code}", "OTHER")  # another code than the file's: still refused
    with pytest.raises(ValueError, match="cc=OTHER"):
        load_collect(write_design(tmp_path, "collect.toml", bad))


MTURK = """
platform = "mturk"

[completion.finished]
code = "C1"
redirect = "https://www.mturk.com/mturk/externalSubmit?assignmentId={assignmentId}&code={code}"
"""


def test_a_worker_back_with_a_new_assignment_is_redirected_with_it(tmp_path):
    """A worker back with a new assignment is a second session (refused) until the owner
    releases their participation; then a fresh one, redirected with the new assignment
    (MTurk submits to the assignment the worker holds now)."""
    text = collect_toml(catalogue="colours", n_choices=2, max_queries=4) + MTURK
    cfg = load_collect(write_design(tmp_path, "collect.toml", text))
    url = f"sqlite:///{tmp_path / 'm.db'}"
    with in_process(create_app(cfg.catalogue, url, collect=cfg)) as c:
        link = {"workerId": "A1B2C3D4E5F6G7", "assignmentId": "ASSIGN_OLD", "hitId": "H1"}
        first = c.post("/api/participants", json={"consent": True, "platform": link}).json()
        new = {**link, "assignmentId": "ASSIGN_NEW"}
        r = c.post("/api/participants", json={"consent": True, "platform": new})
        assert r.status_code == 409 and r.json()["refused"]
        assert Store(url).release_participant(first["id"], 1.0)
        p, reply = take_part(c, new)
        assert p["id"] != first["id"] and "resumed" not in p
    assert parse_qs(urlsplit(reply["redirect"]).query) == {
        "assignmentId": ["ASSIGN_NEW"], "code": ["C1"]
    }  # fmt: skip


@pytest.mark.parametrize(
    "platform, redirect, unknown",
    [
        ('platform = "sona"', "https://x.org/?s={workerId}", "{workerId}"),
        ("", "https://x.org/?s={id}", "{id}"),  # no platform: only {code}
    ],
)
def test_a_name_the_link_does_not_carry_is_refused(tmp_path, platform, redirect, unknown):
    text = collect_toml(catalogue="colours") + f'{platform}\n[completion.finished]\ncode = "A"\n'
    text += f'redirect = "{redirect}"\n'
    path = write_design(tmp_path, "collect.toml", text)
    with pytest.raises(ValueError, match="completion.finished.redirect") as err:
        load_collect(path)
    assert unknown in str(err.value) and str(err.value).startswith(str(path))

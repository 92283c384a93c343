"""A platform id cannot be taken over (issue 49, found items 3, 5 and 11's MTurk preview):
a participant resumes by their token, or by their platform id together with the platform's
value for that visit (Prolific's SESSION_ID, MTurk's assignmentId); the same id with another
visit's value is refused (409, nothing of theirs shown, no token revoked) and counted; the
owner releases a participation for a fresh start; ids that look the same are one."""

from __future__ import annotations

import json

import pytest

from serve.helpers import collect_toml, in_process, study_toml, write_design
from tripletsearch.serve import create_app
from tripletsearch.serve.collect import load_collect
from tripletsearch.serve.config import ServeConfig
from tripletsearch.serve.store import Store
from tripletsearch.serve.study import load_study

PID = "5f1a2b3c4d5e6f7a8b9c0d1e"
VICTIM = {"PROLIFIC_PID": PID, "STUDY_ID": "S1", "SESSION_ID": "V-1"}
WORKER = "A1B2C3D4E5F6G7"
SUBMIT = "https://www.mturk.com"
SUBMIT_URL = "https://www.mturk.com/mturk/externalSubmit?assignmentId={assignmentId}&c={code}"
CODES = f'\n[completion.finished]\ncode = "FIN-1"\nredirect = "{SUBMIT_URL}"\n'


def make(tmp_path, kind, platform, tables="", config=None):
    """A study or collect on ``platform``, in process: (client, store, experiment)."""
    keys, head = {"platform": platform}, ""
    if isinstance(platform, dict):  # a table of one's own: TOML's inline table
        table = ", ".join(f"{k} = {json.dumps(v)}" for k, v in platform.items())
        keys, head = {}, "platform = {" + table + "}\n"
    if kind == "study":
        text = head + study_toml(targets=2, max_queries=8, **keys)
        cfg = load_study(write_design(tmp_path, "study.toml", text + tables))
    else:
        text = head + collect_toml(catalogue="colours", n_choices=2, max_queries=4, **keys)
        cfg = load_collect(write_design(tmp_path, "collect.toml", text + tables))
    url = f"sqlite:///{tmp_path / 'i.sqlite'}"
    kw = {"study": cfg} if kind == "study" else {"collect": cfg}
    return create_app(cfg.catalogue, url, config=config, **kw), Store(url), cfg


def join(c, link, status=201):
    r = c.post("/api/participants", json={"consent": True, "platform": link})
    assert r.status_code == status, r.text
    return r.json()


def bearer(reply):
    return {"Authorization": "Bearer " + reply["token"]}


def post(c, pid, what, h, body=None, status=200):
    r = c.post(f"/api/participants/{pid}/{what}", json=body or {}, headers=h)
    assert r.status_code == status, r.text
    return r.json()


def to_end(c, p):
    """Answer participant ``p``'s screens (the first candidate) to their end."""
    reply = post(c, p["id"], "next", bearer(p))
    for _ in range(400):
        if reply["done"]:
            return reply
        body = {"screen": reply["screen"]["number"], "choice": 0}
        reply = post(c, p["id"], "answer", bearer(p), body)
    raise AssertionError("no end")


# ------------------------------------------------------------------ found item 3
@pytest.mark.parametrize("kind", ["study", "collect"])
def test_the_platform_id_alone_takes_nothing_over(tmp_path, kind):
    """The victim's PROLIFIC_PID with another SESSION_ID: refused in plain words, no token,
    nothing of theirs; the victim's token still works and their screen is as it was."""
    app, store, _ = make(tmp_path, kind, "prolific")
    with in_process(app) as c:
        victim = join(c, VICTIM)
        screen = post(c, victim["id"], "next", bearer(victim))
        attacker = {**VICTIM, "SESSION_ID": "EVIL-2"}
        refused = join(c, attacker, 409)
        assert refused["refused"] is True and "token" not in refused and "id" not in refused
        assert "another" in refused["error"] and "release" in refused["error"]
        said = json.dumps(refused)
        assert "FIN" not in said and victim["id"] not in said and "screen" not in refused
        again = post(c, victim["id"], "next", bearer(victim))  # not revoked
        assert again == screen
        assert store.participant(victim["id"]).refused == 1
        join(c, {**attacker, "STUDY_ID": "S2"}, 409)
        assert store.participant(victim["id"]).refused == 2
        # the victim's own visit (another browser, the same SESSION_ID) resumes them
        back = join(c, VICTIM)
        assert back["id"] == victim["id"] and back["resumed"]
        assert post(c, victim["id"], "next", bearer(back)) == screen
        assert len(list(store.iter_participants())) == 1


@pytest.mark.parametrize("kind", ["study", "collect"])
def test_a_finished_part_is_shown_only_to_its_own_visit_on_mturk(tmp_path, kind):
    """The victim finished; their workerId with the attacker's own assignmentId gets no
    code and no externalSubmit redirect (it did, with the attacker's assignment)."""
    app, store, _ = make(tmp_path, kind, "mturk", CODES)
    link = {"workerId": WORKER, "assignmentId": "ASG-V", "hitId": "H", "turkSubmitTo": SUBMIT}
    with in_process(app) as c:
        victim = join(c, link)
        end = to_end(c, victim)
        assert end["completion_code"] == "FIN-1" and "assignmentId=ASG-V&" in end["redirect"]
        stolen = join(c, {**link, "assignmentId": "ASG-ATTACKER"}, 409)
        assert "FIN-1" not in json.dumps(stolen) and "redirect" not in stolen
        assert "completion_code" not in stolen and "token" not in stolen
        row = store.participant(victim["id"])
        assert json.loads(row.platform_params)["assignmentId"] == "ASG-V"
        assert row.visit == "ASG-V"
        mine = join(c, link)  # the victim's own visit: their end again
        assert post(c, victim["id"], "next", bearer(mine))["completion_code"] == "FIN-1"


@pytest.mark.parametrize("kind", ["study", "collect"])
def test_an_mturk_preview_in_any_case_is_never_enrolled(tmp_path, kind):
    app, store, _ = make(tmp_path, kind, "mturk")
    with in_process(app) as c:
        for value in ("assignment_id_not_available", "Assignment_Id_Not_Available"):
            err = join(c, {"workerId": WORKER, "assignmentId": value}, 400)["error"]
            assert err.startswith("assignmentId: ASSIGNMENT_ID_NOT_AVAILABLE is a preview")
        assert not list(store.iter_participants())


# ------------------------------------------------------------------ found item 5
FILLERS = "\u034f\u115f\u1160\u3164\uffa0\u2800"


def variants(pid: str) -> list[str]:
    """50 spellings of ``pid`` that look the same (or differ only in case)."""
    out = [pid, pid.upper()]
    for i, f in enumerate(FILLERS):  # each invisible filler, at 3 places
        for at in (1, 12, len(pid)):
            out.append(pid[:at] + f + pid[at:])
        out.append(pid[: i + 2] + f + f + pid[i + 2 :])
    full = "".join(chr(ord(ch) + 0xFEE0) for ch in pid)  # full-width letters and digits
    out += [full, full.upper(), pid[:10] + full[10:], full[:5] + pid[5:].upper()]
    for mark in ("\u0301", "\u0308", "\u0327", "\u20dd"):  # combining marks
        for at in (3, 9, 17):
            out.append(pid[:at] + mark + pid[at:])
    out += [pid[:4] + "\u0301\u0308" + pid[4:], pid.upper()[:7] + "\u0303" + pid.upper()[7:]]
    out += [pid[:2] + FILLERS[0] + full[2:8] + "\u0301" + pid[8:].upper()]
    out += [pid[:6].upper() + pid[6:], pid[:6] + pid[6:].upper()]
    out += [pid[:k] + "\u0300" + full[k:] for k in range(5, 20)]  # marks and full width
    unique = list(dict.fromkeys(out))
    assert len(unique) >= 50
    return unique[:50]


@pytest.mark.parametrize("kind", ["study", "collect"])
def test_fifty_variants_of_one_id_enrol_one_participant(tmp_path, kind):
    app, store, _ = make(tmp_path, kind, "prolific")
    with in_process(app) as c:
        first = join(c, VICTIM)
        for v in variants(PID):
            again = join(c, {**VICTIM, "PROLIFIC_PID": v})
            assert again["id"] == first["id"], v
        (row,) = store.iter_participants()
        assert row.platform_key == row.platform_id == PID


# ------------------------------------------------------------------ release
def release(url, *args):
    """``tripletsearch participants release --database url *args``: (exit code, out, err)."""
    import contextlib
    import io

    from tripletsearch.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(["participants", "release", "--database", url, *args])
        except SystemExit as exc:  # argparse's errors
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


def served(tmp_path, kind, platform, tables=""):
    app, store, cfg = make(tmp_path, kind, platform, tables, ServeConfig(admin_token="owner"))
    return app, store, f"sqlite:///{tmp_path / 'i.sqlite'}"


def refused_on_dashboard(c, kind):
    path = "/api/admin/study" if kind == "study" else "/api/admin/collect"
    r = c.get(path, headers={"Authorization": "Bearer owner"})
    assert r.status_code == 200, r.text
    return r.json()["refused"]


@pytest.mark.parametrize("kind", ["study", "collect"])
def test_a_prolific_return_and_retake_after_release(tmp_path, kind):
    """A reload with the same SESSION_ID keeps the participation; a retake (a new one) is
    refused until the owner releases the first; then a fresh participant, the first kept
    (answers, marked released, not a duplicate) and its token opening nothing more."""
    from tripletsearch.serve.participation.roster import roster

    app, store, url = served(tmp_path, kind, "prolific")
    with in_process(app) as c:
        first = join(c, VICTIM)
        screen = post(c, first["id"], "next", bearer(first))
        body = {"screen": screen["screen"]["number"], "choice": 0}
        post(c, first["id"], "answer", bearer(first), body)
        reload = join(c, VICTIM)
        assert reload["id"] == first["id"] and reload["resumed"]
        retake = {**VICTIM, "SESSION_ID": "V-2"}
        join(c, retake, 409)
        assert refused_on_dashboard(c, kind) == 1
        code, out, err = release(url, "--platform-id", PID.upper())
        assert code == 0, err
        assert out.startswith(f"released {first['id']} (platform id {PID}")
        fresh = join(c, retake)
        assert fresh["id"] != first["id"] and "resumed" not in fresh
        assert post(c, fresh["id"], "next", bearer(fresh))["n_queries"] == 0
        gone = post(c, first["id"], "next", bearer(reload), status=409)
        assert gone["released"] and "released this participation" in gone["error"]
        join(c, VICTIM, 409)  # the released visit's value: the id is the new one's now
        old, new = store.participant(first["id"]), store.participant(fresh["id"])
        assert (old.released is not None, old.platform_key, old.visit) == (True, None, "V-1")
        assert (new.platform_key, new.visit, new.number) == (PID, "V-2", 1)
        assert len(store.participant_sessions(first["id"])) == 1  # nothing deleted
        rows = {r["participant"]: r for r in roster(store, new.study)}
        assert not rows[first["id"]]["duplicate"] and rows[first["id"]]["released"]
        assert not rows[fresh["id"]]["duplicate"] and not rows[fresh["id"]]["released"]
        assert refused_on_dashboard(c, kind) == 2


def test_an_mturk_worker_who_re_accepts_after_release(tmp_path):
    app, store, url = served(tmp_path, "collect", "mturk", CODES)
    link = {"workerId": WORKER, "assignmentId": "ASG-1", "hitId": "H", "turkSubmitTo": SUBMIT}
    with in_process(app) as c:
        first = join(c, link)
        post(c, first["id"], "next", bearer(first))
        again = {**link, "assignmentId": "ASG-2"}  # returned the HIT, accepted it again
        join(c, again, 409)
        assert release(url, "--participant", first["id"])[0] == 0
        fresh = join(c, again)
        end = to_end(c, fresh)
        assert "assignmentId=ASG-2&" in end["redirect"] and end["completion_code"] == "FIN-1"
        assert store.participant(first["id"]).code is None  # the released one: no code


def test_squatting_on_anothers_id_is_undone_by_release(tmp_path):
    """Someone enrolled first with another's id: the owner releases theirs; the id's owner
    then starts afresh, and the squatter neither goes on nor comes back."""
    app, store, url = served(tmp_path, "study", "prolific")
    with in_process(app) as c:
        squatter = join(c, {**VICTIM, "SESSION_ID": "SQUAT"})
        post(c, squatter["id"], "next", bearer(squatter))
        join(c, VICTIM, 409)  # the id's owner, refused
        assert release(url, "--platform-id", PID)[0] == 0
        owner = join(c, VICTIM)
        assert owner["id"] != squatter["id"]
        post(c, squatter["id"], "next", bearer(squatter), status=409)
        join(c, {**VICTIM, "SESSION_ID": "SQUAT"}, 409)
        assert post(c, owner["id"], "next", bearer(owner))["done"] is False


def test_release_says_what_is_wrong(tmp_path):
    app, store, url = served(tmp_path, "study", "prolific")
    with in_process(app) as c:
        p = join(c, VICTIM)
    code, _, err = release(url, "--platform-id", "0" * 24)
    assert code == 2 and "--platform-id: no participant holds" in err
    code, _, err = release(url, "--participant", "P-NOBODY")
    assert code == 2 and "--participant: no participant 'P-NOBODY'" in err
    code, _, err = release(url, "--participant", p["id"], "--experiment", "nope")
    assert code == 2 and "--experiment: no experiment 'nope'" in err
    assert release(url, "--participant", p["id"])[0] == 0
    code, _, err = release(url, "--participant", p["id"])
    assert code == 2 and "released already" in err
    code, _, err = release(url, "--platform-id", PID)
    assert code == 2 and "released ones hold no id: give --participant" in err
    code, _, err = release(url)
    assert code == 2 and "one of the arguments --platform-id --participant is required" in err


def test_sona_resumes_by_its_id_and_a_custom_platform_by_its_visit(tmp_path):
    """SONA's id is a per-person survey code: the id itself is the visit. A platform of
    one's own names its visit parameter; without one, its id is the visit."""
    from tripletsearch.serve.participation.platforms import PlatformError, from_file

    app, store, _ = make(tmp_path / "sona", "collect", "sona")
    with in_process(app) as c:
        first = join(c, {"id": "51234"})
        assert join(c, {"id": "51234"})["id"] == first["id"]
    assert store.participant(first["id"]).visit == "51234"
    own = {"id": "pid", "visit": "sid", "params": ["pid", "sid"]}
    assert from_file({"platform": own}).visit == "sid"
    assert from_file({"platform": {"id": "pid", "params": ["pid"]}}).visit is None
    with pytest.raises(PlatformError, match="platform.visit: one of platform.params"):
        from_file({"platform": {**own, "visit": "other"}})
    app, store, _ = make(tmp_path / "own", "study", own)
    with in_process(app) as c:
        assert c.get("/api/experiment").json()["platform"]["visit"] == "sid"
        mine = join(c, {"pid": "abc", "sid": "1"})
        assert join(c, {"pid": "abc", "sid": "1"})["id"] == mine["id"]
        assert join(c, {"pid": "abc", "sid": "2"}, 409)["refused"]
        assert join(c, {"pid": "ABC", "sid": "2"})["id"] != mine["id"]  # its case kept

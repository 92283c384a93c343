"""Platform ids from a participant's link (issue 42, items 1 and 2): a study or collect
file names its platform, ``POST /api/participants`` takes the link's parameters, keeps the
file's and checks each; one participant per platform id (the same id resumes them with a
new token, the previous one refused), also under 20 concurrent enrolments, on SQLite and
PostgreSQL."""

from __future__ import annotations

import json
import os
import threading

import httpx
import pytest

from serve.helpers import in_process, postgres_bindir, postgres_cluster, thread_server
from tripletsearch.serve import create_app
from tripletsearch.serve.collect import load_collect
from tripletsearch.serve.participation.platforms import (
    PLATFORMS,
    PlatformError,
    check_text,
    from_file,
)
from tripletsearch.serve.store import Store
from tripletsearch.serve.study import load_study

PROLIFIC = {"PROLIFIC_PID": "5f1a2b3c4d5e6f7a8b9c0d1e", "STUDY_ID": "S1", "SESSION_ID": "X9"}


def load(kind, folder, study_file, collect_file, extra=""):
    """The experiment of a ``kind`` file in ``folder`` with ``extra`` TOML lines."""
    write = study_file if kind == "study" else collect_file
    keys = dict(targets=2, max_queries=40) if kind == "study" else dict(max_queries=6)
    path = write(folder, **keys)
    text = path.read_text()
    path.write_text(extra + "\n" + text)  # top-level keys before any table
    return (load_study if kind == "study" else load_collect)(path)


def app_of(cfg, url):
    kw = {"study": cfg} if cfg.kind == "study" else {"collect": cfg}
    return create_app(cfg.catalogue, url, **kw)


@pytest.fixture(params=["study", "collect"])
def prolific(request, tmp_path, study_file, collect_file):
    """A study or collect on Prolific (the id required), in process: (client, store)."""
    extra = 'platform = "prolific"\nrequire_platform_id = true\n'
    cfg = load(request.param, tmp_path, study_file, collect_file, extra)
    url = f"sqlite:///{tmp_path / 'p.sqlite'}"
    with in_process(app_of(cfg, url)) as c:
        yield c, Store(url)


def join(c, status=201, **body):
    r = c.post("/api/participants", json={"consent": True, **body})
    assert r.status_code == status, r.text
    return r.json()


def bearer(reply):
    return {"Authorization": "Bearer " + reply["token"]}


# ------------------------------------------------------------------ the files' keys
def test_the_named_platforms_and_their_parameters():
    assert {k: (p.id, p.params) for k, p in PLATFORMS.items()} == {
        "prolific": ("PROLIFIC_PID", ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID")),
        "mturk": ("workerId", ("workerId", "assignmentId", "hitId", "turkSubmitTo")),
        "cloudresearch": ("participantId", ("participantId", "assignmentId", "projectId")),
        "sona": ("id", ("id",)),
    }
    assert from_file({}) is None
    mturk = from_file({"platform": "mturk", "require_platform_id": True})
    assert mturk.required and mturk.preview == ("assignmentId", "ASSIGNMENT_ID_NOT_AVAILABLE")
    own = from_file({"platform": {"id": "pid", "params": ["pid", "src"]}})
    assert (own.name, own.id, own.params, own.required) == ("custom", "pid", ("pid", "src"), False)


@pytest.mark.parametrize(
    "cfg, said",
    [
        ({"platform": "qualtrics"}, "platform: one of"),
        ({"platform": 3}, "platform: one of"),
        ({"platform": {"id": "x", "params": ["pid"]}}, "platform.id: one of"),
        ({"platform": {"id": "pid", "params": []}}, "platform.params"),
        ({"platform": {"id": "p id", "params": ["p id"]}}, "not a parameter name"),
        ({"platform": {"id": "a", "params": ["a", "a"]}}, "given twice"),
        ({"platform": {"id": "a", "params": ["a"], "x": 1}}, "unknown keys"),
        ({"platform": "sona", "require_platform_id": "yes"}, "require_platform_id: true"),
        ({"require_platform_id": True}, "require_platform_id: name the platform"),
    ],
)
def test_a_bad_platform_key_is_refused_naming_it(cfg, said):
    with pytest.raises(PlatformError, match=said):
        from_file(cfg)


@pytest.mark.parametrize("kind", ["study", "collect"])
def test_a_file_naming_a_bad_platform_fails_naming_the_file(
    kind, tmp_path, study_file, collect_file
):
    with pytest.raises(ValueError) as err:
        load(kind, tmp_path, study_file, collect_file, 'platform = "qualtrics"')
    assert f"{kind}.toml" in str(err.value) and "platform: one of" in str(err.value)


@pytest.mark.parametrize(
    "value, said",
    [
        ("", "1 to 128"),
        ("x" * 129, "1 to 128"),
        ("a\x00b", "printable"),
        ("a\nb", "printable"),
        ("a\u0301\u0301\u0301", "combining"),
        ("\u0301a", "combining"),
        (12, "1 to 128"),
    ],
)
def test_a_value_is_checked_as_text(value, said):
    with pytest.raises(PlatformError, match=said):
        check_text("PROLIFIC_PID", value)
    assert check_text("x", "x" * 128) == "x" * 128
    assert check_text("x", "e\u0301\u0301") == "\u00e9\u0301"  # kept in NFC form


@pytest.mark.parametrize("value", ["abc ", " abc", "abc\t", "\u3000abc", "a b "])
def test_space_at_an_ends_is_refused_naming_the_parameter(value):
    with pytest.raises(PlatformError, match="PROLIFIC_PID: no space at its start or end"):
        check_text("PROLIFIC_PID", value)


@pytest.fixture(params=["study", "collect"])
def loose(request, tmp_path, study_file, collect_file):
    """As ``prolific`` with ``strict_ids = false`` (any id text): (client, store)."""
    extra = 'platform = "prolific"\nrequire_platform_id = true\nstrict_ids = false\n'
    cfg = load(request.param, tmp_path, study_file, collect_file, extra)
    url = f"sqlite:///{tmp_path / 'p.sqlite'}"
    with in_process(app_of(cfg, url)) as c:
        yield c, Store(url)


def test_one_id_typed_two_ways_is_one_participant(loose):
    """An id's compared form: NFKC, combining marks removed (``jose\u0301``, ``jos\u00e9``
    and ``jose`` are one), a Prolific id's case folded (any id, with ``strict_ids =
    false``); leading or trailing space refused."""
    c, store = loose
    visit = {"SESSION_ID": "S-1"}
    composed = join(c, platform={"PROLIFIC_PID": "jos\u00e9", **visit})
    again = join(c, platform={"PROLIFIC_PID": "jose\u0301", **visit})
    assert again["id"] == composed["id"] and again["resumed"]
    assert store.participant(composed["id"]).platform_key == "jose"
    for spaced in ("abc ", " abc"):
        err = join(c, 400, platform={"PROLIFIC_PID": spaced})["error"]
        assert err == "PROLIFIC_PID: no space at its start or end"
        assert join(c, 400, platform_id=spaced)["error"].startswith("platform_id: no space")
    lower = join(c, platform={"PROLIFIC_PID": "abc", **visit})
    assert join(c, platform={"PROLIFIC_PID": "ABC", **visit})["id"] == lower["id"]
    hexid = PROLIFIC["PROLIFIC_PID"]
    first = join(c, platform={"PROLIFIC_PID": hexid, **visit})
    upper = join(c, platform={"PROLIFIC_PID": hexid.upper(), **visit})
    assert upper["id"] == first["id"] and upper["resumed"]
    # the old platform_id beside the link: the same id however typed
    both = join(c, platform={"PROLIFIC_PID": hexid, **visit}, platform_id=hexid.upper())
    assert both["id"] == first["id"]
    assert join(c, platform={"PROLIFIC_PID": "jose\u0301", **visit}, platform_id="jos\u00e9")[
        "resumed"
    ]
    assert len(list(store.iter_participants())) == 3


def test_a_known_platforms_id_is_checked_unless_the_file_says_not(prolific, loose):
    c, store = prolific
    for bad in ("abc", "5f1a2b3c4d5e6f7a8b9c0d1", "5f1a2b3c4d5e6f7a8b9c0d1g"):
        err = join(c, 400, platform={"PROLIFIC_PID": bad})["error"]
        assert err.startswith("PROLIFIC_PID: not a Prolific id (24 hexadecimal digits)")
    assert not list(store.iter_participants())
    assert join(loose[0], platform={"PROLIFIC_PID": "abc"})["id"]
    mturk = PLATFORMS["mturk"]
    assert mturk.read({"workerId": "a1b2c3d4e5f6g"})[0] == "A1B2C3D4E5F6G"  # case folded
    for bad in ("B1B2C3D4E5F6G", "A1B2C3D4E5", "A" + "1" * 21, "A1B2C3D4E5F-G"):
        with pytest.raises(PlatformError, match="workerId: not an MTurk id"):
            mturk.read({"workerId": bad})
    with pytest.raises(PlatformError, match="strict_ids: true or false"):
        from_file({"platform": "mturk", "strict_ids": "no"})
    assert from_file({"platform": "mturk", "strict_ids": False}).read({"workerId": "w1"})[0] == "W1"


# ------------------------------------------------------------------ the API
def test_the_experiment_says_its_platform(prolific):
    c, _ = prolific
    assert c.get("/api/experiment").json()["platform"] == {
        "name": "prolific",
        "id": "PROLIFIC_PID",
        "params": ["PROLIFIC_PID", "STUDY_ID", "SESSION_ID"],
        "required": True,
        "preview": None,
        "visit": "SESSION_ID",
    }


def test_the_link_parameters_are_stored_unknown_ones_ignored(prolific):
    c, store = prolific
    p = join(c, platform={**PROLIFIC, "utm_source": "mail"})
    assert set(p) == {"id", "token"}
    row = store.participant(p["id"])
    assert row.platform_id == row.platform_key == PROLIFIC["PROLIFIC_PID"]
    assert json.loads(row.platform_params) == PROLIFIC  # all of them, nothing else


@pytest.mark.parametrize(
    "link, said",
    [
        ({"STUDY_ID": "S1"}, "PROLIFIC_PID: this experiment needs your prolific id"),
        ({}, "PROLIFIC_PID"),
        ({"PROLIFIC_PID": ""}, "PROLIFIC_PID: a string of 1 to 128"),
        ({"PROLIFIC_PID": "x" * 129}, "PROLIFIC_PID: a string of 1 to 128"),
        ({"PROLIFIC_PID": "ab\x07"}, "PROLIFIC_PID: printable"),
        ({"PROLIFIC_PID": "a\u0300\u0301\u0302"}, "PROLIFIC_PID: at most 2 combining"),
        ({"PROLIFIC_PID": "ok", "STUDY_ID": "s\u200b"}, "STUDY_ID: printable"),
        ({"PROLIFIC_PID": 5}, "PROLIFIC_PID: a string"),
        ([1, 2], "platform: an object"),
    ],
)
def test_a_missing_or_bad_id_is_refused_and_nobody_enrolled(prolific, link, said):
    c, store = prolific
    err = join(c, 400, platform=link)["error"]
    assert said in err
    assert not list(store.iter_participants())


def test_the_old_platform_id_still_enrols(prolific):
    c, store = prolific
    hexid, other = PROLIFIC["PROLIFIC_PID"], "0" * 24
    p = join(c, platform_id=hexid, platform={"SESSION_ID": "S-1"})
    assert store.participant(p["id"]).platform_key == hexid
    assert join(c, 400, platform_id=hexid, platform={"PROLIFIC_PID": other})["error"]
    link = {"PROLIFIC_PID": hexid, "SESSION_ID": "S-1"}
    assert join(c, platform_id=hexid.upper(), platform=link)["id"] == p["id"]
    assert join(c, 409, platform_id=hexid)["refused"]  # no visit's value: a second session


@pytest.mark.parametrize("kind", ["study", "collect"])
def test_an_mturk_preview_is_never_enrolled(kind, tmp_path, study_file, collect_file):
    cfg = load(kind, tmp_path, study_file, collect_file, 'platform = "mturk"')
    url = f"sqlite:///{tmp_path / 'm.sqlite'}"
    with in_process(app_of(cfg, url)) as c:
        facts = c.get("/api/experiment").json()["platform"]
        assert facts["preview"] == {"param": "assignmentId", "value": "ASSIGNMENT_ID_NOT_AVAILABLE"}
        err = join(c, 400, platform={"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE"})["error"]
        assert err.startswith("assignmentId: ASSIGNMENT_ID_NOT_AVAILABLE is a preview")
        assert not list(Store(url).iter_participants())
        link = {"workerId": "A1B2C3D4E5F6G7", "assignmentId": "A1", "hitId": "H1"}
        p = join(c, platform=link)
        assert json.loads(Store(url).participant(p["id"]).platform_params) == link
        assert join(c)["id"] != p["id"]  # not required: no id, a participant as before


@pytest.mark.parametrize("kind", ["study", "collect"])
def test_without_a_platform_the_link_is_not_read(kind, tmp_path, study_file, collect_file):
    cfg = load(kind, tmp_path, study_file, collect_file)
    url = f"sqlite:///{tmp_path / 'n.sqlite'}"
    with in_process(app_of(cfg, url)) as c:
        assert "platform" not in c.get("/api/experiment").json()
        p = join(c, platform={"PROLIFIC_PID": "abc"})
        row = Store(url).participant(p["id"])
        assert row.platform_id is None and row.platform_params is None


# ------------------------------------------------------------------ one participation per id
def test_the_same_id_resumes_the_same_participant_with_a_new_token(prolific):
    c, store = prolific
    first = join(c, platform=PROLIFIC)
    old = bearer(first)
    screen = c.post(f"/api/participants/{first['id']}/next", json={}, headers=old).json()
    row = store.participant(first["id"])
    back = {"PROLIFIC_PID": PROLIFIC["PROLIFIC_PID"], "SESSION_ID": "X9"}  # another browser
    again = join(c, platform=back)
    assert again["id"] == first["id"] and again["resumed"] is True
    assert again["token"] != first["token"]
    after = store.participant(first["id"])
    assert (after.number, after.plan, after.arm, after.created) == (
        row.number, row.plan, row.arm, row.created,
    )  # fmt: skip
    # the new link's parameters recorded over the kept ones (the visit's the same)
    assert json.loads(after.platform_params) == PROLIFIC and after.visit == "X9"
    r = c.post(f"/api/participants/{first['id']}/next", json={}, headers=old)
    assert r.status_code == 401
    same = c.post(f"/api/participants/{first['id']}/next", json={}, headers=bearer(again))
    assert same.status_code == 200 and same.json() == screen  # the same screen, same slot
    assert len(list(store.iter_participants())) == 1
    other = join(c, platform={"PROLIFIC_PID": "0" * 24, "SESSION_ID": "X9"})
    assert other["id"] != first["id"] and "resumed" not in other


def test_a_resume_racing_the_first_session_start_leaves_only_the_new_token(prolific, monkeypatch):
    """Tab A starts the participant's first session; meanwhile another browser resumes the
    id: the session created holds the resumed browser's token, the old one is refused."""
    c, store = prolific
    first = join(c, platform=PROLIFIC)
    create = Store.create_session
    entered, resumed = threading.Event(), threading.Event()

    def slow_create(self, **kw):  # the session prepared, not yet written
        entered.set()
        resumed.wait(10)
        return create(self, **kw)

    # no seam: nothing public holds a request between preparing and writing its session
    monkeypatch.setattr(Store, "create_session", slow_create)
    out = {}
    url = f"/api/participants/{first['id']}/next"
    tab = threading.Thread(target=lambda: out.update(a=c.post(url, json={}, headers=bearer(first))))
    tab.start()
    assert entered.wait(10)
    monkeypatch.setattr(Store, "create_session", create)
    again = join(c, platform=PROLIFIC)
    assert again["resumed"]
    resumed.set()
    tab.join(30)
    assert out["a"].status_code == 401  # finishing after the resume: the old token refused
    assert c.post(url, json={}, headers=bearer(again)).status_code == 200  # the new browser
    assert c.post(url, json={}, headers=bearer(first)).status_code == 401


def test_a_withdrawn_id_is_resumed_to_its_end(prolific):
    c, store = prolific
    p = join(c, platform=PROLIFIC)
    gone = c.post(f"/api/participants/{p['id']}/withdraw", json={}, headers=bearer(p)).json()
    again = join(c, platform=PROLIFIC)
    assert again["id"] == p["id"] and again["resumed"]
    end = c.post(f"/api/participants/{p['id']}/next", json={}, headers=bearer(again)).json()
    assert end["done"] and end["outcome"] == "withdrawn" == gone["outcome"]


def race(base: str, n: int = 20) -> list[dict]:
    """``n`` enrolments of one id at once on the server at ``base``: their replies."""
    replies: list = [None] * n
    go = threading.Barrier(n)

    def one(i):
        with httpx.Client(base_url=base, timeout=60) as c:
            go.wait()
            r = c.post("/api/participants", json={"consent": True, "platform": PROLIFIC})
            replies[i] = (r.status_code, r.json())

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return replies


def one_participant_of_a_race(cfg, url):
    with thread_server(app_of(cfg, url)) as base:
        replies = race(base)
        assert all(s == 201 for s, _ in replies), replies
        ids = {r["id"] for _, r in replies}
        assert len(ids) == 1
        (pid,) = ids
        assert sum("resumed" not in r for _, r in replies) == 1  # one enrolled, 19 resumed
        with httpx.Client(base_url=base, timeout=60) as c:
            valid = [
                c.post(f"/api/participants/{pid}/next", json={}, headers=bearer(r)).status_code
                for _, r in replies
            ]
    assert sorted(valid) == [200] + [401] * 19
    rows = list(Store(url).iter_participants())
    assert [r.id for r in rows] == [pid] and rows[0].platform_key == PROLIFIC["PROLIFIC_PID"]


@pytest.mark.parametrize("kind", ["study", "collect"])
def test_twenty_concurrent_enrolments_of_one_id_make_one_participant(
    kind, tmp_path, study_file, collect_file
):
    cfg = load(kind, tmp_path, study_file, collect_file, 'platform = "prolific"')
    one_participant_of_a_race(cfg, f"sqlite:///{tmp_path / 'r.sqlite'}")


@pytest.mark.once
@pytest.mark.skipif(
    postgres_bindir() is None and not os.environ.get("TRIPLETSEARCH_REQUIRE_POSTGRES"),
    reason="PostgreSQL is not installed (Debian: apt-get install postgresql)",
)
def test_twenty_concurrent_enrolments_of_one_id_on_postgresql(tmp_path, study_file, collect_file):
    cfg = load("study", tmp_path, study_file, collect_file, 'platform = "prolific"')
    with postgres_cluster() as url:
        one_participant_of_a_race(cfg, url)

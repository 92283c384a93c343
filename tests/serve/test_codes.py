"""``tripletsearch codes``: a platform's submitted codes (CSV files made here) checked
against the participants' records: exit 0 when all match, 1 when one does not, 2 on bad
input; flagged participants, non-submitters and unknown ids said."""

from __future__ import annotations

import csv

import pytest
import sqlalchemy as sa

from serve.helpers import answer_all, claiming, collect_toml, in_process, write_design
from tripletsearch.cli import main
from tripletsearch.serve import create_app
from tripletsearch.serve.collect import load_collect
from tripletsearch.serve.participation.codes import PLATFORM_COLUMNS, check_codes
from tripletsearch.serve.store.tables import participants as t

TABLES = '\n[completion.finished]\ncode = "FIN-1"\n[completion.withdrawn]\ncode = "WD-2"\n'


@pytest.fixture
def db(tmp_path):
    """A collect of 4 participants: pp-a finished, pp-b finished fast (flagged), pp-c
    withdrew, pp-d started; their platform ids set in the database."""
    text = collect_toml(name="alike", catalogue="colours", n_choices=2, max_queries=6)
    cfg = load_collect(write_design(tmp_path, "collect.toml", text + TABLES))
    url = f"sqlite:///{tmp_path / 'c.sqlite'}"
    ids = {}
    with in_process(create_app(cfg.catalogue, url, collect=cfg)) as c:
        for name, ms in (("pp-a", 900), ("pp-b", 20), ("pp-c", None), ("pp-d", None)):
            p = c.post("/api/participants", json={"consent": True}).json()
            h = {"Authorization": "Bearer " + p["token"]}
            ids[name] = p["id"]
            if ms is not None:
                answer_all(c, p["id"], h, body=claiming(ms))
            elif name == "pp-c":
                c.post(f"/api/participants/{p['id']}/withdraw", json={}, headers=h)
            else:
                c.post(f"/api/participants/{p['id']}/next", json={}, headers=h)
    with sa.create_engine(url).begin() as conn:
        for name, pid in ids.items():
            conn.execute(sa.update(t).where(t.c.id == pid).values(platform_id=name))
    return url


def submissions(path, rows, columns=PLATFORM_COLUMNS["prolific"]):
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["Submission id", *columns, "Status"])
        for pid, code in rows:
            w.writerow(["s-" + pid, pid, code, "AWAITING REVIEW"])
    return str(path)


def codes(capsys, *args):
    rc = main(["codes", *args])
    out, err = capsys.readouterr()
    return rc, out, err


def test_every_code_matches(db, tmp_path, capsys):
    f = submissions(tmp_path / "p.csv", [("pp-a", "FIN-1"), ("pp-b", "FIN-1"), ("pp-c", "WD-2")])
    rc, out, err = codes(capsys, "--database", db, "--check", f, "--fast-server-ms", "0")
    assert rc == 0, err
    lines = out.splitlines()
    assert not any(x.startswith("MISMATCH") for x in lines)
    # the flagged one: named with why, their code matching all the same
    (flag,) = [x for x in lines if x.startswith("FLAGGED")]
    assert flag.startswith("FLAGGED pp-b") and "page_time" in flag and "20 ms" in flag
    assert [x for x in lines if x.startswith("NOT SUBMITTED")] == [
        "NOT SUBMITTED pp-d (started, code none)"
    ]
    assert lines[-1] == (
        "3 submitted: 3 match, 0 do not; 1 flagged; 1 took part without submitting; "
        "0 never took part"
    )


def test_a_code_that_does_not_match_and_an_unknown_id(db, tmp_path, capsys):
    rows = [("pp-a", "WD-2"), ("pp-c", "FIN-1"), ("pp-x", "FIN-1"), ("pp-b", "FIN-1")]
    f = submissions(tmp_path / "p.csv", rows)
    rc, out, _ = codes(capsys, "--database", db, "--check", f, "--fast-server-ms", "0")
    assert rc == 1
    lines = out.splitlines()
    assert "MISMATCH pp-a: submitted WD-2, recorded FIN-1 (finished)" in lines
    assert "MISMATCH pp-c: submitted FIN-1, recorded WD-2 (withdrawn)" in lines
    assert "MISMATCH pp-x: submitted FIN-1, no participant with this id" in lines
    assert lines[-1].startswith("4 submitted: 1 match, 3 do not;")
    assert lines[-1].endswith("1 took part without submitting; 1 never took part")
    # one bad code is enough
    f = submissions(tmp_path / "q.csv", [("pp-a", "FIN-1"), ("pp-d", "FIN-1")])
    rc, out, _ = codes(capsys, "--database", db, "--check", f)
    assert (
        rc == 1 and "MISMATCH pp-d: submitted FIN-1, recorded none (no code shown) (started)" in out
    )


def test_mturk_columns_and_columns_named_by_options(db, tmp_path, capsys):
    f = submissions(tmp_path / "m.csv", [("pp-a", "FIN-1")], PLATFORM_COLUMNS["mturk"])
    rc, out, _ = codes(capsys, "--database", db, "--check", f, "--platform", "mturk")
    assert rc == 0 and out.splitlines()[-1].startswith("1 submitted: 1 match, 0 do not")
    f = submissions(tmp_path / "o.csv", [("pp-a", "WD-2")], ("who", "what"))
    args = ["--database", db, "--check", f, "--id-column", "who", "--code-column", "what"]
    assert codes(capsys, *args)[0] == 1


def test_bad_input_exits_2_with_one_line(db, tmp_path, capsys):
    f = submissions(tmp_path / "m.csv", [("pp-a", "FIN-1")], PLATFORM_COLUMNS["mturk"])
    rc, out, err = codes(capsys, "--database", db, "--check", f)  # prolific's columns
    assert rc == 2 and err.count("\n") == 1
    assert "--id-column" in err and "'Participant id'" in err and "'WorkerId'" in err
    rc, _, err = codes(capsys, "--database", db, "--check", str(tmp_path / "none.csv"))
    assert rc == 2 and "no file" in err and err.count("\n") == 1
    f = submissions(tmp_path / "p.csv", [("pp-a", "FIN-1")])
    rc, _, err = codes(capsys, "--database", db, "--check", f, "--experiment", "nope")
    assert rc == 2 and "--experiment" in err and "'alike'" in err and err.count("\n") == 1
    rc, _, _ = codes(capsys, "--database", db, "--check", f, "--experiment", "alike")
    assert rc == 0


def test_a_malformed_csv_exits_2_naming_check(db, tmp_path, capsys):
    """A field over the csv module's limit, a file that is not UTF-8: one line naming
    ``--check``, exit 2 (never a traceback)."""
    big = tmp_path / "big.csv"
    big.write_text('Participant id,Completion code\npp-a,"' + "A" * 200_000 + '"\n')
    binary = tmp_path / "binary.csv"
    binary.write_bytes(b"Participant id,Completion code\npp-a,\xff\xfe\x00\x81\n")
    limit = csv.field_size_limit(131072)  # the csv module's default (frictionless raises it)
    try:
        for f in (big, binary):
            rc, out, err = codes(capsys, "--database", db, "--check", str(f))
            assert rc == 2 and err.count("\n") == 1, err
            assert err.startswith("error: --check: ") and f.name in err
    finally:
        csv.field_size_limit(limit)


def test_check_codes_counts_a_kept_duplicate_by_any_of_its_codes():
    def row(pid, platform, code):
        return {"participant": pid, "platform_id": platform, "code": code, "flagged": False,
                "outcome": "finished"}  # fmt: skip

    people = [row("P-1", "x", "A"), row("P-2", "x", "B"), row("P-3", None, "A")]
    found = check_codes(people, [("x", "B")])
    assert found["matched"] == ["x"] and not found["mismatched"]
    assert [p["participant"] for p in found["unmatchable"]] == ["P-3"]


def test_ids_are_compared_in_the_form_the_server_keeps():
    """One compared form on both sides (NFKC, combining marks and fillers removed); a
    Prolific id in any case; another platform's ids by case."""

    def row(pid, code):
        return {"participant": "P-" + pid, "platform_id": pid, "code": code,
                "outcome": "finished", "flagged": False}  # fmt: skip

    hexid = "5f1a2b3c4d5e6f7a8b9c0d1e"
    people = [row("jos\u00e9", "A"), row(hexid, "B"), row("abc", "C")]
    submitted = [("jose\u0301", "A"), (hexid.upper() + "\u2800", "B"), ("ABC", "C")]
    found = check_codes(people, submitted, "prolific")
    assert found["matched"] == ["jose\u0301", hexid.upper() + "\u2800", "ABC"]
    found = check_codes(people, submitted, "sona")
    assert [m["platform_id"] for m in found["unknown"]] == [hexid.upper() + "\u2800", "ABC"]
    assert [p["platform_id"] for p in found["not_submitted"]] == [hexid, "abc"]


def with_status(path, rows, columns=(*PLATFORM_COLUMNS["prolific"], "Status")):
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["Submission id", *columns])
        w.writerows(["s-" + r[0], *r] for r in rows)
    return str(path)


def test_prolific_rows_that_are_no_submission_are_counted_by_status(db, tmp_path, capsys):
    """Returned, timed-out, rejected and screened-out rows (their code empty) are no
    submission, an ACTIVE one not yet one: counted by status, never a MISMATCH."""
    rows = [
        ("pp-a", "FIN-1", "AWAITING REVIEW"),
        ("pp-b", "FIN-1", "APPROVED"),
        ("pp-c", "", "RETURNED"),
        ("pp-d", "", "TIMED-OUT"),
        ("pp-x", "", "SCREENED OUT"),
        ("pp-y", "", "Rejected"),
        ("pp-z", "", "ACTIVE"),
    ]
    f = with_status(tmp_path / "p.csv", rows)
    rc, out, err = codes(capsys, "--database", db, "--check", f, "--fast-server-ms", "0")
    assert rc == 0, out + err
    lines = out.splitlines()
    assert not any(x.startswith("MISMATCH") for x in lines)
    assert "NOT SUBMITTED pp-c (withdrawn, code WD-2, RETURNED on the platform)" in lines
    assert "NOT SUBMITTED pp-d (started, code none, TIMED-OUT on the platform)" in lines
    assert lines[-1] == (
        "2 submitted: 2 match, 0 do not; 1 flagged; 2 took part without submitting; "
        "0 never took part; not submissions: 1 REJECTED, 1 RETURNED, 1 SCREENED OUT, "
        "1 TIMED-OUT, 1 ACTIVE (not yet submitted)"
    )


def test_mturk_rejected_assignments_are_no_submission(db, tmp_path, capsys):
    columns = (*PLATFORM_COLUMNS["mturk"], "AssignmentStatus")
    rows = [("pp-a", "FIN-1", "Submitted"), ("pp-c", "FIN-1", "Rejected")]
    f = with_status(tmp_path / "m.csv", rows, columns)
    rc, out, _ = codes(capsys, "--database", db, "--check", f, "--platform", "mturk")
    assert rc == 0
    assert out.splitlines()[-1].startswith("1 submitted: 1 match, 0 do not;")
    assert out.splitlines()[-1].endswith("; not submissions: 1 REJECTED")


def test_one_id_submitted_twice_is_said_once_as_such(db, tmp_path, capsys):
    rows = [("pp-a", "FIN-1", "APPROVED"), ("pp-a", "FIN-1", "AWAITING REVIEW")]
    f = with_status(tmp_path / "p.csv", [*rows, ("pp-c", "WD-2", "APPROVED")])
    rc, out, _ = codes(capsys, "--database", db, "--check", f, "--fast-server-ms", "0")
    assert rc == 1  # a platform pays each submission: the owner looks
    lines = out.splitlines()
    assert "TWICE pp-a: submitted 2 times (FIN-1, FIN-1)" in lines
    assert lines[-1].startswith("2 submitted: 2 match, 0 do not;")
    assert lines[-1].endswith("; 1 submitted more than once")


def test_a_status_column_named_but_missing_is_bad_input_and_a_default_one_is_said(
    db, tmp_path, capsys
):
    f = submissions(tmp_path / "p.csv", [("pp-a", "FIN-1")])
    rc, _, err = codes(capsys, "--database", db, "--check", f, "--status-column", "State")
    assert rc == 2 and "--status-column" in err and "'State'" in err
    f = submissions(tmp_path / "m.csv", [("pp-a", "FIN-1")], PLATFORM_COLUMNS["mturk"])
    rc, out, _ = codes(capsys, "--database", db, "--check", f, "--platform", "mturk")
    assert rc == 0
    assert out.splitlines()[-1].endswith(
        "; no 'AssignmentStatus' column: every row read as a submission"
    )

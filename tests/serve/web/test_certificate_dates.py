"""A certificate every browser would refuse is refused at the start: one that has expired or
is not valid yet is one line with its dates and exit 2 before anything listens (and before
the database); one that expires within 14 days is said at the start, and the server keeps
its dates for the dashboards (tests/serve/web/test_health.py). The certificates are the
test's own (``trustme``), with chosen dates."""

from __future__ import annotations

import datetime as dt
import re
import signal

import pytest

from serve.helpers import parts_of
from tripletsearch.cli import main
from tripletsearch.serve.service.processes import SERVER_ID, SERVER_PID
from tripletsearch.serve.web.tls import EXPIRES_SOON_DAYS, certificate_dates, expiry_notice

trustme = pytest.importorskip("trustme")

NOW = dt.datetime.now(dt.timezone.utc)


def issued(tmp_path, name, start, end):
    """A server certificate valid from ``start`` to ``end`` (and its key): their paths."""
    leaf = trustme.CA().issue_cert("127.0.0.1", not_before=start, not_after=end)
    cert, key = tmp_path / f"{name}-cert.pem", tmp_path / f"{name}-key.pem"
    for i, pem in enumerate(leaf.cert_chain_pems):
        pem.write_to_path(str(cert), append=i > 0)
    leaf.private_key_pem.write_to_path(str(key))
    return cert, key


def serve(tmp_path, cert, key):
    db = tmp_path / f"{cert.stem}.sqlite"
    argv = ["serve", "--demo", "colours", "--database", f"sqlite:///{db}", "--port", "9"]
    return main([*argv, "--ssl-certfile", str(cert), "--ssl-keyfile", str(key)]), db


def day(t):
    return t.strftime("%Y-%m-%d")


@pytest.mark.parametrize(
    "start, end, what",
    [
        (NOW - dt.timedelta(days=400), NOW - dt.timedelta(days=35), "has expired"),
        (NOW - dt.timedelta(days=90), NOW - dt.timedelta(minutes=5), "has expired"),
        (NOW + dt.timedelta(days=2), NOW + dt.timedelta(days=90), "is not valid yet"),
    ],
)
def test_a_certificate_not_valid_now_refuses_the_start(
    tmp_path, capsys, monkeypatch, start, end, what
):
    import uvicorn

    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: pytest.fail("served"))
    cert, key = issued(tmp_path, "bad", start, end)
    code, db = serve(tmp_path, cert, key)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    # (the day now: NOW's, or the next one when the run crossed midnight)
    today = "(" + "|".join(day(NOW + dt.timedelta(days=i)) for i in (0, 1)) + ")"
    assert re.fullmatch(
        rf"error: --ssl-certfile: {re.escape(str(cert))} {what}: valid from {day(start)} "
        rf"\d\d:\d\d UTC until {day(end)} \d\d:\d\d UTC \(now {today} .*\); every browser "
        "would refuse the page",
        err[0],
    ), err[0]
    assert not db.exists()  # refused before the database, long before listening


def test_a_certificate_that_expires_soon_is_said_at_the_start(tmp_path, capsys, monkeypatch):
    import uvicorn

    for name in (SERVER_PID, SERVER_ID):  # (serve names this process: put back after)
        monkeypatch.setenv(name, "")
    monkeypatch.setattr(signal, "signal", lambda *a: None)  # (nor takes this one's SIGTERM)
    ran = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: ran.append((app, kw)))
    cert, key = issued(tmp_path, "soon", NOW - dt.timedelta(days=80), NOW + dt.timedelta(days=5))
    code, _ = serve(tmp_path, cert, key)
    err = capsys.readouterr().err
    assert code == 0 and len(ran) == 1
    (line,) = [x for x in err.splitlines() if "certificate" in x]
    assert line.startswith(f"warning: the HTTPS certificate {cert} expires on ")
    assert "(in 4 days)" in line or "(in 5 days)" in line
    app, options = ran[0]
    assert parts_of(app).config.certificate == certificate_dates(str(cert))  # for the dashboards
    assert options["ssl_certfile"] == str(cert)
    ran.clear()
    cert, key = issued(tmp_path, "later", NOW - dt.timedelta(days=1), NOW + dt.timedelta(days=60))
    assert serve(tmp_path, cert, key)[0] == 0 and ran
    assert "certificate" not in capsys.readouterr().err  # not soon: nothing said


def test_the_notice_counts_down_to_the_end_and_past_it():
    end = NOW.timestamp()
    dates = {"file": "c.pem", "not_before": end - 9e6, "not_after": end}
    soon = EXPIRES_SOON_DAYS * 86400
    assert expiry_notice(dates, now=end - soon - 60) is None
    assert "(in 13 days)" in expiry_notice(dates, now=end - soon + 60)  # 13 d 23:59
    assert "(in 1 day)" in expiry_notice(dates, now=end - 86400 - 60)
    assert "(in 3 hours)" in expiry_notice(dates, now=end - 3.5 * 3600)
    assert "expired on" in expiry_notice(dates, now=end + 1) and "refuse" in expiry_notice(
        dates, now=end + 1
    )
    assert expiry_notice(None) is None

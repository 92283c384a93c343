"""The owner's dashboard of a collect in a real browser: signing in with the admin token,
the participants, the answers over time, the held-out accuracy per sampler and the map."""

from __future__ import annotations

import re

import numpy as np
import pytest
from playwright.sync_api import expect

from serve.browser.helpers import DESKTOP, photo_catalogue
from serve.helpers import collect_toml, parts_of, thread_server
from tripletsearch.people import CollectPerson
from tripletsearch.serve import create_app
from tripletsearch.serve.collect.screens import CHECK_RULES
from tripletsearch.serve.config import ServeConfig
from tripletsearch.serve.store import Store

# a browser: run once, not again under the sanitizers (.ci/run)
pytestmark = pytest.mark.once


DASHBOARD_FILE = collect_toml(
    catalogue="photos",
    samplers=["random", "arr"],
    test_share=0.25,
    n_choices=3,
    max_queries=24,
    burn_in=4,
    attention=[2, 12],
    repeats=[8, 20],
    title=None,
    seed=None,
)


def never_the_head(q: dict) -> int:
    """A participant who clicks blindly: never the head when it is among the candidates."""
    ids = [x["id"] for x in q["candidates"]]
    head = q["head"]["id"]
    return (ids.index(head) + 1) % len(ids) if head in ids else 0


def test_the_owners_dashboard_shows_the_collect_as_it_forms(browser, tmp_path, shots):
    """The owner signs in with the admin token (a wrong one is refused) and sees the
    participants (the one who failed the checks flagged), the answers over time, a curve of
    held-out accuracy per sampler with its intervals inside the axes and round ticks, the
    samplers' counts, the refitter's state and the newest embedding as a map."""
    from serve.helpers import in_process, take_part
    from tripletsearch.serve.collect import load_collect
    from tripletsearch.serve.collect.refitter import refit_once

    photo_catalogue(tmp_path / "photos")
    (tmp_path / "photos" / "embedding.npy").unlink()  # to be learned from the triplets
    (tmp_path / "collect.toml").write_text(DASHBOARD_FILE)
    cfg = load_collect(tmp_path / "collect.toml")
    url = f"sqlite:///{tmp_path / 'c.sqlite'}"
    # these people answer instantly: the server's clock check off (fast_server_ms=0)
    app = create_app(
        cfg.catalogue,
        url,
        collect=cfg,
        config=ServeConfig(admin_token="owner-token", fast_server_ms=0),
    )
    order = np.arange(cfg.catalogue.n_items, dtype=float)[:, None]  # a hidden 1-D order
    with in_process(app) as c:
        for person in range(11):
            looks = CollectPerson("person", order, gamma=None, lapse=0.0)  # the nearest
            take_part(c, looks.pick if person < 10 else never_the_head)  # the last: blindly
    store = Store(url)
    refit_once(store, cfg, buffer=10, fast_server_ms=0)
    with thread_server(app) as base:
        page = browser.new_page(**DESKTOP)
        page.goto(base + "/collect/dashboard")
        page.fill("#token", "wrong")
        page.click("#login button")
        expect(page.locator("#login-error")).to_contain_text("admin token")
        expect(page.locator("#board")).to_be_hidden()
        page.fill("#token", "owner-token")
        page.click("#login button")
        expect(page.locator("#board")).to_be_visible()
        expect(page.locator("#summary")).to_contain_text(f"11 participants, {11 * 24} answers")
        rows = page.locator("#participants tbody tr")
        expect(rows).to_have_count(11)
        flagged = page.locator("#participants tbody tr.flagged")
        expect(flagged).to_have_count(1)
        expect(flagged.locator(".status")).to_have_text("flagged: attention")
        expect(page.locator("#rules")).to_contain_text(f"Check rules version {CHECK_RULES}")
        # the screens' table: the collect's own form and the held-out triplets
        expect(page.locator("#trials tbody tr").first).to_contain_text("the samplers' fits")
        # the participants' table fits its box (the page's width: no sideways scroll)
        sizes = page.evaluate(
            "() => { const t = document.getElementById('participants');"
            " const box = t.parentElement.getBoundingClientRect().width;"
            " return [t.getBoundingClientRect().width, box, t.parentElement.scrollWidth,"
            " t.parentElement.clientWidth]; }"
        )
        assert sizes[0] <= sizes[1] + 0.5 and sizes[2] <= sizes[3], sizes
        # the plots are drawn from their own fetches: waited on, then read
        points = page.locator("#answers-plot polyline")
        expect(points).to_have_attribute("data-points", re.compile(r"^(1[1-9]|[2-9]\d|\d{3,})$"))
        for name in cfg.samplers:  # one accuracy curve per sampler, with its points
            line = page.locator(f'#accuracy-plot polyline[data-series="{name}"]')
            expect(line).to_have_attribute("data-points", re.compile(r"^[1-9]\d*$"))
            expect(page.locator(f'#accuracy-legend [data-series="{name}"]')).to_contain_text(name)
        # every interval inside the axes (none drawn over a tick label), the ticks round
        inside = page.evaluate(
            "() => { const svg = document.getElementById('accuracy-plot');"
            " const [, , w, h] = svg.getAttribute('viewBox').split(' ').map(Number);"
            " return [...svg.querySelectorAll('line.interval')].map(l =>"
            " [+l.getAttribute('y1'), +l.getAttribute('y2')]).every(([a, b]) =>"
            " a >= 12 - 1e-6 && b >= 12 - 1e-6 && a <= h - 36 + 1e-6 && b <= h - 36 + 1e-6); }"
        )
        assert inside and page.locator("#accuracy-plot line.interval").count() >= 2
        for label in page.locator("#accuracy-plot text.tick").all_text_contents():
            value = float(label)
            assert any(abs(value / s - round(value / s)) < 1e-9 for s in (0.1, 0.2, 0.5, 1, 2, 5))
        for name in cfg.samplers:
            expect(page.locator(f'#accuracy-legend [data-series="{name}"]')).to_contain_text(
                "test triplets"
            )
            expect(page.locator(f'#arms tr[data-sampler="{name}"]')).to_be_visible()
            expect(page.locator(f'#arms tr[data-sampler="{name}"]')).to_contain_text(
                "every query random" if name == "random" else f"{name}: "
            )
        expect(page.locator("#refitter")).to_contain_text("Refitter")
        pictures = page.locator("#map image.item")
        expect(pictures).to_have_count(cfg.catalogue.n_items)
        titles = page.locator("#map image.item title").all_text_contents()
        assert sorted(titles) == sorted(cfg.catalogue.names)
        loaded = page.evaluate(
            "Promise.all([...document.querySelectorAll('#map image')].map(i => "
            "fetch(i.getAttribute('href')).then(r => r.ok)))"
        )
        assert all(loaded)
        page.reload()  # the token is kept for the tab
        expect(page.locator("#board")).to_be_visible()
        page.screenshot(path=str(shots / "collect-dashboard.png"), full_page=True)
        page.close()


def test_a_refitter_that_keeps_failing_shows_its_last_error_line(browser, tmp_path):
    """What the server's supervisor kept of a refitter that keeps failing (its count, its
    last error line) is on the page, as an error; one that runs again shows none."""
    import socket

    from serve.helpers import catalogue_folder
    from tripletsearch.serve.collect import load_collect
    from tripletsearch.serve.collect.refitter import watch_key
    from tripletsearch.serve.service.processes import server_id

    catalogue_folder(tmp_path)
    (tmp_path / "collect.toml").write_text('catalogue = "items"\nsamplers = ["random"]\n')
    cfg = load_collect(tmp_path / "collect.toml")
    url = f"sqlite:///{tmp_path / 'c.sqlite'}"
    app = create_app(cfg.catalogue, url, collect=cfg, config=ServeConfig(admin_token="owner-token"))
    key = parts_of(app).collect.config.fingerprint
    record = {"host": socket.gethostname(), "pid": 2**22 + 1, "running": False, "restarts": 3}
    error = "RuntimeError: disk I/O error"
    Store(url).put_meta(watch_key(key, server_id()), {**record, "failures": 4, "error": error})
    with thread_server(app) as base:
        page = browser.new_page(**DESKTOP)
        page.goto(base + "/collect/dashboard")
        page.fill("#token", "owner-token")
        page.click("#login button")
        refitter = page.locator("#refitter")
        expect(refitter).to_contain_text("Refitter NOT running")
        expect(refitter).to_contain_text(f"It failed 4 times in a row: {error}")
        expect(refitter).to_have_class("small error")


def test_both_dashboards_say_the_certificate_expires_soon(browser, tmp_path):
    """A study's dashboard and a collect's say, above everything, that the server's HTTPS
    certificate expires within 14 days; a server without that says nothing there."""
    import time

    from serve.helpers import catalogue_folder, write_study
    from tripletsearch.serve.collect import load_collect
    from tripletsearch.serve.study import load_study

    catalogue_folder(tmp_path)
    (tmp_path / "collect.toml").write_text('catalogue = "items"\nsamplers = ["random"]\n')
    kinds = {"study": load_study(write_study(tmp_path / "s")), "collect": None}
    kinds["collect"] = load_collect(tmp_path / "collect.toml")
    soon = {"file": "/etc/tls/cert.pem", "not_before": 0.0, "not_after": time.time() + 5.5 * 86400}
    page = browser.new_page(**DESKTOP)  # one tab, each server another origin
    for kind, experiment in kinds.items():
        for certificate in (soon, None):
            url = f"sqlite:///{tmp_path / f'{kind}-{certificate is None}.sqlite'}"
            config = ServeConfig(database=url, admin_token="owner-token", certificate=certificate)
            app = create_app(None, config=config, **{kind: experiment})
            with thread_server(app) as base:
                page.goto(f"{base}/{kind}/dashboard")
                page.fill("#token", "owner-token")
                page.click("#login button")
                expect(page.locator("#summary")).to_contain_text("participants")
                notices = page.locator("#notices")
                if certificate is None:
                    expect(notices).to_be_hidden()
                else:
                    expect(notices).to_be_visible()
                    expect(notices).to_contain_text(
                        "the HTTPS certificate /etc/tls/cert.pem expires on"
                    )
                    expect(notices).to_contain_text("(in 5 days); renew it and restart")
                page.goto("about:blank")  # off this server before it stops
    page.close()


def test_the_owner_releases_a_participant_from_the_dashboard(browser, tmp_path):
    """A participant's release button asks first (dismissed: nothing released); confirmed,
    the participation is marked released (its answers kept), its button gone, and the
    platform id's next visit enrols a new participant, as ``participants release`` does."""
    import httpx

    from tripletsearch.serve.collect import load_collect

    head = 'platform = "prolific"\n'
    keys = dict(catalogue="colours", n_choices=3, max_queries=6, seed=None)
    (tmp_path / "collect.toml").write_text(head + collect_toml(**keys))
    cfg = load_collect(tmp_path / "collect.toml")
    url = f"sqlite:///{tmp_path / 'c.sqlite'}"
    app = create_app(cfg.catalogue, url, collect=cfg, config=ServeConfig(admin_token="owner-token"))
    link = {"PROLIFIC_PID": "5f1a2b3c4d5e6f7a8b9c0d1e", "STUDY_ID": "S1", "SESSION_ID": "V1"}
    with thread_server(app) as base:
        with httpx.Client(base_url=base, timeout=30) as c:
            first = c.post("/api/participants", json={"consent": True, "platform": link}).json()
            assert c.post("/api/participants", json={"consent": True}).status_code == 201
        page = browser.new_page(**DESKTOP)
        page.goto(base + "/collect/dashboard")
        page.fill("#token", "owner-token")
        page.click("#login button")
        row = page.locator(f'#participants tbody tr[data-participant="{first["id"]}"]')
        expect(row.locator("button.release")).to_have_count(1)
        expect(page.locator("#participants tbody tr button.release")).to_have_count(1)
        page.once("dialog", lambda d: d.dismiss())
        row.locator("button.release").click()
        expect(row.locator("button.release")).to_be_enabled()
        assert Store(url).participant(first["id"]).released is None
        page.once("dialog", lambda d: d.accept())
        with page.expect_response(lambda r: r.url.endswith("/release")) as done:
            row.locator("button.release").click()
        assert done.value.status == 200
        expect(row.locator(".platform")).to_have_text(f"{link['PROLIFIC_PID']} (released)")
        expect(row.locator("button.release")).to_have_count(0)
        expect(page.locator("#release-error")).to_have_text("")
        kept = Store(url).participant(first["id"])
        assert kept.released is not None and kept.platform_key is None
        with httpx.Client(base_url=base, timeout=30) as c:
            again = c.post("/api/participants", json={"consent": True, "platform": link}).json()
        assert again["id"] != first["id"] and "resumed" not in again
        page.close()

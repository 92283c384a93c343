"""The collect page's screens of more than one pick in a real browser: a rank (a head and
its candidates, the r most alike picked in order, then "Done") and an odd-one-out (three
items, no head); each fits the screen, its pictures drawn alike."""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3

import pytest
from playwright.sync_api import expect

from serve.browser.helpers import DESKTOP, PHONE, drawn_alike, names_shown, photo_catalogue
from serve.helpers import collect_toml, thread_server
from tripletsearch.serve import create_app

# a browser: run once, not again under the sanitizers (.ci/run)
pytestmark = pytest.mark.once

DEVICES = {"desktop": DESKTOP, "phone": PHONE}


@contextlib.contextmanager
def collect_page(browser, tmp_path, device, **keys):
    """A collect of ``keys`` over 24 photos of several shapes, served, and a page on
    ``device`` that consented and sees its first screen: (page, the collect, its database
    file). The collect's seed (0) decides each participant's screens: the first's are
    the same in every run."""
    from tripletsearch.serve.collect import load_collect

    photo_catalogue(tmp_path / "photos")
    (tmp_path / "photos" / "embedding.npy").unlink()
    (tmp_path / "collect.toml").write_text(
        collect_toml(catalogue="photos", title=None, seed=None, **keys)
    )
    cfg = load_collect(tmp_path / "collect.toml")
    db = tmp_path / "c.sqlite"
    with thread_server(create_app(cfg.catalogue, f"sqlite:///{db}", collect=cfg)) as base:
        ctx = browser.new_context(**DEVICES[device])
        page = ctx.new_page()
        page.goto(base + "/collect")
        page.click("#agree")
        page.click("#go")  # (after the instructions)
        expect(page.locator("#progress")).to_have_text(f"query 1 of {cfg.max_queries}")
        try:
            yield page, cfg, db
        finally:
            ctx.close()


def fits(page) -> bool:
    """Whether the page shows everything without scrolling."""
    return page.evaluate("document.scrollingElement.scrollHeight <= innerHeight")


def expect_ranks(page, ranked: list[int], r: int = 2) -> None:
    """The candidates at positions ``ranked`` show ranks 1, 2, ... in that order (a badge,
    the class, ``data-rank``, ``aria-pressed`` and the label), the others none; "Done" is
    enabled with exactly ``r`` picked."""
    picks = page.locator("#grid .pick")
    for rank, i in enumerate(ranked, 1):
        expect(picks.nth(i)).to_have_attribute("data-rank", str(rank))
        expect(picks.nth(i).locator(".rank")).to_have_text(str(rank))
        expect(picks.nth(i)).to_have_attribute("aria-label", re.compile(f"picked {rank} of {r}$"))
    expect(page.locator("#grid .pick.ranked")).to_have_count(len(ranked))
    expect(page.locator('#grid .pick[aria-pressed="true"]')).to_have_count(len(ranked))
    expect(page.locator("#grid .pick .rank:visible")).to_have_count(len(ranked))
    if len(ranked) == r:
        expect(page.locator("#send-picks")).to_be_enabled()
    else:
        expect(page.locator("#send-picks")).to_be_disabled()


def stored_answers(db, pid) -> list[tuple[int, int | None, list[int] | None]]:
    """(screen, choice, picks) of each answer of participant ``pid``, by screen."""
    with sqlite3.connect(db) as con:
        rows = con.execute(
            "SELECT a.screen, a.choice, a.picks FROM ts_answers a "
            "JOIN ts_sessions s ON s.id = a.session_id WHERE s.participant = ? "
            "ORDER BY a.screen",
            (pid,),
        ).fetchall()
    return [(s, c, None if p is None else json.loads(p)) for s, c, p in rows]


@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_a_rank_collect_from_consent_to_the_debrief(browser, tmp_path, device):
    """A participant answers a collect of 2 picks among 8 by clicks on a desktop and by
    taps on a phone: each pick shows its rank, a second click takes it back (the later
    pick becomes first), a third pick is refused, "Done" is enabled at 2 picks and sends
    them; a held-out test screen (2 candidates) answers with one click, a skip sends no
    picks. Every screen fits without scrolling, its boxes alike; the database holds the
    picks in the order clicked."""
    with collect_page(
        browser,
        tmp_path,
        device,
        n_choices=8,
        picks=2,
        max_queries=6,
        debrief="Thank you for your answers.",
    ) as (page, cfg, db):

        def press(locator):
            locator.tap() if device == "phone" else locator.click()

        pick = page.locator("#grid .pick")
        expected, kinds = [], []
        for n in range(cfg.max_queries):
            expect(page.locator("#progress")).to_have_text(f"query {n + 1} of 6")
            k = pick.count()
            kinds.append(k)
            assert fits(page), (device, n)
            assert drawn_alike(page) == k + 1
            head = page.locator("#head-name").inner_text()
            if k == 2:  # a held-out test screen: one click answers
                expect(page.locator("#send-picks")).to_be_hidden()
                expect(page.locator("#prompt")).to_have_text(f"Which is most like “{head}”?")
                expected.append((n, 1, None))
                with page.expect_response(lambda r: r.url.endswith("/answer")):
                    press(pick.nth(1))
                continue
            assert k == 8
            expect(page.locator("#prompt")).to_have_text(
                f"Pick the 2 most like “{head}”, most alike first."
            )
            expect_ranks(page, [])
            first, second, third = n % 8, (n + 3) % 8, (n + 5) % 8
            press(pick.nth(first))
            expect_ranks(page, [first])
            expect(page.locator("#announce")).to_have_text("Picked 1 of 2.")
            if kinds.count(8) == 2:  # the second rank screen: one pick, then a skip
                expected.append((n, None, None))
                with page.expect_response(lambda r: r.url.endswith("/answer")):
                    press(page.locator("#skip"))
                continue
            press(pick.nth(second))
            expect_ranks(page, [first, second])
            if kinds.count(8) == 1:  # the first: a third pick refused, the first taken back
                press(pick.nth(third))
                expect_ranks(page, [first, second])
                press(pick.nth(first))
                expect_ranks(page, [second])
                press(pick.nth(third))
                expect_ranks(page, [second, third])
                expected.append((n, second, [second, third]))
            else:
                expected.append((n, first, [first, second]))
            with page.expect_response(lambda r: r.url.endswith("/answer")):
                press(page.locator("#send-picks"))
        expect(page.locator("#result")).to_have_text("Thank you for your answers.")
        pid = page.evaluate("JSON.parse(localStorage.getItem('ts-collect')).participant.id")
    assert kinds.count(8) >= 3 and 2 in kinds, kinds  # (the seed shows every case)
    assert stored_answers(db, pid) == expected


def test_rank_keys_pick_take_back_and_send(browser, tmp_path):
    """On a rank screen digits pick (and take back), Backspace takes back the last pick
    (never an undo), Enter sends only at 2 picks, and 0 skips."""
    with collect_page(
        browser, tmp_path, "desktop", n_choices=8, picks=2, max_queries=3, test_share=0.0
    ) as (page, cfg, db):
        expect(page.locator("#keys")).to_have_text(
            "Keys: 1-8 pick or take back, Backspace takes back the last pick, "
            "Enter = Done (2 picked), 0 = skip."
        )
        keys = page.keyboard
        keys.press("3")
        keys.press("7")
        expect_ranks(page, [2, 6])
        keys.press("Backspace")
        expect_ranks(page, [2])
        keys.press("Backspace")
        keys.press("Backspace")  # nothing left to take back: nothing happens
        expect_ranks(page, [])
        expect(page.locator("#progress")).to_have_text("query 1 of 3")
        keys.press("5")
        keys.press("1")
        keys.press("1")  # a digit again takes its pick back
        expect_ranks(page, [4])
        keys.press("Enter")  # one pick: nothing sent
        keys.press("2")
        expect_ranks(page, [4, 1])
        with page.expect_response(lambda r: r.url.endswith("/answer")):
            keys.press("Enter")
        expect(page.locator("#progress")).to_have_text("query 2 of 3")
        expect_ranks(page, [])  # the next screen: no picks
        keys.press("4")
        with page.expect_response(lambda r: r.url.endswith("/answer")):
            keys.press("0")
        expect(page.locator("#progress")).to_have_text("query 3 of 3")
        pid = page.evaluate("JSON.parse(localStorage.getItem('ts-collect')).participant.id")
    assert stored_answers(db, pid) == [(0, 4, [4, 1]), (1, None, None)]


@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_an_odd_one_out_screen(browser, tmp_path, device):
    """An odd-one-out shows three items and no head, asks which is the odd one out, and
    answers with one click (a desktop) or one tap (a phone); it fits without scrolling,
    its boxes alike."""
    keys = dict(trial="odd-one-out", n_choices=None, max_queries=5)
    with collect_page(browser, tmp_path, device, **keys) as (page, cfg, db):
        for n in range(2):
            expect(page.locator("#progress")).to_have_text(f"query {n + 1} of 5")
            expect(page.locator("#head")).to_be_hidden()
            expect(page.locator("#send-picks")).to_be_hidden()
            expect(page.locator("#prompt")).to_have_text("Which one is the odd one out?")
            assert drawn_alike(page) == 3
            assert fits(page)
            pick = page.locator("#grid .pick").nth(2 - n)
            with page.expect_response(lambda r: r.url.endswith("/answer")):
                pick.tap() if device == "phone" else pick.click()
        expect(page.locator("#progress")).to_have_text("query 3 of 5")
        pid = page.evaluate("JSON.parse(localStorage.getItem('ts-collect')).participant.id")
    assert stored_answers(db, pid) == [(0, 2, None), (1, 1, None)]


@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_sixteen_candidates_with_names_hidden(browser, tmp_path, device):
    """Sixteen candidates and the head, names hidden, are drawn alike; on a desktop they
    fit without scrolling (a phone may scroll), and no digit picks among sixteen."""
    keys = dict(n_choices=16, picks=3, max_queries=3, test_share=0.0, show_names=False)
    with collect_page(browser, tmp_path, device, **keys) as (page, cfg, db):
        expect(page.locator("#grid .pick img")).to_have_count(16)
        assert drawn_alike(page) == 17
        assert names_shown(page) == []
        expect(page.locator("#prompt")).to_have_text(
            "Pick the 3 most like the one on top, most alike first."
        )
        expect(page.locator("#grid .pick .key")).to_have_count(0)
        if device == "desktop":
            assert fits(page)
            page.keyboard.press("1")
            expect_ranks(page, [], r=3)

"""The collect page in a real browser: a participant from consent to the debrief, and
pictures that arrive loaded, a double click answering once."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from serve.browser.helpers import (
    DESKTOP,
    PHONE,
    drawn_alike,
    long_names,
    names_shown,
    photo_catalogue,
)
from serve.helpers import collect_toml, thread_server
from tripletsearch.serve import create_app
from tripletsearch.serve.store import Store

# a browser: run once, not again under the sanitizers (.ci/run)
pytestmark = pytest.mark.once


COLLECT_FILE = collect_toml(
    title="Which colours look alike?",
    catalogue="colours",
    n_choices=3,
    max_queries=8,
    attention=[3],
    repeats=[6],
    instructions="Pick the colour most like the one on top.",
    debrief="Thank you for your answers.",
    completion_code="CQ-9",
    seed=None,
)


def test_collect_page_from_consent_to_debrief(browser, tmp_path):
    """A participant consents, reads the instructions, answers a head and three
    candidates by clicks (one skip), survives a reload, and gets the debrief and code;
    the database holds each answer with the time the page measured."""
    from tripletsearch.serve.collect import load_collect

    (tmp_path / "collect.toml").write_text(COLLECT_FILE)
    cfg = load_collect(tmp_path / "collect.toml")
    url = f"sqlite:///{tmp_path / 'c.sqlite'}"
    with thread_server(create_app(cfg.catalogue, url, collect=cfg)) as base:
        page = browser.new_page(**DESKTOP)
        page.goto(base + "/collect")
        expect(page.locator("#consent-text")).to_contain_text("similar")
        page.click("#agree")
        expect(page.locator("#instructions-text")).to_have_text(cfg.instructions)
        page.click("#go")
        for n in range(cfg.max_queries):
            expect(page.locator("#grid .pick")).to_have_count(3)
            expect(page.locator("#progress")).to_have_text(f"query {n + 1} of {cfg.max_queries}")
            expect(page.locator("#undo")).to_be_hidden()
            expect(page.locator("#skip")).to_be_visible()
            head = page.locator("#head-name").inner_text()
            expect(page.locator("#prompt")).to_have_text(f"Which is most like “{head}”?")
            if n == 1:
                page.reload()  # the participant and their query survive
                expect(page.locator("#grid .pick")).to_have_count(3)
            expect(page.locator("#skip")).to_be_enabled()  # the screen's lock over
            page.wait_for_timeout(120)  # the person's moment the page measures: not a wait
            with page.expect_response(lambda r: r.url.endswith("/answer")):
                if n == 4:
                    page.click("#skip")
                else:
                    page.locator("#grid .pick").nth(n % 3).click()
        expect(page.locator("#result")).to_have_text("Thank you for your answers.")
        expect(page.locator("#result-lines")).to_have_text("Your completion code: CQ-9")
        expect(page.locator("#progress")).to_have_text("")  # no query counted on the debrief
        pid = page.evaluate("JSON.parse(localStorage.getItem('ts-collect')).participant.id")
        page.close()
    store = Store(url)
    (session,) = store.participant_sessions(pid)
    assert session.done and session.n_queries == cfg.max_queries
    import sqlite3

    with sqlite3.connect(tmp_path / "c.sqlite") as con:
        rows = con.execute(
            "SELECT screen, choice, response_ms FROM ts_answers WHERE session_id = ? "
            "ORDER BY screen",
            (session.id,),
        ).fetchall()
    assert [r[0] for r in rows] == list(range(cfg.max_queries))
    assert rows[4][1] is None and all(r[1] == r[0] % 3 for r in rows if r[0] != 4)
    assert all(100 <= r[2] < 60_000 for r in rows)  # the page's measure, in ms


PICTURE_COLLECT = collect_toml(catalogue="photos", max_queries=5, burn_in=1, title=None, seed=None)


def test_collect_pictures_arrive_loaded_and_a_double_click_answers_once(browser, tmp_path):
    """Each query's pictures are loaded before it is shown (the server sends them slowly:
    every picture is complete the moment its screen appears), and a double click on a
    candidate records one answer: the screen stays locked a moment after a click."""
    from tripletsearch.serve.collect import load_collect

    photo_catalogue(tmp_path / "photos")
    (tmp_path / "photos" / "embedding.npy").unlink()
    (tmp_path / "collect.toml").write_text(PICTURE_COLLECT)
    cfg = load_collect(tmp_path / "collect.toml")
    url = f"sqlite:///{tmp_path / 'c.sqlite'}"
    with thread_server(create_app(cfg.catalogue, url, collect=cfg)) as base:
        page = browser.new_page(**DESKTOP)

        def slow(route):
            page.wait_for_timeout(250)  # the slow network for pictures under test
            route.continue_()

        page.route("**/images/*", slow)
        page.add_init_script(
            "window.__screens = []; new MutationObserver(() => {"
            " const g = document.getElementById('grid'); if (!g) return;"
            " const imgs = [...g.querySelectorAll('img')]; if (!imgs.length) return;"
            " window.__screens.push(imgs.every(i => i.complete && i.naturalWidth > 0));"
            "}).observe(document, {childList: true, subtree: true});"
        )
        page.goto(base + "/collect")
        page.click("#agree")
        page.click("#go")
        for n in range(cfg.max_queries):
            expect(page.locator("#progress")).to_have_text(f"query {n + 1} of {cfg.max_queries}")
            with page.expect_response(lambda r: r.url.endswith("/answer")):
                page.locator("#grid .pick").nth(0).dblclick()
        expect(page.locator("#result")).to_be_visible()
        screens = page.evaluate("window.__screens")
        pid = page.evaluate("JSON.parse(localStorage.getItem('ts-collect')).participant.id")
        page.close()
    assert screens and all(screens)  # never a picture still loading on a shown screen
    (session,) = Store(url).participant_sessions(pid)
    history = Store(url).history(session.id)
    assert [h["number"] for h in history] == list(range(cfg.max_queries))  # once each


@pytest.mark.parametrize("device", ["desktop", "phone"])
@pytest.mark.parametrize("show_names", [True, False])
def test_the_head_and_candidates_are_drawn_alike(browser, tmp_path, device, show_names):
    """The head sits in a box as large as each candidate's, on a desktop and a phone; long
    names wrap under their boxes; show_names = false hides every name."""
    from tripletsearch.serve.collect import load_collect

    photo_catalogue(tmp_path / "photos")
    long_names(tmp_path / "photos")
    (tmp_path / "photos" / "embedding.npy").unlink()
    text = PICTURE_COLLECT.replace("n_choices = 2", "n_choices = 4")
    (tmp_path / "collect.toml").write_text(text + f"show_names = {str(show_names).lower()}\n")
    cfg = load_collect(tmp_path / "collect.toml")
    url = f"sqlite:///{tmp_path / 'c.sqlite'}"
    with thread_server(create_app(cfg.catalogue, url, collect=cfg)) as base:
        ctx = browser.new_context(**(DESKTOP if device == "desktop" else PHONE))
        page = ctx.new_page()
        page.goto(base + "/collect")
        page.click("#agree")
        page.click("#go")
        for n in range(3):
            expect(page.locator("#grid .pick img")).to_have_count(4)
            expect(page.locator("#head-box img")).to_have_count(1)
            assert drawn_alike(page) == 5
            head = page.locator("#head-name").inner_text() if show_names else ""
            if show_names:
                assert len(names_shown(page)) == 5
                expect(page.locator("#prompt")).to_have_text(f"Which is most like “{head}”?")
            else:
                assert names_shown(page) == []
                expect(page.locator("#prompt")).to_have_text("Which is most like the one on top?")
            expect(page.locator("#skip")).to_be_enabled()  # the screen's lock is over
            with page.expect_response(lambda r: r.url.endswith("/answer")):
                page.locator("#grid .pick").nth(n % 4).click()
            expect(page.locator("#progress")).to_have_text(f"query {n + 2} of 5")
        ctx.close()


@pytest.mark.parametrize("show_names", [True, False])
def test_a_phone_shows_the_head_and_both_rows_of_candidates_and_stopping_clears_the_header(
    browser, tmp_path, show_names
):
    """On a 390 x 844 phone, the head and four candidates (two rows), names of two lines
    under them and a title on two lines, every candidate's box is on the screen without
    scrolling (the second row ended below it); after "Stop taking part" the header counts
    nothing."""
    from tripletsearch.serve.collect import load_collect

    photo_catalogue(tmp_path / "photos")
    items = tmp_path / "photos" / "items.csv"
    lines = items.read_text().splitlines()
    items.write_text(
        "\n".join(
            [lines[0]]
            + [f"{r.split(',')[0]} of the old museum,{r.split(',')[1]}" for r in lines[1:]]
        )
        + "\n"
    )
    (tmp_path / "photos" / "embedding.npy").unlink()
    text = PICTURE_COLLECT.replace("n_choices = 2", "n_choices = 4")
    title = 'title = "Which of these pictures of our lab\'s collection looks most alike?"\n'
    (tmp_path / "collect.toml").write_text(
        title + text + f"show_names = {str(show_names).lower()}\n"
    )
    cfg = load_collect(tmp_path / "collect.toml")
    url = f"sqlite:///{tmp_path / 'c.sqlite'}"
    with thread_server(create_app(cfg.catalogue, url, collect=cfg)) as base:
        ctx = browser.new_context(**PHONE)
        page = ctx.new_page()
        page.goto(base + "/collect")
        page.click("#agree")
        page.click("#go")
        expect(page.locator("#grid .pick img")).to_have_count(4)
        assert drawn_alike(page) == 5
        bottoms = page.eval_on_selector_all(
            "#grid .pick", "els => els.map(e => e.getBoundingClientRect().bottom)"
        )
        assert max(bottoms) <= PHONE["viewport"]["height"], bottoms
        assert page.evaluate("window.scrollY") == 0
        expect(page.locator("#progress")).to_have_text("query 1 of 5")
        page.once("dialog", lambda d: d.accept())
        with page.expect_response(lambda r: r.url.endswith("/withdraw")):
            page.click("#stop")
        expect(page.locator("#result")).to_contain_text("You have stopped taking part")
        expect(page.locator("#progress")).to_have_text("")
        ctx.close()

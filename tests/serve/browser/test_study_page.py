"""The study's page in a real browser: whole studies by scripted participants and their
report, the server refusing "this is it" on another item, a participant who stops and
the next one's completion code, and the counterbalanced first targets."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections import Counter

import pytest
from playwright.sync_api import expect

from serve.browser.helpers import (
    DESKTOP,
    NO_SIDEWAYS_SCROLL,
    PHONE,
    STUDY,
    answer_keys,
    drawn_alike,
    find_by_clicks,
    long_names,
    names_shown,
    photo_catalogue,
    target_of,
)
from serve.helpers import ServeProcess, thread_server
from tripletsearch.serve import create_app, demo_catalogue
from tripletsearch.serve.store import Store
from tripletsearch.serve.study import load_study

CAT = demo_catalogue()

# a browser: run once, not again under the sanitizers (.ci/run)
pytestmark = pytest.mark.once


def scripted_participant(base: str, study) -> None:
    """A participant whose script finds each target through the API (the nearest item
    shown, "found" on the target): the study's second one, its page already walked."""
    import httpx
    import numpy as np

    from tripletsearch.people import FindPerson

    with httpx.Client(base_url=base, timeout=30) as c:
        me = c.post("/api/participants", json={"consent": True}).json()
        where, auth = f"/api/participants/{me['id']}", {"Authorization": f"Bearer {me['token']}"}
        reply = c.post(f"{where}/next", json={}, headers=auth).json()
        while not reply["done"]:
            if reply["screen"]["number"] == 0:  # a new search: its target
                target = reply["target"]["id"]
                person = FindPerson(study.catalogue, target, None, np.random.default_rng(0))
            body = person.answer(reply["screen"])
            reply = c.post(f"{where}/answer", json=body, headers=auth).json()
        assert reply["outcome"] == "finished", reply


def test_a_whole_study_in_the_browser_and_its_report(browser, tmp_path, shots):
    """A participant's whole study (3 targets) clicked in the browser, a second one's
    through the API; the report counts both."""
    (tmp_path / "study.toml").write_text(STUDY)
    study = load_study(tmp_path / "study.toml")
    url = f"sqlite:///{tmp_path / 'study.sqlite'}"
    with ServeProcess("--study", str(tmp_path / "study.toml"), "--database", url) as srv:
        page = browser.new_page()
        page.goto(srv.base + "/study")
        expect(page.locator("#consent-text")).to_contain_text("random id")
        page.click("#agree")
        for _slot in range(3):
            page.wait_for_selector("#target-intro:not([hidden])")
            target = target_of(page, study)
            page.click("#begin")
            find_by_clicks(page, target, max_screens=40)
        expect(page.locator("#done")).to_be_visible()
        expect(page.locator("#result")).to_contain_text("Thank you")
        page.close()
        scripted_participant(srv.base, study)
    out = tmp_path / "report"
    res = subprocess.run(
        [sys.executable, "-m", "tripletsearch", "report", "--database", url, "--out", str(out)]
        + ["--study", str(tmp_path / "study.toml")]
        + ["--fast-server-ms", "0"],  # a script clicks here, not a person: no clock check
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stderr
    assert "2 participants enrolled, 2 searched: 6 searches" in res.stdout, res.stdout
    assert "protocol: the paper's (no guesses)" in res.stdout
    planned = Counter(m for p in range(2) for _, m in study.plan(p))  # plan 3: g, ga, g
    for method, n in planned.items():
        assert re.search(rf"{method}\s+{n}\s+{n}", res.stdout), (method, n, res.stdout)
    assert (out / "cdf.png").exists()
    shutil.copy(out / "cdf.png", shots / "study-cdf.png")


def test_the_server_refuses_this_is_it_on_another_item_in_a_study(browser, tmp_path):
    """The page no longer checks the target itself: the server refuses, the page says why,
    nothing is recorded; a reload resumes the search beside its target."""
    (tmp_path / "study.toml").write_text(STUDY.replace("targets = 3", "targets = 1"))
    study = load_study(tmp_path / "study.toml")
    url = f"sqlite:///{tmp_path / 'study.sqlite'}"
    with thread_server(create_app(study.catalogue, url, study=study)) as base:
        page = browser.new_page()
        page.goto(base + "/study")
        page.click("#agree")
        page.wait_for_selector("#target-intro:not([hidden])")
        target = target_of(page, study)
        page.click("#begin")
        expect(page.locator("#grid .pick")).to_have_count(4)
        names = page.locator("#grid .card .name").all_inner_texts()
        other = next(i for i, n in enumerate(names) if n != target)
        page.locator("#grid .card .found").nth(other).click()
        with page.expect_response(lambda r: r.url.endswith("/answer")) as refused:
            page.click("#confirm-yes")
        assert refused.value.status == 400
        expect(page.locator("#status")).to_contain_text("not the target")
        pid = page.evaluate("JSON.parse(localStorage.getItem('ts-study')).participant.id")
        (session,) = Store(url).participant_sessions(pid)
        assert Store(url).history(session.id) == []
        expect(page.locator("#progress")).to_have_text("Target 1 of 1 · screen 1 · 0 answered")
        with page.expect_response(lambda r: r.url.endswith("/answer")):
            page.locator("#grid .pick").nth(other).click()
        expect(page.locator("#progress")).to_contain_text("1 answered")
        page.reload()
        expect(page.locator("#progress")).to_have_text("Target 1 of 1 · screen 2 · 1 answered")
        expect(page.locator("#head-name")).to_have_text(CAT.names[target])
        with page.expect_response(lambda r: r.url.endswith(f"/api/participants/{pid}/undo")):
            page.click("#undo")  # the participant's undo: the first screen again
        expect(page.locator("#progress")).to_have_text("Target 1 of 1 · screen 1 · 0 answered")
        assert [h["kind"] for h in Store(url).history(session.id)] == ["answer", "undo"]
        find_by_clicks(page, target, max_screens=40)
        expect(page.locator("#result")).to_contain_text("Thank you: the search is done.")
        page.close()


def test_a_participant_stops_and_another_gets_the_completion_code(browser, tmp_path):
    (tmp_path / "study.toml").write_text(
        STUDY.replace("targets = 3", "targets = 1")
        + 'completion_code = "C0DE-7"\nredirect = "https://example.org/back"\n'
    )
    study = load_study(tmp_path / "study.toml")
    url = f"sqlite:///{tmp_path / 'study.sqlite'}"
    with thread_server(create_app(study.catalogue, url, study=study)) as base:
        page = browser.new_page(**DESKTOP)
        page.goto(base + "/study")
        page.click("#decline")
        expect(page.locator("#result")).to_have_text("No problem: nothing was recorded.")
        expect(page.locator("#result-swatch")).to_be_hidden()
        expect(page.locator("#copy")).to_be_hidden()
        page.evaluate("localStorage.clear()")
        page.goto(base + "/study")
        page.click("#agree")
        page.click("#begin")
        expect(page.locator("#stop")).to_be_visible()
        expect(page.locator("#start-over")).to_be_hidden()
        expect(page.locator("#change-mode")).to_be_hidden()
        answer_keys(page, "1")
        pid = page.evaluate("JSON.parse(localStorage.getItem('ts-study')).participant.id")
        page.once("dialog", lambda d: d.accept())
        with page.expect_response(lambda r: r.url.endswith("/withdraw")):
            page.click("#stop")
        expect(page.locator("#result")).to_contain_text("You have stopped taking part")
        expect(page.locator("#result-swatch")).to_be_hidden()
        expect(page.locator("#progress")).to_have_text("")  # no screen under way any more
        assert Store(url).participant(pid).withdrawn is not None
        page.reload()  # nothing kept: consent again
        expect(page.locator("#consent")).to_be_visible()
        page.click("#agree")
        expect(page.locator("#target-intro")).to_be_visible()
        target = target_of(page, study)
        page.click("#begin")
        find_by_clicks(page, target, max_screens=40)
        expect(page.locator("#result")).to_contain_text("Thank you: the search is done.")
        expect(page.locator("#result-lines")).to_have_text("Your completion code: C0DE-7")
        expect(page.locator("#redirect")).to_have_attribute("href", "https://example.org/back")
        expect(page.locator("#result-swatch")).to_be_hidden()
        page.close()


def test_consecutive_participants_begin_with_different_targets(browser, tmp_path):
    """The Williams plan in the browser: with two targets, participants 0 and 1 (one
    block) begin with different targets and each does both."""
    (tmp_path / "study.toml").write_text(STUDY.replace("targets = 3", "targets = 2"))
    study = load_study(tmp_path / "study.toml")
    app = create_app(study.catalogue, f"sqlite:///{tmp_path / 's.sqlite'}", study=study)
    firsts = []
    with thread_server(app) as base:
        for _ in range(2):
            ctx = browser.new_context()
            page = ctx.new_page()
            page.goto(base + "/study")
            page.click("#agree")
            expect(page.locator("#target-intro")).to_be_visible()
            firsts.append(
                study.catalogue.names[int(page.get_attribute("#target-big", "data-item"))]
            )
            ctx.close()
    assert len(set(firsts)) == 2
    assert {study.catalogue.names[t] for t in study.targets} == set(firsts)


@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_the_target_and_the_items_are_drawn_alike(browser, tmp_path, device):
    """The target beside every screen of a study's search sits in a box as large as each
    item's (a desktop and a phone); show_names = false hides the names, the target's too."""
    photo_catalogue(tmp_path / "photos")
    long_names(tmp_path / "photos")
    for show in (True, False):
        file = tmp_path / f"study-{show}.toml"
        file.write_text(
            'catalogue = "photos"\ntargets = 2\nn_choices = 4\nseed = 2\n'
            f'name = "photos-{str(show).lower()}"\nshow_names = {str(show).lower()}\n'
        )
        study = load_study(file)
        app = create_app(study.catalogue, f"sqlite:///{tmp_path / 's.sqlite'}", study=study)
        with thread_server(app) as base:
            ctx = browser.new_context(**(DESKTOP if device == "desktop" else PHONE))
            page = ctx.new_page()
            page.goto(base + "/study")
            page.click("#agree")
            expect(page.locator("#target-intro")).to_be_visible()
            if show:
                expect(page.locator("#target-name")).to_be_visible()
            else:
                expect(page.locator("#target-name")).to_be_hidden()
            page.click("#begin")
            for _ in range(2):
                # the screen shown and ready for a click (its picks disabled while answering)
                expect(page.locator("#grid .pick").nth(0)).to_be_enabled()
                expect(page.locator("#grid .pick img")).to_have_count(4)
                expect(page.locator("#head-box img")).to_have_count(1)
                assert drawn_alike(page) == 5
                assert len(names_shown(page)) == (5 if show else 0)
                with page.expect_response(lambda r: r.url.endswith("/answer")):
                    page.locator("#grid .pick").nth(0).click()
            ctx.close()


@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_a_study_with_guesses_draws_the_strip_alike_and_refuses_another_guess(
    browser, tmp_path, device
):
    """A study of guesses = 3: every method's screens come with the strip, drawn as the
    items and the target are (names as show_names says); "this is it" on a guess that is
    not the target is refused by the server, the page says why, the search goes on."""
    photo_catalogue(tmp_path / "photos")
    long_names(tmp_path / "photos")
    for show in (True, False):
        file = tmp_path / f"study-{show}.toml"
        file.write_text(
            'catalogue = "photos"\ntargets = 2\nn_choices = 4\nseed = 2\nguesses = 3\n'
            f'name = "strip-{str(show).lower()}"\nshow_names = {str(show).lower()}\n'
        )
        study = load_study(file)
        url = f"sqlite:///{tmp_path / 's.sqlite'}"
        with thread_server(create_app(study.catalogue, url, study=study)) as base:
            ctx = browser.new_context(**(DESKTOP if device == "desktop" else PHONE))
            page = ctx.new_page()
            page.goto(base + "/study")
            page.click("#agree")
            expect(page.locator("#target-intro")).to_be_visible()
            big = page.locator("#target-big")
            expect(big).to_have_attribute("data-item", re.compile(r"^\d+$"))
            target = study.catalogue.names[int(big.get_attribute("data-item"))]
            page.click("#begin")
            for screen in range(2):
                expect(page.locator("#strip-grid .pick img")).to_have_count(3)
                expect(page.locator("#head-box img")).to_have_count(1)
                assert drawn_alike(page) == 8  # the target, 4 items and 3 guesses
                assert len(names_shown(page)) == (8 if show else 0)
                page.wait_for_function(NO_SIDEWAYS_SCROLL)
                strip = page.locator("#strip-grid .card .name").all_text_contents()
                other = next(i for i, n in enumerate(strip) if n != target)
                page.locator("#strip-grid .pick").nth(other).click()
                with page.expect_response(lambda r: r.url.endswith("/answer")) as refused:
                    page.click("#confirm-yes")
                assert refused.value.status == 400
                expect(page.locator("#status")).to_contain_text("among the guesses is not")
                with page.expect_response(lambda r: r.url.endswith("/answer")):
                    page.locator("#grid .pick").nth(0).click()
                expect(page.locator("#progress")).to_contain_text(f"{screen + 1} answered")
            ctx.close()
        rows = [r for r in Store(url).iter_sessions() if r.participant is not None]
        assert rows and all(r.params["guesses"] == 3 for r in rows)

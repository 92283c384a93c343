"""The owner's preview (``/preview``) in a real browser, at a desktop's and a phone's size:
the banner says it is a preview, the admin token comes from the link's fragment (then gone
from the address bar) or the banner's field (a wrong one refused, said on the page), the
participant's pages follow (consent, instructions, every screen, the end with its code), and
the database counts no participant."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from serve.browser.helpers import DESKTOP, PHONE, STUDY, find_by_clicks, target_of
from serve.helpers import ADMIN, collect_toml, thread_server
from tripletsearch.serve import create_app
from tripletsearch.serve.config import ServeConfig
from tripletsearch.serve.store import Store
from tripletsearch.serve.study import load_study

# a browser: run once, not again under the sanitizers (.ci/run)
pytestmark = pytest.mark.once

COLLECT_FILE = collect_toml(
    title="Which colours look alike?",
    catalogue="colours",
    n_choices=3,
    max_queries=5,
    attention=[2],
    instructions="Pick the colour most like the one on top.",
    debrief="Thank you for your answers.",
    completion_code="CQ-PREVIEW",
    seed=None,
)


@pytest.mark.parametrize("device", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_a_collect_preview_from_the_link_to_the_code(browser, tmp_path, device):
    from tripletsearch.serve.collect import load_collect

    (tmp_path / "collect.toml").write_text(COLLECT_FILE)
    cfg = load_collect(tmp_path / "collect.toml")
    url = f"sqlite:///{tmp_path / 'c.sqlite'}"
    with thread_server(
        create_app(cfg.catalogue, url, collect=cfg, config=ServeConfig(admin_token=ADMIN))
    ) as base:
        ctx = browser.new_context(**device)
        page = ctx.new_page()
        page.goto(base + f"/preview#token={ADMIN}")
        banner = page.locator("#preview-banner")
        expect(banner).to_be_visible()
        expect(banner).to_contain_text("Preview")
        expect(banner).to_contain_text("Nothing here is recorded as a participant")
        expect(page).not_to_have_url(re.compile("#|" + re.escape(ADMIN)))  # token off the bar
        expect(page.locator("#consent-text")).to_contain_text("similar")
        page.click("#agree")
        expect(page.locator("#instructions-text")).to_have_text(cfg.instructions)
        page.click("#go")
        for n in range(cfg.max_queries):
            expect(page.locator("#grid .pick")).to_have_count(3)
            expect(page.locator("#progress")).to_have_text(f"query {n + 1} of {cfg.max_queries}")
            expect(banner).to_be_visible()  # on every page
            expect(page.locator("#skip")).to_be_enabled()
            with page.expect_response(lambda r: r.url.endswith("/answer")):
                page.locator("#grid .pick").nth(0).click()
        expect(page.locator("#result")).to_have_text("Thank you for your answers.")
        expect(page.locator("#result-lines")).to_have_text("Your completion code: CQ-PREVIEW")
        kept = page.evaluate("JSON.parse(localStorage.getItem('ts-preview'))")
        assert localstorage_clean(page)
        pid = kept["participant"]["id"]
        # a new preview starts afresh, asking consent again
        page.click("#preview-again")
        expect(page.locator("#consent-text")).to_contain_text("similar")
        ctx.close()
    store = Store(url)
    assert pid.startswith("PREVIEW-")
    assert store.participant_count(cfg.fingerprint) == 0
    assert list(store.iter_participants()) == []
    (session,) = store.participant_sessions(pid)
    assert session.done and session.n_queries == cfg.max_queries
    assert store.participant(pid).code == "CQ-PREVIEW"


def localstorage_clean(page) -> bool:
    """The page keeps the preview apart from a participant of this browser (its own key)
    and never keeps the admin token."""
    keys = page.evaluate("Object.keys(localStorage)")
    stored = page.evaluate("JSON.stringify(localStorage)")
    return keys == ["ts-preview"] and ADMIN not in stored


def test_a_study_preview_with_the_token_typed_in(browser, tmp_path):
    (tmp_path / "study.toml").write_text(STUDY)
    study = load_study(tmp_path / "study.toml")
    url = f"sqlite:///{tmp_path / 's.sqlite'}"
    app = create_app(study.catalogue, url, study=study, config=ServeConfig(admin_token=ADMIN))
    with thread_server(app) as base:
        page = browser.new_page(**DESKTOP)
        page.goto(base + "/preview")
        expect(page.locator("#preview-banner")).to_be_visible()
        page.click("#agree")  # no token yet
        expect(page.locator("#status")).to_contain_text("enter the admin token")
        page.fill("#preview-token", "not the token")
        page.click("#agree")
        expect(page.locator("#status")).to_contain_text("missing or wrong admin token")
        expect(page.locator("#consent")).to_be_visible()  # still there, nothing enrolled
        page.fill("#preview-token", ADMIN)
        page.click("#agree")
        for _ in range(len(study.targets)):
            page.wait_for_selector("#target-intro:not([hidden])")
            page.click("#begin")
            find_by_clicks(page, target_of(page, study), max_screens=40)
        page.wait_for_selector("#done:not([hidden])")
        expect(page.locator("#result")).to_contain_text("Thank you")
        expect(page.locator("#result")).to_contain_text("PREVIEW-")
        page.close()
    store = Store(url)
    assert store.participant_count(study.fingerprint) == 0
    assert list(store.iter_sessions()) == []  # every session there is the preview's

"""Platform links in a real browser, at a desktop's and a phone's size: a Prolific link's
ids are sent at enrolment and kept; the same link in a second browser context resumes the
same participant at the same query (the first context's next answer is refused, said on
the page); a link without the required id is told so on its first page (consent
disabled); an MTurk preview shows the task but never enrols."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from serve.browser.helpers import DESKTOP, PHONE
from serve.helpers import collect_toml, thread_server
from tripletsearch.serve import create_app
from tripletsearch.serve.collect import load_collect
from tripletsearch.serve.store import Store

# a browser: run once, not again under the sanitizers (.ci/run)
pytestmark = pytest.mark.once

KEYS = dict(
    title="Which colours look alike?",
    catalogue="colours",
    n_choices=3,
    max_queries=6,
    instructions="Pick the colour most like the one on top.",
    seed=None,
)
PROLIFIC = 'platform = "prolific"\nrequire_platform_id = true\nstrict_ids = false\n'
LINK = {"PROLIFIC_PID": "5f1a<b>&amp;</b>", "STUDY_ID": "ST-1", "SESSION_ID": "SE-1"}


def serve(tmp_path, head):
    (tmp_path / "collect.toml").write_text(head + collect_toml(**KEYS))
    cfg = load_collect(tmp_path / "collect.toml")
    url = f"sqlite:///{tmp_path / 'c.sqlite'}"
    return cfg, url, thread_server(create_app(cfg.catalogue, url, collect=cfg))


def query(link: dict) -> str:
    from urllib.parse import urlencode

    return "/collect?" + urlencode({**link, "utm_source": "mail"})


def answer(page, n: int):
    for _ in range(n):
        expect(page.locator("#grid .pick")).to_have_count(3)
        with page.expect_response(lambda r: r.url.endswith("/answer")):
            page.locator("#grid .pick").nth(0).click()


@pytest.mark.parametrize("device", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_a_prolific_link_enrols_with_its_ids_and_a_second_browser_resumes(
    browser, tmp_path, device
):
    cfg, url, server = serve(tmp_path, PROLIFIC)
    with server as base:
        one = browser.new_context(**device)
        a = one.new_page()
        a.goto(base + query(LINK))
        expect(a.locator("#agree")).to_be_enabled()
        a.click("#agree")
        a.click("#go")
        answer(a, 2)
        expect(a.locator("#progress")).to_have_text(f"query 3 of {cfg.max_queries}")
        (row,) = Store(url).iter_participants()
        assert row.platform_id == LINK["PROLIFIC_PID"]  # as text, the markup too
        assert json.loads(row.platform_params) == LINK  # utm_source: not the platform's
        # the same link in another browser: the same participant, at the same query
        two = browser.new_context(**device)
        b = two.new_page()
        b.goto(base + query(LINK))
        b.click("#agree")  # (resumed: no instructions again, on where they were)
        expect(b.locator("#progress")).to_have_text(f"query 3 of {cfg.max_queries}")
        expect(b.locator("#instructions")).to_be_hidden()
        kept = b.evaluate("JSON.parse(localStorage.getItem('ts-collect'))")["participant"]
        assert kept["id"] == row.id and kept["platformId"] == LINK["PROLIFIC_PID"]
        # the first browser's token is no longer valid: its next answer is refused, and
        # the page says where the part went on, its screen gone (nothing to click)
        a.locator("#grid .pick").nth(0).click()
        expect(a.locator("#elsewhere")).to_be_visible()
        expect(a.locator("#elsewhere-text")).to_contain_text("continued in another window")
        expect(a.locator("#search")).to_be_hidden()
        expect(a.locator("#status")).to_have_text("")
        answer(b, 1)
        expect(b.locator("#progress")).to_have_text(f"query 4 of {cfg.max_queries}")
        # going on in the first window takes the part back, where it was
        a.click("#elsewhere-here")
        expect(a.locator("#progress")).to_have_text(f"query 4 of {cfg.max_queries}")
        answer(a, 1)
        expect(a.locator("#progress")).to_have_text(f"query 5 of {cfg.max_queries}")
        b.locator("#grid .pick").nth(0).click()
        expect(b.locator("#elsewhere")).to_be_visible()
        one.close()
        two.close()
    assert [r.id for r in Store(url).iter_participants()] == [row.id]


@pytest.mark.parametrize("device", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_same_id_from_another_visit_is_told_so_and_takes_nothing(browser, tmp_path, device):
    """The id with another SESSION_ID: a page saying so in plain words (no screen, no
    code); the first browser goes on with its token."""
    cfg, url, server = serve(tmp_path, PROLIFIC)
    with server as base:
        one = browser.new_context(**device)
        a = one.new_page()
        a.goto(base + query(LINK))
        a.click("#agree")
        a.click("#go")
        answer(a, 1)
        two = browser.new_context(**device)
        b = two.new_page()
        b.goto(base + query({**LINK, "SESSION_ID": "SE-OTHER"}))
        b.click("#agree")
        expect(b.locator("#result")).to_contain_text("already taking part from another session")
        expect(b.locator("#result")).to_contain_text("release your earlier participation")
        expect(b.locator("#grid .pick")).to_have_count(0)
        expect(b.locator("#status")).to_have_text("")
        answer(a, 1)  # not revoked
        expect(a.locator("#progress")).to_have_text(f"query 3 of {cfg.max_queries}")
        one.close()
        two.close()
    (row,) = Store(url).iter_participants()
    assert row.refused == 1


@pytest.mark.parametrize("device", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_a_link_without_the_required_id_is_told_so(browser, tmp_path, device):
    _, url, server = serve(tmp_path, PROLIFIC)
    with server as base:
        page = browser.new_page(**device)
        page.goto(base + "/collect?STUDY_ID=ST-1")
        expect(page.locator("#platform-note")).to_have_text(
            "This link has no PROLIFIC_PID: open the study from your prolific account's "
            "link (it carries your id) to take part."
        )
        expect(page.locator("#agree")).to_be_disabled()
        page.close()
    assert list(Store(url).iter_participants()) == []


@pytest.mark.parametrize("device", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_an_mturk_preview_is_shown_but_not_enrolled(browser, tmp_path, device):
    cfg, url, server = serve(tmp_path, 'platform = "mturk"\n')
    with server as base:
        page = browser.new_page(**device)
        page.goto(base + "/collect?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=H1")
        expect(page.locator("#consent-text")).to_have_text(cfg.consent)
        expect(page.locator("#platform-note")).to_contain_text(cfg.instructions)
        expect(page.locator("#agree")).to_be_disabled()
        expect(page.locator("#agree")).to_have_text("Accept the HIT to begin")
        page.close()
    assert list(Store(url).iter_participants()) == []

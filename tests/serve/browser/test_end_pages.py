"""The end screens in a real browser, at a desktop's and a phone's size: a participant who
answers every query sees the finished outcome's code (as text) and its link back; one who
stops taking part sees the withdrawn outcome's code and link; each code recorded."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from serve.browser.helpers import DESKTOP, PHONE
from serve.helpers import answer_all, collect_toml, take_part, thread_server
from tripletsearch.serve import create_app
from tripletsearch.serve.collect import load_collect
from tripletsearch.serve.store import Store

pytestmark = pytest.mark.once  # a browser: run once, not again under the sanitizers

FIN = "https://app.prolific.com/submissions/complete?cc=FIN-1"
WD = "https://example.org/back?stopped=1"
TABLES = (
    f'\n[completion.finished]\ncode = "FIN-1"\nredirect = "{FIN}"\n'
    f'[completion.withdrawn]\ncode = "<b>WD-2</b>"\nredirect = "{WD}"\n'
)
KEYS = dict(title="Alike?", catalogue="colours", n_choices=2, max_queries=4, seed=None)


def serve(tmp_path):
    # (the withdrawn code has markup: shown as text)
    (tmp_path / "collect.toml").write_text(collect_toml(**KEYS) + TABLES)
    cfg = load_collect(tmp_path / "collect.toml")
    url = f"sqlite:///{tmp_path / 'c.sqlite'}"
    return url, thread_server(create_app(cfg.catalogue, url, collect=cfg))


def start(page, base):
    page.goto(base + "/collect")
    page.click("#agree")
    page.click("#go")
    expect(page.locator("#grid .pick")).to_have_count(2)


@pytest.mark.parametrize("device", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_finished_and_the_withdrawn_end_screens(browser, tmp_path, device):
    url, server = serve(tmp_path)
    with server as base:
        done = browser.new_context(**device).new_page()
        start(done, base)
        for _ in range(KEYS["max_queries"]):
            expect(done.locator("#grid .pick")).to_have_count(2)
            with done.expect_response(lambda r: r.url.endswith("/answer")):
                done.locator("#grid .pick").nth(0).click()
        expect(done.locator("#done")).to_be_visible()
        expect(done.locator("#done")).to_have_attribute("data-outcome", "finished")
        expect(done.locator("#result-lines")).to_have_text("Your completion code: FIN-1")
        expect(done.locator("#redirect")).to_be_visible()
        expect(done.locator("#redirect")).to_have_attribute("href", FIN)
        gone = browser.new_context(**device).new_page()
        start(gone, base)
        gone.once("dialog", lambda d: d.accept())
        gone.click("#stop")
        expect(gone.locator("#done")).to_have_attribute("data-outcome", "withdrawn")
        expect(gone.locator("#result-lines")).to_have_text("Your completion code: <b>WD-2</b>")
        expect(gone.locator("#result-lines b")).to_have_count(0)  # text, not markup
        expect(gone.locator("#result")).to_contain_text("stopped taking part")
        expect(gone.locator("#redirect")).to_have_attribute("href", WD)
    codes = sorted((r.code or "") for r in Store(url).iter_participants())
    assert codes == ["<b>WD-2</b>", "FIN-1"]


def first_in_its_search(reply: dict) -> dict:
    """A script's answer: the first item, in the search (``slot``) the reply shows."""
    return {"screen": reply["screen"]["number"], "choice": 0, "slot": reply["slot"]}


def script_clicks_first(base):
    """A participant whose script clicks the first item of 6 screens at once (the API)."""
    import httpx

    with httpx.Client(base_url=base, timeout=30) as c:
        take_part(c, body=first_in_its_search, most=6)


@pytest.mark.parametrize("device", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_a_study_dashboard_lists_outcomes_and_codes(browser, tmp_path, device):
    from serve.helpers import study_toml
    from tripletsearch.serve.config import ServeConfig
    from tripletsearch.serve.study import load_study

    (tmp_path / "study.toml").write_text(study_toml(targets=1) + TABLES)
    s = load_study(tmp_path / "study.toml")
    url = f"sqlite:///{tmp_path / 's.sqlite'}"
    app = create_app(s.catalogue, url, study=s, config=ServeConfig(admin_token="owner"))
    with thread_server(app) as base:
        page = browser.new_context(**device).new_page()
        page.goto(base + "/study")
        page.click("#agree")
        page.click("#begin")
        expect(page.locator("#stop")).to_be_visible()
        page.once("dialog", lambda d: d.accept())
        page.click("#stop")
        expect(page.locator("#done")).to_have_attribute("data-outcome", "withdrawn")
        script_clicks_first(base)
        owner = browser.new_context(**device).new_page()
        owner.goto(base + "/study/dashboard")
        owner.fill("#token", "owner")
        owner.click("#login button")
        rows = owner.locator("#participants tbody tr")
        expect(rows).to_have_count(2)
        row = rows.nth(0)
        expect(row.locator(".outcome")).to_have_text("withdrawn")
        expect(row.locator(".code")).to_have_text("<b>WD-2</b>")
        expect(row.locator(".checks")).to_have_text("")
        # a script clicking the first item at once: flagged by the server's clock, and why
        expect(rows.nth(1).locator(".checks")).to_contain_text("server_time")
        expect(rows.nth(1).locator(".checks")).to_have_attribute("title", re.compile("ms"))
        expect(owner.locator("#summary")).to_contain_text("1 flagged")
        expect(owner.locator("#collect-only")).to_be_hidden()


@pytest.mark.parametrize("device", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_stop_on_a_stale_page_after_finishing_elsewhere_shows_the_finished_end(
    browser, tmp_path, device
):
    """A participant finishes in another tab (the API, with the page's own token), then
    presses "Stop taking part" on the page still showing a screen: refused (409), the page
    shows the finished end screen and its code, and the withdrawn code is never recorded."""
    import httpx

    url, server = serve(tmp_path)
    with server as base:
        page = browser.new_context(**device).new_page()
        start(page, base)
        kept = page.evaluate("JSON.parse(localStorage.getItem('ts-collect'))")["participant"]
        head = {"Authorization": f"Bearer {kept['token']}"}
        path = f"{base}/api/participants/{kept['id']}"
        with httpx.Client(base_url=base, timeout=30) as other:
            reply = answer_all(other, kept["id"], head)
            assert reply["outcome"] == "finished"
            assert other.post(path + "/withdraw", json={}, headers=head).status_code == 409
        page.once("dialog", lambda d: d.accept())
        with page.expect_response(lambda r: r.url.endswith("/withdraw")) as refused:
            page.click("#stop")
        assert refused.value.status == 409
        expect(page.locator("#done")).to_have_attribute("data-outcome", "finished")
        expect(page.locator("#result-lines")).to_have_text("Your completion code: FIN-1")
        expect(page.locator("#redirect")).to_have_attribute("href", FIN)
    codes = [r.code for r in Store(url).iter_participants()]
    assert codes == ["FIN-1"]


@pytest.mark.parametrize("first", ["withdrawn", "finished"])
def test_an_answer_after_the_part_ended_elsewhere_shows_that_end(browser, tmp_path, first):
    """The page still shows a screen while the part ends elsewhere first (a withdraw, or
    every screen answered, through the API with the page's own token): the page's next
    answer is refused (409) and the page shows the end the refusal carries, not an error."""
    import httpx

    url, server = serve(tmp_path)
    with server as base:
        page = browser.new_context(**DESKTOP).new_page()
        start(page, base)
        kept = page.evaluate("JSON.parse(localStorage.getItem('ts-collect'))")["participant"]
        head = {"Authorization": f"Bearer {kept['token']}"}
        path = f"{base}/api/participants/{kept['id']}"
        with httpx.Client(base_url=base, timeout=30) as other:
            if first == "withdrawn":
                assert other.post(path + "/withdraw", json={}, headers=head).status_code == 200
            else:
                answer_all(other, kept["id"], head)
        with page.expect_response(lambda r: r.url.endswith("/answer")) as refused:
            page.locator("#grid .pick").nth(1).click()  # (another answer than the API's)
        assert refused.value.status == 409
        expect(page.locator("#done")).to_have_attribute("data-outcome", first)
        code = "FIN-1" if first == "finished" else "<b>WD-2</b>"
        expect(page.locator("#result-lines")).to_have_text(f"Your completion code: {code}")
        expect(page.locator("#redirect")).to_have_attribute("href", FIN if code == "FIN-1" else WD)
        expect(page.locator("#status")).to_have_text("")
    assert [r.code for r in Store(url).iter_participants()] == [code]


@pytest.mark.parametrize("device", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_a_finished_participant_on_a_new_device_sees_their_end_at_once(browser, tmp_path, device):
    """A Prolific participant who finished opens their link (the same id and SESSION_ID)
    in another browser: their end at once, its code and link back, without consent or
    instructions again; the same id from another visit is asked consent as before."""
    from urllib.parse import urlencode

    head = 'platform = "prolific"\n'
    keys = {**KEYS, "instructions": "Pick the colour most like the one on top."}
    (tmp_path / "collect.toml").write_text(head + collect_toml(**keys) + TABLES)
    cfg = load_collect(tmp_path / "collect.toml")
    url = f"sqlite:///{tmp_path / 'c.sqlite'}"
    link = {"PROLIFIC_PID": "5f1a2b3c4d5e6f7a8b9c0d1e", "STUDY_ID": "S1", "SESSION_ID": "V1"}
    with thread_server(create_app(cfg.catalogue, url, collect=cfg)) as base:
        first = browser.new_context(**device).new_page()
        first.goto(base + "/collect?" + urlencode(link))
        first.click("#agree")
        first.click("#go")
        for _ in range(KEYS["max_queries"]):
            expect(first.locator("#grid .pick")).to_have_count(2)
            with first.expect_response(lambda r: r.url.endswith("/answer")):
                first.locator("#grid .pick").nth(0).click()
        expect(first.locator("#done")).to_have_attribute("data-outcome", "finished")
        again = browser.new_context(**device).new_page()
        again.goto(base + "/collect?" + urlencode(link))
        expect(again.locator("#done")).to_have_attribute("data-outcome", "finished")
        expect(again.locator("#result-lines")).to_have_text("Your completion code: FIN-1")
        expect(again.locator("#redirect")).to_have_attribute("href", FIN)
        expect(again.locator("#consent")).to_be_hidden()
        expect(again.locator("#instructions")).to_be_hidden()
        other = browser.new_context(**device).new_page()
        other.goto(base + "/collect?" + urlencode({**link, "SESSION_ID": "V2"}))
        expect(other.locator("#agree")).to_be_visible()
        expect(other.locator("#done")).to_be_hidden()
    (row,) = Store(url).iter_participants()
    assert (row.code, row.refused) == ("FIN-1", 0)

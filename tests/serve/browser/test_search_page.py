"""The search page in a real browser: finding a named colour and mixing one by clicks, keys
and undo, a reload resuming, a phone, starting over, the end screens, the screen sizes a
catalogue offers, and catalogues of pictures; a screenshot of every screen (the docs'
pictures) goes to test-output/screenshots/screens/."""

from __future__ import annotations

import contextlib
import re
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

from serve.browser.helpers import (
    DESKTOP,
    NO_SIDEWAYS_SCROLL,
    PHONE,
    STUDY,
    answer_keys,
    drawn_alike,
    find_by_clicks,
    photo_catalogue,
    say_this_is_it,
    screen_number,
    session_id,
    shown_lab,
    target_of,
)
from serve.helpers import thread_server
from tripletsearch.colour import hex_to_srgb, srgb_to_lab
from tripletsearch.serve import create_app, demo_catalogue
from tripletsearch.serve.catalogue import Catalogue
from tripletsearch.serve.config import ServeConfig
from tripletsearch.serve.store import Store
from tripletsearch.serve.study import load_study

CAT = demo_catalogue()
LAB = CAT.embedding

# a browser: run once, not again under the sanitizers (.ci/run)
pytestmark = pytest.mark.once


def test_find_a_named_colour_by_clicking(browser, server):
    base, url = server.base, server.url
    page = browser.new_page(viewport={"width": 1100, "height": 800})
    page.goto(base + "/")
    page.click("#find")
    rng = np.random.default_rng(0)
    clicks = []
    for target in rng.choice(CAT.n_items, 3, replace=False):
        if clicks:
            page.click("#again")
            page.click("#find")
        n = find_by_clicks(page, int(target))
        clicks.append(n)
        expect(page.locator("#result")).to_contain_text(f"Found: {CAT.names[target]}")
        # the database holds every click once, in order
        hist = Store(url).history(session_id(page))
        assert [h["number"] for h in hist] == list(range(n))
        assert [h["found"] for h in hist] == [False] * (n - 1) + [True]
    assert max(clicks) <= 25
    page.close()


def test_keys_and_undo(browser, server):
    base, url = server.base, server.url
    page = browser.new_page()
    page.goto(base + "/")
    page.select_option("#n-choices-find", "3")
    page.click("#find")
    expect(page.locator("#grid .pick")).to_have_count(3)
    expect(page.locator("#undo")).to_be_disabled()
    first = page.locator("#grid .card .name").all_inner_texts()
    with page.expect_response(lambda r: r.url.endswith("/answer")):
        page.keyboard.press("2")  # the second item is closest
    expect(page.locator("#progress")).to_contain_text("1 answered")
    with page.expect_response(lambda r: r.url.endswith("/undo")):
        page.keyboard.press("u")
    expect(page.locator("#progress")).to_contain_text("0 answered")
    expect(page.locator("#grid .card .name")).to_have_text(first, use_inner_text=True)  # again
    with page.expect_response(lambda r: r.url.endswith("/answer")):
        page.keyboard.press("0")  # none is closer
    expect(page.locator("#progress")).to_contain_text("1 answered")
    names = page.locator("#grid .card .name").all_inner_texts()
    sent: list[str] = []
    page.on("request", lambda r: sent.append(r.url) if r.url.endswith("/answer") else None)
    page.locator("#grid .pick").nth(1).focus()
    page.keyboard.press("Enter")  # this is it: asks first
    expect(page.locator("#confirm")).to_be_visible()
    expect(page.locator("#confirm-text")).to_contain_text(names[1])
    page.keyboard.press("Enter")  # on "No, keep searching": nothing sent
    expect(page.locator("#confirm")).to_be_hidden()
    expect(page.locator("#prompt")).to_be_focused()
    assert sent == []
    page.locator("#grid .pick").nth(1).focus()
    page.keyboard.press("Enter")
    with page.expect_response(lambda r: r.url.endswith("/answer")):
        page.click("#confirm-yes")
    page.wait_for_selector("#done:not([hidden])")
    expect(page.locator("#result")).to_contain_text(f"Found: {names[1]}")
    hist = Store(url).history(session_id(page))
    assert [(h["kind"], h["choice"], h["found"], h["undone"]) for h in hist] == [
        ("answer", 1, False, True),
        ("undo", None, False, False),
        ("answer", None, False, False),
        ("answer", 1, True, False),
    ]
    page.close()


def test_mix_a_colour_in_40_clicks(browser, server):
    base = server.base
    page = browser.new_page(viewport={"width": 1000, "height": 800})
    page.goto(base + "/")
    page.click("#mix")
    target = srgb_to_lab(np.array([0.85, 0.45, 0.2]))  # a burnt orange
    for _ in range(40):
        page.wait_for_selector("#grid .pick")
        best = int(np.argmin(np.linalg.norm(shown_lab(page) - target, axis=1)))
        before = screen_number(page)
        with page.expect_response(lambda r: r.url.endswith("/answer")):
            page.keyboard.press(str(best + 1))
        expect(page.locator("#progress")).not_to_have_text(before)
    page.keyboard.press("Enter")  # accept the colour: asks first
    expect(page.locator("#confirm-text")).to_have_text("Is this your colour?")
    with page.expect_response(lambda r: r.url.endswith("/answer")):
        page.click("#confirm-yes")
    page.wait_for_selector("#done:not([hidden])")
    expect(page.locator("#result")).not_to_be_empty()
    hexcode = re.search(r"#[0-9a-f]{6}", page.inner_text("#result")).group(0)
    err = float(np.linalg.norm(srgb_to_lab(hex_to_srgb([hexcode]))[0] - target))
    assert err <= 10.0, (hexcode, err)
    page.close()


def test_usable_on_a_phone(browser, server):
    base = server.base
    ctx = browser.new_context(
        viewport={"width": 390, "height": 844},
        device_scale_factor=2,
        is_mobile=True,
        has_touch=True,
    )
    page = ctx.new_page()
    page.goto(base + "/")
    page.tap("#find")
    page.wait_for_selector("#grid .pick")
    # no sideways scrolling; tap targets of at least 44 CSS pixels
    page.wait_for_function(NO_SIDEWAYS_SCROLL)
    for box in (page.locator("#grid .pick").nth(i).bounding_box() for i in range(4)):
        assert box["width"] >= 44 and box["height"] >= 44
    for b in ("#undo", "#skip"):
        assert page.locator(b).bounding_box()["height"] >= 44
    with page.expect_response(lambda r: r.url.endswith("/answer")):
        page.locator("#grid .pick").nth(0).tap()
    expect(page.locator("#progress")).to_contain_text("1 answered")
    ctx.close()


def test_a_picture_catalogue(browser, tmp_path):
    """200 pictures: the page fetches those its screens show, no others."""
    import matplotlib.pyplot as plt

    root = tmp_path / "pictures"
    (root / "img").mkdir(parents=True)
    rng = np.random.default_rng(2)
    rows = ["name,image"]
    n = 200
    for i in range(n):  # pictures: a gradient of a random colour each
        img = np.linspace(0.2, 1.0, 32)[:, None, None] * rng.uniform(size=(1, 1, 3))
        plt.imsave(root / "img" / f"p{i}.png", np.broadcast_to(img, (32, 32, 3)).copy())
        rows.append(f"picture {i},img/p{i}.png")
    (root / "items.csv").write_text("\n".join(rows) + "\n")
    np.save(root / "embedding.npy", rng.normal(size=(n, 2)))
    from tripletsearch.serve import load_catalogue

    app = create_app(load_catalogue(root), f"sqlite:///{tmp_path / 's.sqlite'}")
    with thread_server(app) as base:
        page = browser.new_page()
        fetched: list[str] = []
        page.on(
            "request",
            lambda r: (
                fetched.append(urlsplit(r.url).path)
                if urlsplit(r.url).path.startswith("/images/")
                else None
            ),
        )
        page.goto(base + "/")
        expect(page.locator("#find")).to_be_visible()  # the start screen is up
        expect(page.locator("#mode-mix")).to_be_hidden()  # no colours: find only
        page.click("#find")
        imgs = page.locator("#grid .pick img")
        expect(imgs).to_have_count(4)
        for i in range(4):  # every picture loaded from the catalogue folder (waited on:
            # a picture loads after its screen is drawn)
            expect(imgs.nth(i)).to_have_attribute("src", re.compile(r"^/images/\d+$"))
            expect(imgs.nth(i)).to_have_js_property("complete", True)
            expect(imgs.nth(i)).to_have_js_property("naturalWidth", 32)
        shown = {imgs.nth(i).get_attribute("src") for i in range(4)}
        with page.expect_response(lambda r: r.url.endswith("/answer")):
            page.keyboard.press("1")
        expect(page.locator("#progress")).to_contain_text("1 answered")
        for i in range(4):
            expect(imgs.nth(i)).to_have_js_property("complete", True)
            expect(imgs.nth(i)).to_have_js_property("naturalWidth", 32)
            shown.add(imgs.nth(i).get_attribute("src"))
        page.close()
    assert set(fetched) == shown and len(fetched) <= 8  # two screens' pictures, no more


def record_catalogue_requests(page) -> list[dict]:
    """The query of every /api/catalogue request the page makes (appended as they go)."""
    seen: list[dict] = []

    def record(request) -> None:
        url = urlsplit(request.url)
        if url.path == "/api/catalogue":
            seen.append(parse_qs(url.query, keep_blank_values=True))

    page.on("request", record)
    return seen


def size_choices(page, mode: str) -> tuple[list[str], str]:
    """The screen sizes offered for ``mode`` and the one selected."""
    select = page.locator(f"#n-choices-{mode}")
    return select.locator("option").all_inner_texts(), select.input_value()


def test_screen_sizes_from_the_server_and_no_page_of_items(browser, tmp_path):
    """A catalogue of 3 colours: find offers 2 or 3 per screen (3 selected), mix its 2
    swatches; the page asks the catalogue for its metadata only (limit=0)."""
    three = Catalogue(
        names=("red", "green", "blue"),
        embedding=srgb_to_lab(hex_to_srgb(["#e50000", "#15b01a", "#0343df"])),
        hex=("#e50000", "#15b01a", "#0343df"),
        title="Three colours",
    )
    with thread_server(create_app(three, f"sqlite:///{tmp_path / 's.sqlite'}")) as base:
        page = browser.new_page()
        requests = record_catalogue_requests(page)
        errors: list = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(base + "/")
        expect(page.locator("#title")).to_have_text("Three colours")
        assert size_choices(page, "find") == (["2", "3"], "3")
        expect(page.locator("#mode-mix")).to_be_visible()
        expect(page.locator("#n-choices-mix")).to_have_count(0)  # one size: no choice
        expect(page.locator("#mode-mix")).to_contain_text("two swatches per screen")
        page.select_option("#n-choices-find", "2")
        with page.expect_response(lambda r: r.url.endswith("/api/sessions")) as created:
            page.click("#find")
        assert created.value.request.post_data_json == {"mode": "find", "n_choices": 2}
        expect(page.locator("#grid .pick")).to_have_count(2)
        say_this_is_it(page, 0)
        expect(page.locator("#result")).to_contain_text("Found: ")
        page.close()
    assert requests == [{"limit": ["0"]}]
    assert errors == []  # the modules loaded under the CSP, nothing thrown


def test_a_whole_search_reads_no_page_of_items(browser, server):
    """The demo catalogue (949 colours): find offers its 2 to 8 per screen, 4 selected; start,
    answer, undo, finish and again load the catalogue's metadata only."""
    base = server.base
    page = browser.new_page()
    requests = record_catalogue_requests(page)
    page.goto(base + "/")
    expect(page.locator("#find")).to_have_text("Find a named colour")
    assert size_choices(page, "find") == ([str(n) for n in range(2, 9)], "4")
    with page.expect_response(lambda r: r.url.endswith("/api/sessions")) as created:
        page.click("#find")
    assert created.value.request.post_data_json == {"mode": "find", "n_choices": 4}
    expect(page.locator("#grid .pick")).to_have_count(4)
    answer_keys(page, "12")  # (finding by clicks: test_find_a_named_colour_by_clicking)
    with page.expect_response(lambda r: r.url.endswith("/undo")):
        page.keyboard.press("u")
    expect(page.locator("#progress")).to_contain_text("1 answered")
    names = page.locator("#grid .card .name").all_inner_texts()
    say_this_is_it(page, 0)
    expect(page.locator("#result")).to_contain_text(f"Found: {names[0]}")
    page.click("#again")
    expect(page.locator("#find")).to_be_visible()
    page.close()
    assert requests == [{"limit": ["0"]}, {"limit": ["0"]}]


def test_a_reload_resumes_the_session(browser, server):
    base, url = server.base, server.url
    page = browser.new_page()
    page.goto(base + "/")
    page.select_option("#n-choices-find", "3")
    page.click("#find")
    expect(page.locator("#grid .pick")).to_have_count(3)
    with page.expect_response(lambda r: r.url.endswith("/answer")):
        page.keyboard.press("1")
    expect(page.locator("#progress")).to_contain_text("1 answered")
    names = page.locator("#grid .card .name").all_inner_texts()
    sid = session_id(page)
    page.reload()
    expect(page.locator("#progress")).to_have_text("screen 2 · 1 answered")
    expect(page.locator("#grid .card .name")).to_have_text(names, use_inner_text=True)
    expect(page.locator("#skip")).to_be_visible()
    expect(page.locator("#mixbar")).to_be_hidden()
    assert session_id(page) == sid
    with page.expect_response(lambda r: r.url.endswith("/undo")):
        page.keyboard.press("u")
    expect(page.locator("#progress")).to_contain_text("0 answered")
    assert [h["kind"] for h in Store(url).history(sid)] == ["answer", "undo"]
    # a mix session resumes as one: its swatches, its colour so far, "this is my colour"
    page.evaluate("localStorage.clear()")
    page.reload()
    page.click("#mix")
    expect(page.locator("#grid .pick")).to_have_count(2)
    with page.expect_response(lambda r: r.url.endswith("/answer")):
        page.keyboard.press("2")
    expect(page.locator("#progress")).to_contain_text("1 answered")
    page.reload()
    expect(page.locator("#progress")).to_have_text("screen 2 · 1 answered")
    expect(page.locator("#mixbar")).to_be_visible()
    expect(page.locator("#accept")).to_be_visible()
    expect(page.locator("#skip")).to_be_hidden()
    page.click("#accept")
    with page.expect_response(lambda r: r.url.endswith("/answer")):
        page.click("#confirm-yes")
    expect(page.locator("#result")).to_contain_text("Your colour: #")
    page.close()


def inside(inner, outer, slack=1.0) -> bool:
    return (
        inner["x"] >= outer["x"] - slack
        and inner["y"] >= outer["y"] - slack
        and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + slack
        and inner["y"] + inner["height"] <= outer["y"] + outer["height"] + slack
    )


def pictures_fit(page, box_selector: str) -> int:
    """Every picture in the boxes of ``box_selector`` lies inside its box and is contained
    (never cropped); the number checked."""
    boxes = page.locator(box_selector)
    for i in range(boxes.count()):
        box, img = boxes.nth(i), boxes.nth(i).locator("img")
        expect(img).to_have_js_property("complete", True)
        expect(img).not_to_have_js_property("naturalWidth", 0)  # decoded, so laid out
        assert inside(img.bounding_box(), box.bounding_box()), (box_selector, i)
        assert img.evaluate("e => getComputedStyle(e).objectFit") == "contain"
    return boxes.count()


def visible_on_top(page, selector: str) -> bool:
    """The element is inside the viewport and nothing covers its centre."""
    return page.evaluate(
        """sel => { const e = document.querySelector(sel), r = e.getBoundingClientRect();
        const top = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
        return r.top >= 0 && r.bottom <= innerHeight && (top === e || e.contains(top)); }""",
        selector,
    )


@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_pictures_of_any_size_fit_their_boxes(browser, tmp_path, device):
    """Photos from 48x64 to 1200x300: contained in the swatches, the target boxes and the
    end screen, on desktop and phone; the study's target visible on every search screen."""
    from tripletsearch.serve import load_catalogue

    root = photo_catalogue(tmp_path / "photos")
    study_file = tmp_path / "study.toml"
    study_file.write_text(
        f'catalogue = "{root}"\nmethods = ["gamma-ckl"]\ntargets = 2\nn_choices = 4\n'
        "max_queries = 3\n"
    )
    study = load_study(study_file)
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    ctx = browser.new_context(**(DESKTOP if device == "desktop" else PHONE))
    with thread_server(create_app(load_catalogue(root), db)) as base:
        page = ctx.new_page()
        page.goto(base + "/")
        page.click("#find")
        expect(page.locator("#grid .pick img")).to_have_count(4)
        assert pictures_fit(page, "#grid .pick") == 4
        assert drawn_alike(page) == 4  # every picture in a box of one size, centred
        page.locator("#grid .card .found").nth(0).click()
        assert pictures_fit(page, "#confirm-swatch") == 1
        assert drawn_alike(page) == 5  # the item asked about: as large as the others
        with page.expect_response(lambda r: r.url.endswith("/answer")):
            page.click("#confirm-yes")
        expect(page.locator("#done")).to_be_visible()
        assert pictures_fit(page, "#result-swatch") == 1
    with thread_server(create_app(study.catalogue, db, study=study)) as base:
        page = ctx.new_page()
        page.goto(base + "/study")
        page.click("#agree")
        expect(page.locator("#target-intro")).to_be_visible()
        assert pictures_fit(page, "#target-big") == 1
        page.click("#begin")
        for screen in range(3):
            # the screen shown (its pictures loaded first: the last one's stays meanwhile)
            expect(page.locator("#progress")).to_contain_text(f"screen {screen + 1} ·")
            expect(page.locator("#grid .pick")).to_have_count(4)
            assert pictures_fit(page, "#head-box") == 1 and pictures_fit(page, "#grid .pick") == 4
            assert visible_on_top(page, "#head-box"), screen
            assert drawn_alike(page) == 5  # the target as large as the items
            if device == "phone":  # no keys on a phone
                expect(page.locator("#keys")).to_be_hidden()
            else:
                expect(page.locator("#keys")).to_be_visible()
            with page.expect_response(lambda r: r.url.endswith("/answer")):
                page.locator("#grid .pick").nth(0).click()
    ctx.close()


def left_sessions(url) -> list[tuple[bool, dict]]:
    return [(s.done, s.result) for s in Store(url).iter_sessions()]


def test_start_over_change_mode_and_back_leave_the_search(browser, tmp_path):
    """Each way out records the search as left (done, never found) and none as found; the
    browser's Back returns to the start page."""
    url = f"sqlite:///{tmp_path / 's.sqlite'}"
    with thread_server(create_app(CAT, url)) as base:
        page = browser.new_page()
        asked: list[str] = []
        answer = {"accept": False}

        def on_dialog(dialog):  # the page asks before it discards a search
            asked.append(dialog.message)
            dialog.accept() if answer["accept"] else dialog.dismiss()

        page.on("dialog", on_dialog)
        page.goto(base + "/")
        page.click("#find")
        expect(page.locator("#grid .pick")).to_have_count(4)
        answer_keys(page, "1")
        first = session_id(page)
        # declined: Start over and Back leave the search as it is
        page.click("#start-over")
        page.go_back()
        expect(page.locator("#progress")).to_have_text("screen 2 · 1 answered")
        assert session_id(page) == first and len(asked) == 2 and "Leave this search?" in asked[0]
        assert left_sessions(url) == [(False, None)]
        answer["accept"] = True
        with page.expect_response(lambda r: r.url.endswith("/api/sessions")):
            page.click("#start-over")
        expect(page.locator("#progress")).to_have_text("screen 1 · 0 answered")
        expect(page.locator("#grid .pick")).to_have_count(4)
        page.wait_for_function(  # the new search's, kept for a reload
            "first => JSON.parse(localStorage.getItem('ts-search'))?.session?.id !== first",
            arg=first,
        )
        assert session_id(page) != first
        answer_keys(page, "2")
        with page.expect_response(lambda r: r.url.endswith("/leave")):
            page.go_back()  # the browser's Back
        expect(page.locator("#start")).to_be_visible()
        expect(page.locator("#progress")).to_have_text("")
        page.click("#mix")
        expect(page.locator("#grid .pick")).to_have_count(2)
        with page.expect_response(lambda r: r.url.endswith("/leave")):
            page.click("#change-mode")
        expect(page.locator("#start")).to_be_visible()
        page.reload()  # nothing to resume
        expect(page.locator("#start")).to_be_visible()
        page.close()
    left = left_sessions(url)
    assert len(left) == 3
    assert all(
        done and res == {"target": None, "left": True, "reason": "left"} for done, res in left
    )


def trail_hexes(page) -> list[str]:
    rgbs = page.eval_on_selector_all("#trail span", "els => els.map(e => e.style.background)")
    return ["#" + "".join(f"{int(v):02x}" for v in re.findall(r"\d+", c)[:3]) for c in rgbs]


def drawn_trail(page, want: list[str]) -> list[str]:
    """The trail the page draws, once it is ``want`` (waited on, at most 10 s: then as it is)."""
    hexes = (
        "[...document.querySelectorAll('#trail span')].map(e => '#' + (e.style.background"
        ".match(/\\d+/g) || []).slice(0, 3).map(v => (+v).toString(16).padStart(2, '0'))"
        ".join(''))"
    )
    same = f"want => JSON.stringify({hexes}) === JSON.stringify(want)"
    with contextlib.suppress(PlaywrightTimeout):
        page.wait_for_function(same, arg=want, timeout=10_000)
    return trail_hexes(page)


def server_trail(page, base) -> list[str]:
    """The trail the server's history gives: the estimates of the screens whose answers
    count, then the current screen's, each change once."""
    s = page.evaluate("JSON.parse(localStorage.getItem('ts-search')).session")
    got = page.request.get(
        f"{base}/api/sessions/{s['id']}", headers={"Authorization": "Bearer " + s["token"]}
    ).json()
    hexes = [
        h["shown"]["estimate"]["hex"]
        for h in got["history"]
        if h["kind"] == "answer" and not h["undone"]
    ] + [got["screen"]["estimate"]["hex"]]
    return [h for i, h in enumerate(hexes) if i == 0 or hexes[i - 1] != h]


def test_undo_and_reload_keep_the_header_and_the_mix_trail(browser, server):
    base = server.base
    page = browser.new_page()
    page.goto(base + "/")
    page.click("#mix")
    expect(page.locator("#grid .pick")).to_have_count(2)
    answer_keys(page, "12121")
    expect(page.locator("#progress")).to_have_text("screen 6 · 5 answered")
    assert drawn_trail(page, want := server_trail(page, base)) == want
    for left in (4, 3):
        with page.expect_response(lambda r: r.url.endswith("/undo")):
            page.click("#undo")
        expect(page.locator("#progress")).to_have_text(f"screen {left + 1} · {left} answered")
        expect(page.locator("#prompt")).to_be_focused()
        expect(page.locator("#announce")).to_contain_text("Undone. Screen")
        assert drawn_trail(page, want := server_trail(page, base)) == want
    page.reload()
    expect(page.locator("#progress")).to_have_text("screen 4 · 3 answered")
    assert drawn_trail(page, want := server_trail(page, base)) == want and len(want) >= 2
    page.close()


def test_focus_announcements_and_the_acknowledged_click(browser, server):
    base = server.base
    page = browser.new_page(**DESKTOP)
    page.goto(base + "/")
    page.click("#find")
    expect(page.locator("#grid .pick")).to_have_count(4)
    # nothing picked by a stray Enter: the focus is on the prompt, not on an item
    expect(page.locator("#prompt")).to_be_focused()
    expect(page.locator("#announce")).to_have_text(
        "Screen 1. Pick what is closest to what you are looking for."
    )
    page.keyboard.press("Enter")
    expect(page.locator("#confirm")).to_be_hidden()
    page.evaluate(
        """() => { window.chosen = [];
        new MutationObserver(() => { if (document.querySelector('#grid .pick.chosen'))
          window.chosen.push(document.querySelector('#grid .pick.chosen').dataset.index); })
        .observe(document.getElementById('grid'), {attributes: true, subtree: true}); }"""
    )
    with page.expect_response(lambda r: r.url.endswith("/answer")):
        page.locator("#grid .pick").nth(2).click()
    expect(page.locator("#announce")).to_contain_text("Answer recorded. Screen 2.")
    assert page.evaluate("window.chosen")[:1] == ["2"]  # the click was marked at once
    expect(page.locator("#prompt")).to_be_focused()
    expect(page.locator("#grid")).to_have_class(re.compile(r"(^|\s)fresh(\s|$)"))
    page.close()


def test_phone_controls_are_44_pixels_and_keys_are_not_shown(browser, server):
    base = server.base
    ctx = browser.new_context(**PHONE)
    page = ctx.new_page()
    page.goto(base + "/")
    sel = page.locator("#n-choices-find").bounding_box()
    assert sel["width"] >= 44 and sel["height"] >= 44
    page.tap("#find")
    expect(page.locator("#grid .pick")).to_have_count(4)
    expect(page.locator("#keys")).to_be_hidden()
    controls = ["#undo", "#skip", "#start-over", "#change-mode"] + [
        f"#grid .card .found >> nth={i}" for i in range(4)
    ]
    for c in controls:
        box = page.locator(c).bounding_box()
        assert box["width"] >= 44 and box["height"] >= 44, c
    # "this is it" is not flush against the next swatch
    found = page.locator("#grid .card .found").nth(0).bounding_box()
    below = page.locator("#grid .pick").nth(2).bounding_box()
    assert below["y"] - (found["y"] + found["height"]) >= 12
    sent: list[str] = []
    page.on("request", lambda r: sent.append(r.url) if r.url.endswith("/answer") else None)
    page.locator("#grid .card .found").nth(0).tap()  # a mis-tap on "This is it"
    for c in ("#confirm-yes", "#confirm-no"):
        box = page.locator(c).bounding_box()
        assert box["width"] >= 44 and box["height"] >= 44, c
    page.tap("#confirm-no")  # ... taken back: nothing sent, the search goes on
    expect(page.locator("#confirm")).to_be_hidden()
    expect(page.locator("#grid .pick")).to_have_count(4)
    assert sent == []
    ctx.close()


def test_end_screens_give_the_colour_and_copy_it(browser, server):
    base = server.base
    ctx = browser.new_context(**DESKTOP)
    ctx.grant_permissions(["clipboard-read", "clipboard-write"], origin=base)
    page = ctx.new_page()
    page.goto(base + "/")
    page.click("#mix")
    expect(page.locator("#grid .pick")).to_have_count(2)
    answer_keys(page, "1212")
    page.click("#accept")
    with page.expect_response(lambda r: r.url.endswith("/answer")):
        page.click("#confirm-yes")
    expect(page.locator("#done")).to_be_visible()
    lines = page.locator("#result-lines li").all_inner_texts()
    hexcode = re.search(r"#[0-9a-f]{6}", page.inner_text("#result")).group(0)
    rgb = [int(hexcode[i : i + 2], 16) for i in (1, 3, 5)]
    assert lines[0] == f"Hex {hexcode}" and lines[1] == "RGB " + ", ".join(map(str, rgb))
    lab = [float(v) for v in re.findall(r"-?\d+\.\d", lines[2])]
    assert lines[2].startswith("CIELAB: L* ") and len(lab) == 3
    assert np.allclose(lab, srgb_to_lab(hex_to_srgb([hexcode]))[0], atol=0.6)
    nearest = CAT.names[int(np.argmin(np.linalg.norm(LAB - np.array(lab), axis=1)))]
    assert lines[3].startswith(f"Nearest named colour: {nearest} (#")
    page.click("#copy")
    expect(page.locator("#copy")).to_have_text(f"Copied {hexcode}")
    assert page.evaluate("navigator.clipboard.readText()") == hexcode
    # find: the hex and RGB of the item found
    page.click("#again")
    page.click("#find")
    expect(page.locator("#grid .pick")).to_have_count(4)
    names = page.locator("#grid .card .name").all_inner_texts()
    say_this_is_it(page, 0)
    item = CAT.names.index(names[0])
    expect(page.locator("#result")).to_have_text(f"Found: {names[0]} after 1 screen.")
    lines = page.locator("#result-lines li").all_inner_texts()
    assert lines[0] == f"Hex {CAT.hex[item]}" and lines[1].startswith("RGB ")
    # its CIELAB, as the library converts its hex (the demo's embedding: the same colour)
    lab = [float(v) for v in re.findall(r"-?\d+\.\d", lines[2])]
    assert lines[2].startswith("CIELAB: L* ") and np.allclose(lab, LAB[item], atol=0.051)
    ctx.close()


@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_every_screen_at_both_sizes(browser, tmp_path, shots, device):
    """Walks every screen of the page (start, find, its confirmation and end, mix and its
    end, find with a strip of guesses, a study's consent, target, search and thanks) and
    saves each, at CSS pixels, to test-output/screenshots/screens/ (the docs' pictures of
    the page come from there)."""
    out = shots / "screens"
    out.mkdir(exist_ok=True)

    def shot(page, name: str) -> None:
        page.screenshot(path=str(out / f"{name}-{device}.png"), scale="css", animations="disabled")

    ctx = browser.new_context(**(DESKTOP if device == "desktop" else PHONE))
    with thread_server(create_app(CAT, f"sqlite:///{tmp_path / 'a.sqlite'}")) as base:
        page = ctx.new_page()
        page.goto(base + "/")
        expect(page.locator("#find")).to_be_visible()
        shot(page, "start")
        page.click("#find")
        expect(page.locator("#grid .pick")).to_have_count(4)
        answer_keys(page, "2")
        shot(page, "find")
        page.locator("#grid .card .found").nth(1).click()
        expect(page.locator("#confirm")).to_be_visible()
        shot(page, "find-confirm")
        with page.expect_response(lambda r: r.url.endswith("/answer")):
            page.click("#confirm-yes")
        expect(page.locator("#result")).to_contain_text("Found: ")
        shot(page, "find-end")
        page.click("#again")
        page.click("#mix")
        expect(page.locator("#grid .pick")).to_have_count(2)
        answer_keys(page, "12211221")
        shot(page, "mix")
        page.click("#accept")
        with page.expect_response(lambda r: r.url.endswith("/answer")):
            page.click("#confirm-yes")
        expect(page.locator("#result")).to_contain_text("Your colour: ")
        shot(page, "mix-end")
    with thread_server(
        create_app(CAT, f"sqlite:///{tmp_path / 'g.sqlite'}", config=ServeConfig(guesses=4))
    ) as base:
        page = ctx.new_page()
        page.goto(base + "/")
        page.click("#find")
        expect(page.locator("#strip-grid .pick")).to_have_count(4)
        answer_keys(page, "2")
        shot(page, "find-strip")
    (tmp_path / "study.toml").write_text(
        STUDY.replace("targets = 3", "targets = 1") + 'completion_code = "7KQ2-XF"\n'
    )
    study = load_study(tmp_path / "study.toml")
    with thread_server(
        create_app(study.catalogue, f"sqlite:///{tmp_path / 'b.sqlite'}", study=study)
    ) as base:
        page = ctx.new_page()
        page.goto(base + "/study")
        expect(page.locator("#consent")).to_be_visible()
        shot(page, "study-consent")
        page.click("#agree")
        expect(page.locator("#target-intro")).to_be_visible()
        target = target_of(page, study)
        shot(page, "study-target")
        page.click("#begin")
        expect(page.locator("#grid .pick")).to_have_count(4)
        shot(page, "study-search")
        find_by_clicks(page, target, max_screens=40)
        expect(page.locator("#result")).to_contain_text("Thank you")
        shot(page, "study-thanks")
    ctx.close()
    assert len(list(out.glob(f"*-{device}.png"))) == 11


@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_the_strip_of_guesses(browser, tmp_path, device):
    """A server offering 4 guesses: the strip under the screen ("Is it one of these?"),
    its pictures drawn as the screen's (own boxes of one size, names as the catalogue
    says), within the page's width on a phone; a click on a guess asks "Yes, this is it"
    with its picture, and yes finds it; a pass-over is stored with each answer."""
    from tripletsearch.serve import load_catalogue

    root = photo_catalogue(tmp_path / "photos")
    cat = load_catalogue(root)
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    ctx = browser.new_context(**(DESKTOP if device == "desktop" else PHONE))
    with thread_server(create_app(cat, db, config=ServeConfig(guesses=4))) as base:
        page = ctx.new_page()
        page.goto(base + "/")
        page.click("#find")
        for screen in range(2):
            expect(page.locator("#strip-grid .pick img")).to_have_count(4)
            expect(page.locator("#strip-title")).to_have_text("Is it one of these?")
            assert pictures_fit(page, "#strip-grid .pick") == 4
            assert drawn_alike(page) == 8  # the screen's 4 and the strip's 4, one size
            names = page.locator("#strip-grid .card .name").all_inner_texts()
            assert all(n in cat.names for n in names) and len(set(names)) == 4
            expect(page.locator("#strip-grid .key")).to_have_count(0)  # no digit picks a guess
            under = page.locator("#strip").bounding_box()["y"]
            grid = page.locator("#grid").bounding_box()
            assert under >= grid["y"] + grid["height"]  # under the screen
            page.wait_for_function(NO_SIDEWAYS_SCROLL)
            if device == "phone":  # the screen in one row, the strip in one, no scrolling
                tops = page.eval_on_selector_all(
                    "#grid .pick, #strip-grid .pick",
                    "els => els.map(e => Math.round(e.getBoundingClientRect().top))",
                )
                bottom = page.eval_on_selector_all(
                    "#strip-grid .pick", "els => els.map(e => e.getBoundingClientRect().bottom)"
                )
                assert len(set(tops[:4])) == 1 and len(set(tops[4:])) == 1, tops
                assert max(bottom) <= PHONE["viewport"]["height"], bottom
            if screen == 0:
                with page.expect_response(lambda r: r.url.endswith("/answer")):
                    page.locator("#grid .pick").nth(1).click()  # the strip passed over
                expect(page.locator("#progress")).to_contain_text("1 answered")
        guess = page.locator("#strip-grid .pick").nth(2)
        guess.scroll_into_view_if_needed()
        assert guess.bounding_box()["width"] >= 44  # a tap target on a phone too
        guess.click()
        expect(page.locator("#confirm")).to_be_visible()
        expect(page.locator("#confirm-yes")).to_have_text("Yes, this is it")
        expect(page.locator("#confirm-text")).to_contain_text(names[2])
        assert pictures_fit(page, "#confirm-swatch") == 1
        with page.expect_response(lambda r: r.url.endswith("/answer")):
            page.click("#confirm-yes")
        expect(page.locator("#result")).to_have_text(f"Found: {names[2]} after 2 screens.")
    store = Store(db)
    (row,) = store.iter_sessions()
    hist = store.history(row.id)
    assert [h["choice"] for h in hist] == [1, 4 + 2] and hist[-1]["found"]
    assert all(len(h["query"]["offered"]) == 4 for h in hist)
    assert row.result["name"] == names[2]
    ctx.close()

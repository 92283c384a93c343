"""The page in a real browser: Debian's chromium driven by Playwright (no browser
download: the system binary). Scripted people look at the colours the page shows and
click the one closest to their target in CIELAB; screenshots of each mode go to
test-output/screenshots/."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest
from playwright.sync_api import expect
from serving import ServeProcess, thread_server

from tripletsearch.serve import create_app, demo_catalogue
from tripletsearch.serve.catalogue import Catalogue
from tripletsearch.serve.colour import hex_to_srgb, srgb_to_lab
from tripletsearch.serve.store import Store
from tripletsearch.serve.study import load_study

CAT = demo_catalogue()
LAB = CAT.embedding


def chromium() -> str | None:
    return os.environ.get("TRIPLETSEARCH_CHROMIUM") or next(
        (p for p in map(shutil.which, ("chromium", "chromium-browser")) if p), None
    )


pytestmark = [
    pytest.mark.once,
    pytest.mark.skipif(
        chromium() is None and not os.environ.get("TRIPLETSEARCH_REQUIRE_BROWSER"),
        reason="no chromium (Debian: apt-get install chromium)",
    ),
]


@contextlib.contextmanager
def _without_preload() -> Iterator[None]:
    """The browser is not ours to sanitize: start it without the runtime CI preloads."""
    saved = {k: os.environ.pop(k) for k in ("LD_PRELOAD", "ASAN_OPTIONS") if k in os.environ}
    try:
        yield
    finally:
        os.environ.update(saved)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with _without_preload():
        pw = sync_playwright().start()
        b = pw.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
    yield b
    b.close()
    pw.stop()


@pytest.fixture(scope="module")
def shots(request):
    d = request.config.rootpath / "test-output" / "screenshots"
    d.mkdir(parents=True, exist_ok=True)
    return d


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    url = f"sqlite:///{tmp_path_factory.mktemp('db') / 's.sqlite'}"
    with thread_server(create_app(CAT, url)) as base:
        yield base, url


def shown_lab(page) -> np.ndarray:
    """CIELAB of the swatches on the screen, from the colours the browser renders."""
    rgbs = page.eval_on_selector_all(
        "#grid .pick", "els => els.map(e => getComputedStyle(e).backgroundColor)"
    )
    vals = [[int(v) / 255 for v in re.findall(r"\d+", c)[:3]] for c in rgbs]
    return srgb_to_lab(np.array(vals))


def screen_number(page) -> str:
    return page.inner_text("#progress")


def session_id(page, key="ts-search") -> str:
    return page.evaluate(f"JSON.parse(localStorage.getItem('{key}')).session.id")


def find_by_clicks(page, target: int, max_screens: int = 25) -> int:
    """Click the shown swatch closest to the target in CIELAB until the target is shown,
    then "This is it"; the number of clicks."""
    for clicks in range(1, max_screens + 1):
        page.wait_for_selector("#grid .pick")
        names = page.locator("#grid .card .name").all_inner_texts()
        if CAT.names[target] in names:
            with page.expect_response(lambda r: r.url.endswith("/answer")):
                page.locator("#grid .card .found").nth(names.index(CAT.names[target])).click()
            page.wait_for_selector("#search[hidden]", state="attached")
            return clicks
        best = int(np.argmin(np.linalg.norm(shown_lab(page) - LAB[target], axis=1)))
        before = screen_number(page)
        with page.expect_response(lambda r: r.url.endswith("/answer")):
            page.locator("#grid .pick").nth(best).click()
        expect(page.locator("#progress")).not_to_have_text(before)
    raise AssertionError(f"not found in {max_screens} screens")


def test_find_a_named_colour_by_clicking(browser, server, shots):
    base, url = server
    page = browser.new_page(viewport={"width": 1100, "height": 800})
    page.goto(base + "/")
    page.click("#find")
    rng = np.random.default_rng(0)
    clicks = []
    for target in rng.choice(CAT.n_items, 3, replace=False):
        if clicks:
            page.click("#again")
            page.click("#find")
        if not clicks:
            page.screenshot(path=str(shots / "find.png"))
        n = find_by_clicks(page, int(target))
        clicks.append(n)
        expect(page.locator("#result")).not_to_be_empty()
        assert f"Found: {CAT.names[target]}" in page.inner_text("#result")
        # the database holds every click once, in order
        hist = Store(url).history(session_id(page))
        assert [h["number"] for h in hist] == list(range(n))
        assert [h["found"] for h in hist] == [False] * (n - 1) + [True]
    assert max(clicks) <= 25
    page.close()


def test_keys_and_undo(browser, server):
    base, url = server
    page = browser.new_page()
    page.goto(base + "/")
    page.select_option("#n-choices-find", "3")
    page.click("#find")
    page.wait_for_selector("#grid .pick")
    assert page.locator("#grid .pick").count() == 3
    assert page.is_disabled("#undo")
    first = page.locator("#grid .card .name").all_inner_texts()
    with page.expect_response(lambda r: r.url.endswith("/answer")):
        page.keyboard.press("2")  # the second item is closest
    expect(page.locator("#progress")).to_contain_text("1 answered")
    with page.expect_response(lambda r: r.url.endswith("/undo")):
        page.keyboard.press("u")
    expect(page.locator("#progress")).to_contain_text("0 answered")
    assert page.locator("#grid .card .name").all_inner_texts() == first  # shown again
    with page.expect_response(lambda r: r.url.endswith("/answer")):
        page.keyboard.press("0")  # none is closer
    expect(page.locator("#progress")).to_contain_text("1 answered")
    names = page.locator("#grid .card .name").all_inner_texts()
    page.locator("#grid .pick").nth(1).focus()
    with page.expect_response(lambda r: r.url.endswith("/answer")):
        page.keyboard.press("Enter")  # this is it
    page.wait_for_selector("#done:not([hidden])")
    expect(page.locator("#result")).not_to_be_empty()
    assert f"Found: {names[1]}" in page.inner_text("#result")
    hist = Store(url).history(session_id(page))
    assert [(h["kind"], h["choice"], h["found"], h["undone"]) for h in hist] == [
        ("answer", 1, False, True),
        ("undo", None, False, False),
        ("answer", None, False, False),
        ("answer", 1, True, False),
    ]
    page.close()


def test_mix_a_colour_in_40_clicks(browser, server, shots):
    base, _ = server
    page = browser.new_page(viewport={"width": 1000, "height": 800})
    page.goto(base + "/")
    page.click("#mix")
    target = srgb_to_lab(np.array([0.85, 0.45, 0.2]))  # a burnt orange
    for click in range(40):
        page.wait_for_selector("#grid .pick")
        best = int(np.argmin(np.linalg.norm(shown_lab(page) - target, axis=1)))
        before = screen_number(page)
        with page.expect_response(lambda r: r.url.endswith("/answer")):
            page.keyboard.press(str(best + 1))
        expect(page.locator("#progress")).not_to_have_text(before)
        if click == 20:
            page.screenshot(path=str(shots / "mix.png"))
    with page.expect_response(lambda r: r.url.endswith("/answer")):
        page.keyboard.press("Enter")  # accept the colour
    page.wait_for_selector("#done:not([hidden])")
    expect(page.locator("#result")).not_to_be_empty()
    hexcode = re.search(r"#[0-9a-f]{6}", page.inner_text("#result")).group(0)
    err = float(np.linalg.norm(srgb_to_lab(hex_to_srgb([hexcode]))[0] - target))
    assert err <= 10.0, (hexcode, err)
    page.close()


def test_usable_on_a_phone(browser, server, shots):
    base, _ = server
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
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    for box in (page.locator("#grid .pick").nth(i).bounding_box() for i in range(4)):
        assert box["width"] >= 44 and box["height"] >= 44
    for b in ("#undo", "#skip"):
        assert page.locator(b).bounding_box()["height"] >= 44
    page.screenshot(path=str(shots / "phone.png"), full_page=True)
    with page.expect_response(lambda r: r.url.endswith("/answer")):
        page.locator("#grid .pick").nth(0).tap()
    expect(page.locator("#progress")).to_contain_text("1 answered")
    ctx.close()


STUDY = """
title = "Find the colour"
catalogue = "colours"
methods = ["gamma-ckl", "gauss"]
targets = 3
n_choices = 4
seed = 5
max_queries = 40
consent = "We record your clicks under a random id."
"""


def test_a_whole_study_in_the_browser_and_its_report(browser, tmp_path, shots):
    (tmp_path / "study.toml").write_text(STUDY)
    url = f"sqlite:///{tmp_path / 'study.sqlite'}"
    with ServeProcess("--study", str(tmp_path / "study.toml"), "--database", url) as srv:
        for p in range(2):  # two participants, each with a browser of their own
            ctx = browser.new_context()
            page = ctx.new_page()
            page.goto(srv.base + "/study")
            assert "random id" in page.inner_text("#consent-text")
            if p == 0:
                page.screenshot(path=str(shots / "study-consent.png"))
            page.click("#agree")
            for slot in range(3):
                page.wait_for_selector("#target-intro:not([hidden])")
                name = page.get_attribute("#target-big", "title")
                target = CAT.names.index(name)
                if p == 0 and slot == 0:
                    page.screenshot(path=str(shots / "study-target.png"))
                page.click("#begin")
                find_by_clicks(page, target, max_screens=40)
            page.wait_for_selector("#done:not([hidden])")
            assert "Thank you" in page.inner_text("#result")
            ctx.close()
    out = tmp_path / "report"
    res = subprocess.run(
        [sys.executable, "-m", "tripletsearch", "report", "--database", url, "--out", str(out)]
        + ["--study", str(tmp_path / "study.toml")],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stderr
    assert "2 participants, 6 searches" in res.stdout
    assert re.search(r"gamma-ckl\s+3\s+3", res.stdout) and re.search(r"gauss\s+3\s+\d", res.stdout)
    assert (out / "cdf.png").exists()
    shutil.copy(out / "cdf.png", shots / "study-cdf.png")


def test_a_picture_catalogue(browser, tmp_path, shots):
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
        assert page.is_hidden("#mode-mix")  # no colours: find only
        page.click("#find")
        page.wait_for_selector("#grid .pick img")
        imgs = page.locator("#grid .pick img")
        assert imgs.count() == 4
        for i in range(4):  # every picture loaded from the catalogue folder
            expect(imgs.nth(i)).to_have_attribute("src", re.compile(r"^/images/\d+$"))
            assert imgs.nth(i).evaluate("e => e.complete && e.naturalWidth === 32")
        page.screenshot(path=str(shots / "pictures.png"))
        shown = {imgs.nth(i).get_attribute("src") for i in range(4)}
        with page.expect_response(lambda r: r.url.endswith("/answer")):
            page.keyboard.press("1")
        expect(page.locator("#progress")).to_contain_text("1 answered")
        for i in range(4):
            expect(imgs.nth(i)).to_have_js_property("complete", True)
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
        assert page.locator("#n-choices-mix").count() == 0  # one size: no choice
        assert "two swatches per screen" in page.inner_text("#mode-mix")
        page.select_option("#n-choices-find", "2")
        with page.expect_response(lambda r: r.url.endswith("/api/sessions")) as created:
            page.click("#find")
        assert created.value.request.post_data_json == {"mode": "find", "n_choices": 2}
        expect(page.locator("#grid .pick")).to_have_count(2)
        with page.expect_response(lambda r: r.url.endswith("/answer")):
            page.locator("#grid .card .found").nth(0).click()
        expect(page.locator("#result")).to_contain_text("Found: ")
        page.close()
    assert requests == [{"limit": ["0"]}]
    assert errors == []  # the modules loaded under the CSP, nothing thrown


def test_a_whole_search_reads_no_page_of_items(browser, server):
    """The demo catalogue (949 colours): find offers its 2 to 8 per screen, 4 selected; start,
    answer, undo, finish and again load the catalogue's metadata only."""
    base, _ = server
    page = browser.new_page()
    requests = record_catalogue_requests(page)
    page.goto(base + "/")
    expect(page.locator("#find")).to_have_text("Find a named colour")
    assert size_choices(page, "find") == ([str(n) for n in range(2, 9)], "4")
    with page.expect_response(lambda r: r.url.endswith("/api/sessions")) as created:
        page.click("#find")
    assert created.value.request.post_data_json == {"mode": "find", "n_choices": 4}
    expect(page.locator("#grid .pick")).to_have_count(4)
    find_by_clicks(page, int(CAT.names.index("burnt orange")), max_screens=40)
    expect(page.locator("#result")).to_contain_text("Found: burnt orange")
    page.click("#again")
    expect(page.locator("#find")).to_be_visible()
    page.close()
    assert requests == [{"limit": ["0"]}, {"limit": ["0"]}]


def test_a_reload_resumes_the_session(browser, server):
    base, url = server
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
    assert page.locator("#grid .card .name").all_inner_texts() == names
    assert session_id(page) == sid and page.is_visible("#skip") and page.is_hidden("#mixbar")
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
    assert page.is_hidden("#skip")
    with page.expect_response(lambda r: r.url.endswith("/answer")):
        page.click("#accept")
    expect(page.locator("#result")).to_contain_text("Your colour: #")
    page.close()


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
        target = page.get_attribute("#target-big", "title")
        page.click("#begin")
        expect(page.locator("#grid .pick")).to_have_count(4)
        names = page.locator("#grid .card .name").all_inner_texts()
        other = next(i for i, n in enumerate(names) if n != target)
        with page.expect_response(lambda r: r.url.endswith("/answer")) as refused:
            page.locator("#grid .card .found").nth(other).click()
        assert refused.value.status == 400
        expect(page.locator("#status")).to_contain_text("not the target")
        sid = session_id(page, "ts-study")
        assert Store(url).history(sid) == []
        expect(page.locator("#progress")).to_have_text("Target 1 of 1 · screen 1 · 0 answered")
        with page.expect_response(lambda r: r.url.endswith("/answer")):
            page.locator("#grid .pick").nth(other).click()
        expect(page.locator("#progress")).to_contain_text("1 answered")
        page.reload()
        expect(page.locator("#progress")).to_have_text("Target 1 of 1 · screen 2 · 1 answered")
        expect(page.locator("#target")).to_have_attribute("title", target)
        find_by_clicks(page, CAT.names.index(target), max_screens=40)
        expect(page.locator("#result")).to_contain_text("Thank you: all 1 searches are done.")
        page.close()

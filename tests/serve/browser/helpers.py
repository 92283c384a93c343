"""What several browser tests share: the page's screen sizes, a study file, a catalogue of
photos, and scripted people who look at the colours the page shows and click the one
closest to their target in CIELAB."""

from __future__ import annotations

import atexit
import re
import shutil
import tempfile
from pathlib import Path

import numpy as np
from playwright.sync_api import expect

from serve.helpers import study_toml
from tripletsearch.colour import srgb_to_lab
from tripletsearch.serve import demo_catalogue

CAT = demo_catalogue()
LAB = CAT.embedding

DESKTOP = {"viewport": {"width": 1280, "height": 800}}
PHONE = {
    "viewport": {"width": 390, "height": 844},
    "device_scale_factor": 2,
    "is_mobile": True,
    "has_touch": True,
}

STUDY = study_toml(seed=5, max_queries=40, consent="We record your clicks under a random id.")

# the page scrolls not sideways (a condition for ``page.wait_for_function``)
NO_SIDEWAYS_SCROLL = "() => document.documentElement.scrollWidth <= window.innerWidth"

PHOTO_SIZES = [(640, 480), (240, 960), (1200, 300), (256, 256), (48, 64), (900, 600)]


_PHOTOS: dict[int, Path] = {}  # n: the photos drawn first in this process


def photo_catalogue(root, n=24):
    """Photos of several sizes and aspect ratios (a disc on a gradient: its edges show any
    crop), with a 2-D embedding: drawn once a process, a copy in each ``root``."""
    if n not in _PHOTOS:
        drawn = Path(tempfile.mkdtemp(prefix="photos-"))
        atexit.register(shutil.rmtree, drawn, ignore_errors=True)
        _PHOTOS[n] = _draw_photos(drawn / "photos", n)
    shutil.copytree(_PHOTOS[n], root)
    return root


def _draw_photos(root, n):
    import matplotlib.pyplot as plt

    (root / "img").mkdir(parents=True)
    rng = np.random.default_rng(7)
    rows = ["name,image"]
    for i in range(n):
        w, h = PHOTO_SIZES[i % len(PHOTO_SIZES)]
        yy, xx = np.mgrid[0:h, 0:w]
        img = np.empty((h, w, 3))
        img[...] = rng.uniform(0.2, 0.9, 3) * (0.5 + 0.5 * xx / w)[..., None]
        disc = (xx - w / 2) ** 2 + (yy - h / 2) ** 2 < (min(w, h) / 3) ** 2
        img[disc] = rng.uniform(size=3)
        plt.imsave(root / "img" / f"photo{i}.png", img)
        rows.append(f"photo {i},img/photo{i}.png")
    (root / "items.csv").write_text("\n".join(rows) + "\n")
    np.save(root / "embedding.npy", rng.normal(size=(n, 2)))
    return root


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
            say_this_is_it(page, names.index(CAT.names[target]))
            page.wait_for_selector("#search[hidden]", state="attached")
            return clicks
        best = int(np.argmin(np.linalg.norm(shown_lab(page) - LAB[target], axis=1)))
        before = screen_number(page)
        with page.expect_response(lambda r: r.url.endswith("/answer")):
            page.locator("#grid .pick").nth(best).click()
        expect(page.locator("#progress")).not_to_have_text(before)
    raise AssertionError(f"not found in {max_screens} screens")


def say_this_is_it(page, position: int) -> None:
    """ "This is it" on the item at ``position``, then "Yes" on the confirmation."""
    page.locator("#grid .card .found").nth(position).click()
    expect(page.locator("#confirm")).to_be_visible()
    with page.expect_response(lambda r: r.url.endswith("/answer")):
        page.click("#confirm-yes")


def answer_keys(page, keys: str, before: int = 0) -> None:
    """Press each key as an answer, waiting for the next screen each time."""
    for i, key in enumerate(keys):
        with page.expect_response(lambda r: r.url.endswith("/answer")):
            page.keyboard.press(key)
        expect(page.locator("#progress")).to_contain_text(f"{before + i + 1} answered")


def long_names(root, every=3):
    """Give every ``every``-th item of the catalogue folder ``root`` a long name without
    spaces (a name must wrap under its box, never widen it)."""
    lines = (root / "items.csv").read_text().splitlines()
    for i in range(1, len(lines), every):
        name, rest = lines[i].split(",", 1)
        lines[i] = f"{name.replace(' ', '-')}-{'x' * 60}-{i},{rest}"
    (root / "items.csv").write_text("\n".join(lines) + "\n")


def drawn_alike(page) -> int:
    """Check the screen shown draws every picture alike; the number of pictures.

    Each visible picture's box (the ``<img>``'s parent element) has the same width and
    height within 3 px; every card (a picture with its name, the screen's or the strip's)
    is as wide as its box; the choices are centred as a group in the grid.
    """
    boxes = page.eval_on_selector_all(
        "#search img",
        "els => els.filter(e => e.offsetParent !== null).map(e => {"
        " const r = e.parentElement.getBoundingClientRect();"
        " return [r.width, r.height]; })",
    )
    widths, heights = [b[0] for b in boxes], [b[1] for b in boxes]
    assert max(widths) - min(widths) <= 3 and max(heights) - min(heights) <= 3, boxes
    cards = page.eval_on_selector_all(
        "#grid .card, #strip-grid .card, #head",
        "els => els.filter(e => e.offsetParent !== null).map(e => e.getBoundingClientRect().width)",
    )
    assert all(abs(c - widths[0]) <= 3 for c in cards), (cards, widths[0])
    left, right, grid_left, grid_right = page.evaluate(
        "() => { const g = document.getElementById('grid').getBoundingClientRect();"
        " const r = [...document.querySelectorAll('#grid .pick')]"
        ".map(e => e.getBoundingClientRect());"
        " return [Math.min(...r.map(x => x.left)), Math.max(...r.map(x => x.right)),"
        " g.left, g.right]; }"
    )
    assert abs((left - grid_left) - (grid_right - right)) <= 3, (left, right, grid_left)
    return len(boxes)


def names_shown(page) -> list[str]:
    """The item names visible on the screen (under pictures, under the head)."""
    return page.eval_on_selector_all(
        ".name", "els => els.filter(e => e.offsetParent !== null).map(e => e.textContent)"
    )


def target_of(page, study) -> int:
    """The study's target shown on its page, as an id of the demo (CAT): the page gives its
    id in the study's catalogue (the demo less its excluded names)."""
    big = page.locator("#target-big")
    expect(big).to_have_attribute("data-item", re.compile(r"^\d+$"))  # the target drawn
    item = int(big.get_attribute("data-item"))
    return CAT.names.index(study.catalogue.names[item])

"""The browser tests' fixtures: the system's chromium (Debian's; no browser download)
driven by Playwright and the folder of screenshots (the search server: the service tests'
``server``, its ``base``)."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator

import pytest


def chromium() -> str | None:
    """The browser to drive: ``TRIPLETSEARCH_CHROMIUM``, else Debian's chromium headless
    shell (the Blink of Debian's chromium without its windowed shell, what Playwright runs
    headless by default: about 40 % less CPU a test here), else chromium itself."""
    names = ("chromium-headless-shell", "chromium", "chromium-browser")
    return os.environ.get("TRIPLETSEARCH_CHROMIUM") or next(
        (p for p in map(shutil.which, names) if p), None
    )


@contextlib.contextmanager
def _without_preload() -> Iterator[None]:
    """The browser is not ours to sanitize: start it without the runtime CI preloads."""
    saved = {k: os.environ.pop(k) for k in ("LD_PRELOAD", "ASAN_OPTIONS") if k in os.environ}
    try:
        yield
    finally:
        os.environ.update(saved)


@pytest.fixture(scope="session")
def playwright():
    """Playwright's driver, one per test process; its tests skip where there is no
    chromium (but on the CI)."""
    if chromium() is None and not os.environ.get("TRIPLETSEARCH_REQUIRE_BROWSER"):
        pytest.skip("no chromium (Debian: apt-get install chromium-headless-shell)")
    from playwright.sync_api import sync_playwright

    with _without_preload():
        pw = sync_playwright().start()
    yield pw
    pw.stop()


@pytest.fixture(scope="session")
def browser(playwright):
    """Chromium, one per test process (each test opens contexts of its own: a launch costs
    about 2 CPU-s, and pytest-xdist spreads a module's tests over every worker)."""
    with _without_preload():
        b = playwright.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
    yield b
    b.close()


@pytest.fixture(scope="module")
def shots(request):
    d = request.config.rootpath / "test-output" / "screenshots"
    d.mkdir(parents=True, exist_ok=True)
    return d

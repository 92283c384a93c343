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
    return os.environ.get("TRIPLETSEARCH_CHROMIUM") or next(
        (p for p in map(shutil.which, ("chromium", "chromium-browser")) if p), None
    )


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
    """Chromium, one per module; its tests skip where there is none (but on the CI)."""
    if chromium() is None and not os.environ.get("TRIPLETSEARCH_REQUIRE_BROWSER"):
        pytest.skip("no chromium (Debian: apt-get install chromium)")
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

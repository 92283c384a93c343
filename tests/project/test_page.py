"""The page's structure (python/tripletsearch/serve/static/): small ES modules, the modes'
renderers behind one registry, nothing that branches on a mode's name outside them, the
JSON API's current names only."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import tripletsearch.serve as serve
from tripletsearch.serve.modes import MODES

STATIC = Path(serve.__file__).parent / "static"
SCRIPTS = sorted(STATIC.rglob("*.js"))
PAGES = [STATIC / "index.html", STATIC / "dashboard.html"]
SVG_NAMESPACE = "http://www.w3.org/2000/svg"
REGISTRY = STATIC / "modes" / "index.js"
MAX_LINES = 150


def code(path: Path) -> str:
    """The script without its comments (// to the end of a line, /* ... */)."""
    text = re.sub(r"/\*.*?\*/", "", path.read_text(), flags=re.S)
    return re.sub(r"(?m)(^|[^:\"'`])//.*$", r"\1", text)


def rel(path: Path) -> str:
    return path.relative_to(STATIC).as_posix()


def test_the_page_is_es_modules_without_inline_script():
    html = (STATIC / "index.html").read_text()
    scripts = re.findall(r"<script\b[^>]*>(.*?)</script>", html, flags=re.S | re.I)
    assert scripts == [""]  # one script, no inline code
    assert '<script type="module" src="/static/main.js">' in html
    assert not re.search(r"\son[a-z]+\s*=", html)  # no inline handlers
    assert {"main.js", "api.js", "state.js", "session.js", "participant.js"} <= {
        rel(p) for p in SCRIPTS
    }
    for path in [*SCRIPTS, *PAGES, STATIC / "app.css"]:  # no CDN, no build
        text = path.read_text().replace(SVG_NAMESPACE, "")  # a name, never fetched
        assert not re.search(r"https?://", text), rel(path)


def test_the_dashboard_is_one_module_without_inline_script():
    html = (STATIC / "dashboard.html").read_text()
    scripts = re.findall(r"<script\b[^>]*>(.*?)</script>", html, flags=re.S | re.I)
    assert scripts == [""] and '<script type="module" src="/static/dashboard.js">' in html
    assert not re.search(r"\son[a-z]+\s*=", html)


@pytest.mark.parametrize("path", SCRIPTS, ids=rel)
def test_no_script_over_150_lines(path):
    n = len(path.read_text().splitlines())
    assert n <= MAX_LINES, f"{rel(path)}: {n} lines"


@pytest.mark.parametrize("path", SCRIPTS, ids=rel)
def test_every_import_is_a_module_of_the_page(path):
    imports = re.findall(r"""\bfrom\s+["']([^"']+)["']""", code(path))
    assert imports or rel(path) in ("state.js", "plot.js", "modes/cards.js")  # leaves
    for target in imports:
        assert target.startswith("./") or target.startswith("../"), (rel(path), target)
        assert (path.parent / target).resolve().is_file(), (rel(path), target)


def test_mode_names_are_compared_only_in_the_registry():
    """No `mode === "find"`: the registry (modes/index.js) chooses a renderer by name; outside
    static/modes/ no script names a mode at all."""
    names = "|".join(map(re.escape, MODES))
    compare = re.compile(r"""\bmode\s*[!=]==?\s*["'`]|["'`]\s*[!=]==?\s*\w*mode\b""")
    literal = re.compile(rf"""["'`]({names})["'`]""")
    for path in SCRIPTS:
        text = code(path)
        if path != REGISTRY:
            assert not compare.search(text), rel(path)
        if path.parent != STATIC / "modes":
            assert not literal.search(text), (rel(path), literal.search(text))
    # the trap works
    assert compare.search('if (state.session.mode === "mix") x();')
    assert literal.search('start("find")')


def test_one_renderer_per_mode_of_the_service():
    registry = code(REGISTRY)
    for name in MODES:
        module = STATIC / "modes" / f"{name}.js"
        assert re.search(rf"""import \w+ from "\./{name}\.js";""", registry), name
        text = code(module)
        assert f'name: "{name}",' in text
        for member in ("parts:", "offer(", "render(", "read(", "result("):
            assert member in text, (name, member)


@pytest.mark.parametrize("path", SCRIPTS, ids=rel)
def test_only_the_json_apis_current_names(path):
    """`n_choices` and `n_queries`, never the deprecated `k` and `queries`."""
    old = re.compile(r"""\.(k|queries)\b|\b(k|queries)\s*:|["'](k|queries)["']|\bk=|queries=""")
    assert not old.search(code(path)), (rel(path), old.search(code(path)))

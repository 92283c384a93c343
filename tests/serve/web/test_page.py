"""The page's files in process: every module and the stylesheet of static/ served with its
media type and headers, nothing else (an allow-list: unknown names and any `..` are 404)."""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

import pytest

import tripletsearch.serve as serve_pkg
from serve.helpers import in_process
from tripletsearch.serve import create_app, demo_catalogue

STATIC = Path(serve_pkg.__file__).parent / "static"
TYPES = {".js": "text/javascript", ".css": "text/css"}


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    db = tmp_path_factory.mktemp("db") / "sessions.sqlite"
    with in_process(create_app(demo_catalogue(), f"sqlite:///{db}")) as c:
        yield c


def test_every_module_and_the_stylesheet_served_as_they_are(client):
    files = sorted(p for p in STATIC.rglob("*") if p.suffix in TYPES)
    names = {p.relative_to(STATIC).as_posix() for p in files}
    assert {"main.js", "modes/index.js", "modes/find.js", "modes/mix.js", "app.css"} <= names
    for path in files:
        name = path.relative_to(STATIC).as_posix()
        r = client.get(f"/static/{name}")
        assert r.status_code == 200, name
        assert r.content == path.read_bytes(), name
        assert r.headers["content-type"].split(";")[0] == TYPES[path.suffix], name
        assert r.headers["cache-control"] == "no-cache", name
        assert r.headers["x-content-type-options"] == "nosniff", name


def test_the_page_loads_its_entry_module(client):
    page = client.get("/")
    assert page.status_code == 200
    assert '<script type="module" src="/static/main.js"></script>' in page.text
    csp = page.headers["content-security-policy"]
    assert "script-src 'self';" in csp and "unsafe-inline" not in csp
    # every module main.js reaches by its imports is served
    seen, todo = set(), ["main.js"]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        r = client.get(f"/static/{name}")
        assert r.status_code == 200, name
        for target in re.findall(r"""\bfrom\s+"(\.{1,2}/[^"]+)";""", r.text):
            todo.append(posixpath.normpath(posixpath.join(posixpath.dirname(name), target)))
    assert {"api.js", "session.js", "participant.js", "modes/find.js", "modes/mix.js"} <= seen


@pytest.mark.parametrize(
    "path",
    [
        "/static/nope.js",
        "/static/modes/nope.js",
        "/static/index.html",  # the page is served at / with its CSP, not as a file
        "/static/modes",
        "/static/modes/",
        "/static/",
        "/static/app.js",  # the script before the modules
        "/static/main.js/",
        "/static/MAIN.JS",
        "/static/%2e%2e/service.py",
        "/static/..%2fservice.py",
        "/static/modes/..%2f..%2fservice.py",
        "/static/modes/%2e%2e/main.js",  # `..` even to a file on the list
        "/static/%2e%2e/views/pages.py",
        "/static/%2fetc/passwd",
        "/static/modes%5cfind.js",
        "/static/data/xkcd_colours.csv",
    ],
)
def test_unknown_names_and_dot_dot_404(client, path):
    r = client.get(path)
    assert r.status_code == 404, (path, r.status_code)

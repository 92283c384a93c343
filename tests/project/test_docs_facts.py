"""What the README and the guide state about the code, read from them and compared with it:
the schema version, the package's version, and the service's routes with the fields the
page sends (issue 50, item 7). Fast: the app is built, never served."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import tripletsearch

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
SERVING = ROOT / "docs" / "guide" / "serving.rst"
API_JS = ROOT / "python" / "tripletsearch" / "serve" / "static" / "api.js"

pytestmark = pytest.mark.skipif(
    not (README.is_file() and SERVING.is_file()), reason="docs/ not next to the tests"
)


def _release(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


# ---------------------------------------------------------------------------- versions
# a version of the package: x.y.z (not an address, not "v1.0.3", a peer's), or x.y said
# as one ("before 0.4")
_THREE = re.compile(r"(?<![\w.])(\d+\.\d+\.\d+)(?![\w.]*\d)")
_TWO = re.compile(r"\b(?:since|before|until|after|under|in) (\d+\.\d+)\b(?!\.\d)")
# the words that may name a later version: a promise ("works until 0.3.0", "removed in")
_PROMISE = re.compile(r"(?:until|removed in|in) $")


def later_versions(text: str, current: tuple[int, ...]) -> list[str]:
    """The versions after ``current`` that ``text`` speaks of as past, with their line."""
    found: list[str] = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if "cblearn" in line or "salmon" in line:
            continue  # the peers' versions
        for m in [*_THREE.finditer(line), *_TWO.finditer(line)]:
            said = f"{lineno}: {line.strip()}"
            if _release(m.group(1)) > current and not _PROMISE.search(line[: m.start(1)]):
                found += [said] if said not in found else []
    return found


def test_the_docs_speak_of_no_release_after_the_package_as_past():
    """0.3.0's axes, "since 0.4": the package is at its version, later ones are promises."""
    current = _release(tripletsearch.__version__)
    pages = [README, *sorted((ROOT / "docs").rglob("*.rst"))]
    wrong = {p.name: later_versions(p.read_text(), current) for p in pages}
    wrong = {page: lines for page, lines in wrong.items() if lines}
    assert not wrong, wrong


def test_the_version_check_finds_what_it_is_for():
    text = "x\n0.3.0's rotated axes\nsince 0.4 people\nworks until 0.3.0\n127.0.0.1 v1.0.3\n"
    assert later_versions(text, (0, 2, 0)) == ["2: 0.3.0's rotated axes", "3: since 0.4 people"]
    assert later_versions("(0.2.0: a shuffle; 0.3.0: plan 2)", (0, 2, 0)) == [
        "1: (0.2.0: a shuffle; 0.3.0: plan 2)"
    ]


def test_the_changelogs_last_release_is_the_packages_version():
    changelog = (ROOT / "CHANGELOG.md").read_text()
    released = re.findall(r"^## (\d+\.\d+\.\d+)", changelog, re.M)
    assert released[0] == tripletsearch.__version__


def test_the_readme_states_the_schema_version():
    pytest.importorskip("sqlalchemy")
    from tripletsearch.serve.store import SCHEMA_VERSION

    (said,) = re.findall(r"`ts_meta`, now version (\d+)", README.read_text())
    assert int(said) == SCHEMA_VERSION
    # and says what each version added, up to it
    history = re.search(r"now version \d+: (.*?)\)", README.read_text(), re.S).group(1)
    added = [int(v) for v in re.findall(r"(?:^|[;:] )(\d+) (?:renamed|added)", history)]
    assert added == list(range(3, SCHEMA_VERSION + 1))


# ------------------------------------------------------------------------------ routes
_ROUTE = re.compile(r"(?:\b(GET|POST) )?((?:/api|\.\.\.)/[\w{}/.-]*[\w}])")


def _key_fields(body: str) -> set[str]:
    """The field names of a documented body: ``{"screen", "choice", "found"?}``, keys of
    ``{"mode": "find" | "mix"}`` (not their values)."""
    return set(re.findall(r'(?:\{|,\s*)"(\w+)"\??(?=\s*[:,}?])', body))


def documented(cell: str) -> list[tuple[str, str, set[str]]]:
    """The (method, path, body fields) a request cell of a route table names.

    ``.../answer`` is the last path's sibling, with its method; ``{id}`` any placeholder.
    """
    routes: list[tuple[str, str, set[str]]] = []
    method, parent = "GET", ""
    cell = re.sub(r"\s+", " ", cell)
    for m in _ROUTE.finditer(cell):
        method = m.group(1) or method
        path = m.group(2)
        if path.startswith("..."):
            path = parent + path[3:]
        parent = path.rsplit("/", 1)[0]
        rest = cell[m.end() :].lstrip("` ")
        body = rest[: rest.index("}") + 1] if rest.startswith("{") else ""
        routes.append((method, re.sub(r"\{\w+\}", "{}", path), _key_fields(body)))
    return routes


def readme_routes() -> list[tuple[str, str, set[str]]]:
    rows = re.findall(r"^\| (`(?:GET|POST) /api.*?) \| ", README.read_text(), re.M)
    return [r for row in rows for r in documented(row)]


def guide_routes() -> list[tuple[str, str, set[str]]]:
    """The participants' routes table of the serving guide (its request column)."""
    text = SERVING.read_text()
    table = text[text.index("The participants' routes") :]
    table = table[: table.index("\nA reply that shows a screen")]
    cells = re.findall(r"^   \* - (.*?)(?=^     - )", table, re.M | re.S)
    return [r for cell in cells[1:] for r in documented(cell)]


def app_routes(tmp_path) -> set[tuple[str, str]]:
    pytest.importorskip("starlette")
    from tripletsearch.serve import create_app, demo_catalogue

    app = create_app(demo_catalogue(), f"sqlite:///{tmp_path / 'routes.sqlite'}")
    return {
        (method, re.sub(r"\{[\w:]+\}", "{}", route.path))
        for route in app.routes
        for method in getattr(route, "methods", None) or ()
    }


def test_every_documented_route_is_one_of_the_apps(tmp_path):
    served = app_routes(tmp_path)
    readme, guide = readme_routes(), guide_routes()
    assert len(readme) >= 15 and len(guide) >= 8  # the tables were found
    missing = [(m, p) for m, p, _ in readme + guide if (m, p) not in served]
    assert not missing, missing


def page_requests() -> dict[tuple[str, str], set[str]]:
    """The participants' and sessions' requests of the page (``static/api.js``): the
    route of each and the fields of its body, where the body is written there."""
    text = API_JS.read_text()
    sent: dict[tuple[str, str], set[str]] = {}
    for m in re.finditer(r"request\(\s*([`\"])(/api/[^`\"?]*)[^`\"]*\1\s*(,?)", text):
        path = re.sub(r"\$\{[^}]*\}", "{}", m.group(2))
        # the body: up to the call's closing parenthesis (its object literals' keys)
        depth, end = 1, m.end()
        while depth:
            depth += {"(": 1, ")": -1}.get(text[end], 0)
            end += 1
        args = text[m.end() : end - 1]
        keys = set(re.findall(r"[{,]\s*(\w+)\s*(?=[:,}])", args)) if m.group(3) else set()
        method = "POST" if m.group(3) else "GET"
        sent.setdefault((method, path), set()).update(keys)
    return sent


def test_the_docs_name_every_field_the_page_sends():
    """``platform_id`` documented where the page sends ``platform``: the guide's and the
    README's tables give each route every field the page's requests carry."""
    sent = page_requests()
    assert sent[("POST", "/api/participants")] == {"consent", "platform"}  # the parse works
    docs: dict[tuple[str, str], set[str]] = {}
    for method, path, fields in guide_routes() + readme_routes():
        docs.setdefault((method, path), set()).update(fields)
    untold = {
        route: sorted(fields - docs[route])
        for route, fields in sent.items()
        if route in docs and fields - docs[route]
    }
    assert not untold, untold
    assert {r for r in sent if r[1].startswith("/api/participants")} <= set(docs)


def test_ci_runs_the_readmes_test_command_and_names_the_slowest_tests():
    ci = (ROOT / ".ci" / "run").read_text()
    (command,) = re.findall(r"^(pip install '\.\[test\]' && .*)$", README.read_text(), re.M)
    assert re.search(rf"^{re.escape(command)}$", ci, re.M)
    # its options from the environment only (the command stays the README's)
    (options,) = re.findall(r'^export PYTEST_ADDOPTS="(.*)"$', ci, re.M)
    assert "--durations=20" in options.split()

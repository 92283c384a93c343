"""Configuration once (CONTRIBUTING.md, "Conventions"): each default of the service has one
home, and every other module imports it.

An ast scan of ``serve/`` for the service's defaults written again as literals where a
default is given (a parameter's default, a class's field, ``default=``, ``.get(key,
default)``, a module's constant): the settings of :class:`~tripletsearch.serve.config.
ServeConfig` and :class:`~tripletsearch.serve.config.Limits`, the best guesses' bound, the
demos' names and the crowd platforms' names. A literal that is another concept (the same
number meaning something else) is in :data:`ALLOWED`, with why.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
from pathlib import Path

import tripletsearch as ts
from tripletsearch.serve import clock, config
from tripletsearch.serve.catalogue import demo
from tripletsearch.serve.participation import platforms

ROOT = Path(__file__).resolve().parents[2]
SERVE = ROOT / "python" / "tripletsearch" / "serve"
HOME = {  # each watched default's one home (relative to serve/)
    "config": "config.py",
    "clock": "clock.py",
    "demos": "catalogue/demo.py",
    "platforms": "participation/platforms.py",
}
# (module, the name whose default it is, how): literals that are another concept than the
# default they equal, or tables keyed by the watched names (their keys checked below)
CONSTANT = "a module's constant"
ALLOWED = {
    (
        "catalogue/files.py",
        "MAX_ITEMS_WITHOUT_EMBEDDING",
        CONSTANT,
    ),  # a catalogue's size, not sessions
    ("collect/file.py", "MAX_QUERIES", CONSTANT),  # a collect file's bound on its max_queries
    ("collect/trial/gold.py", "MAX_DRAWN", CONSTANT),  # a collect file's bound on gold_drawn
    (
        "study/checks.py",
        "CLARITY_GAMMA",
        CONSTANT,
    ),  # the study checks' measure of a screen's clarity
    (
        "cli.py",
        "--platform",
        "default=",
    ),  # the codes command's default, among PLATFORMS' names
    (
        "participation/codes.py",
        "PLATFORM_COLUMNS",
        CONSTANT,
    ),  # a table by platform (keys: PLATFORMS')
    (
        "participation/codes.py",
        "STATUS_COLUMNS",
        CONSTANT,
    ),  # a table by platform (keys: PLATFORMS')
}


def _numbers() -> dict[str, float]:
    """The watched numeric defaults (name -> value), none of them 0 or 1."""
    watched = {}
    for cls in (config.ServeConfig, config.Limits):
        for f in dataclasses.fields(cls):
            value = f.default
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 1:
                watched[f.name] = value
    watched["max_guesses"] = config.MAX_GUESSES
    return watched


def _names() -> dict[str, str]:
    """The watched names (the demos', the platforms') -> their home."""
    out = {name: HOME["demos"] for name in demo.DEMOS}
    out.update({name: HOME["platforms"] for name in platforms.PLATFORMS})
    return out


def _targets(stmt: ast.stmt) -> list[tuple[str, ast.AST]]:
    """(name, value) of an assignment (a tuple of names: each with its value)."""
    target = stmt.targets[0] if isinstance(stmt, ast.Assign) else stmt.target
    value = stmt.value
    if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple):
        return [(getattr(t, "id", ""), v) for t, v in zip(target.elts, value.elts)]
    return [(getattr(target, "id", getattr(target, "attr", "")), value)]


def _defaults(tree: ast.AST):
    """What ``tree`` gives a default: (the node, how, the name it is the default of)."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = node.args
            positional = [*a.posonlyargs, *a.args][
                len([*a.posonlyargs, *a.args]) - len(a.defaults) :
            ]
            for arg, d in [*zip(positional, a.defaults), *zip(a.kwonlyargs, a.kw_defaults)]:
                if d is not None:
                    yield d, "a parameter's default", arg.arg
        elif isinstance(node, ast.ClassDef):
            for stmt in node.body:
                if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
                    for name, value in _targets(stmt):
                        yield value, "a class's field", name
        elif isinstance(node, ast.Call):
            first = node.args[0] if node.args else None
            option = first.value if isinstance(first, ast.Constant) else ""
            for k in node.keywords:
                if k.arg in ("default", "choices"):
                    yield k.value, f"{k.arg}=", str(option)
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr == "get" and len(node.args) == 2:
                yield node.args[1], ".get(key, default)", str(option)
    for stmt in getattr(tree, "body", []):
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            for name, value in _targets(stmt):
                yield value, CONSTANT, name


def _literals(node: ast.AST):
    for inner in ast.walk(node):
        if isinstance(inner, ast.Constant) and not isinstance(inner.value, bool):
            yield inner


def _of(name: str, field: str) -> bool:
    """Whether ``name`` (a parameter, a field, ``--an-option``, a constant) names ``field``."""
    return name.lower().replace("-", "_").strip("_").endswith(field)


def spelled_again(path: Path, source: str) -> list[str]:
    """Where ``source`` (the module at ``path``, under serve/) writes a watched default.

    A number counts where it is the default of its own name (``max_queries=300``,
    ``--sessions-per-minute`` ``default=30``, ``MAX_GUESSES = 8``), or anywhere a default
    is given when it is distinctive (100 or more, or not a whole number); a name of a demo
    or a platform anywhere a default or the choices are given.
    """
    relative = path.relative_to(SERVE).as_posix()
    numbers, names = _numbers(), _names()
    lines = source.splitlines()
    found = []
    for node, how, name in _defaults(ast.parse(source)):
        for lit in _literals(node):
            value, home, what = lit.value, HOME["config"], ""
            if isinstance(value, str) and value in names:
                home, what = names[value], value
            elif isinstance(value, (int, float)):
                for field, default in numbers.items():
                    distinctive = default >= 100 or default != int(default)
                    same = value == default and type(value) is type(default)
                    if same and (_of(name, field) or distinctive):
                        what = field
                        home = HOME["clock"] if field == "fast_server_ms" else home
            if not what:
                continue
            code = lines[lit.lineno - 1].strip()
            if relative != home and (relative, name, how) not in ALLOWED:
                found.append(f"{relative}:{lit.lineno}: {what} ({value!r}) as {how}: {code}")
    return sorted(found, key=lambda line: (line.split(":")[0], int(line.split(":")[1])))


def test_each_default_of_the_service_is_written_once():
    found = []
    for path in sorted(SERVE.rglob("*.py")):
        found += spelled_again(path, path.read_text("utf-8"))
    assert not found, "\n".join(["import these from their home instead:", *found])


def test_the_scan_sees_a_default_written_again():
    """The scan finds each kind of default written again (the test above can fail)."""
    source = (
        "GAMMA = 3.0\n"
        "def f(max_queries=300): ...\n"
        "class C:\n    ms: float = 250.0\n"
        "p.add_argument('--demo', choices=['colours'])\n"
        "p.add_argument('--platform', default='prolific')\n"
        "cfg.get('sessions_per_minute', 30)\n"
    )
    found = spelled_again(SERVE / "elsewhere.py", source)
    assert [line.split(":")[1] for line in found] == ["1", "2", "4", "5", "6", "7"]
    assert spelled_again(SERVE / "config.py", "GAMMA = 3.0\n") == []  # its home
    assert spelled_again(SERVE / "elsewhere.py", "x = f(3.0)\nFLOOR = 2\n") == []  # no default


def test_the_services_defaults_are_the_librarys():
    """A free find session assumes of people the gamma the library's searches assume."""
    library = inspect.signature(ts.simulate_discrete).parameters["gamma"].default
    assert config.ServeConfig().gamma == config.GAMMA == library
    assert config.ServeConfig().fast_server_ms == clock.FAST_SERVER_MS
    from tripletsearch.serve.modes.base import Settings

    assert Settings().gamma == config.GAMMA


def test_the_tables_by_platform_know_the_platforms():
    """The tables keyed by platform (allowed above) know the platforms, no other."""
    from tripletsearch.serve.participation import codes

    assert set(codes.PLATFORM_COLUMNS) == set(platforms.PLATFORMS)
    assert set(codes.STATUS_COLUMNS) <= set(platforms.PLATFORMS)
    assert set(platforms.SPELLED) == set(platforms.PLATFORMS)


def test_the_configuration_is_a_low_layer():
    """config imports only the errors, the clock, the catalogue and the library (every
    import counted, those inside functions too): every layer above may import it."""
    tree = ast.parse((SERVE / "config.py").read_text("utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            imported.add((node.module or node.names[0].name).split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            assert not node.module.startswith("tripletsearch.serve"), node.module
    assert imported <= {"errors", "clock", "catalogue"}, imported

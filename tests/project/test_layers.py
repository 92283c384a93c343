"""The service's layers (CONTRIBUTING.md, "Layers of the service"): every module of
``serve/`` has one, every import (those inside functions too) runs to its own layer or
below, few imports inside the service's functions (each saying why), and every module
imports first, alone. (No circle anywhere in the package: test_architecture.py.)"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "python" / "tripletsearch"
SERVE = PACKAGE / "serve"
MAX_TOP_LEVEL = 6  # modules at serve's top level, its __init__ aside
MAX_LAZY_NAMES = 30  # names of the package's own modules imported inside serve's functions


def layers() -> list[list[str]]:
    """The layers, bottom first: CONTRIBUTING.md's block after "## Layers of the service"
    (written top first, one layer a line, its entries packages or modules of serve)."""
    text = (ROOT / "CONTRIBUTING.md").read_text("utf-8")
    block = text.split("## Layers of the service", 1)[1].split("```", 2)[1]
    rows = [line.split("#", 1)[0].split() for line in block.splitlines()]
    return [row for row in rows if row][::-1]


def modules(package: Path = PACKAGE) -> dict[str, Path]:
    """Every module of ``package`` by its dotted name (a package by its own name)."""
    out = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def imports(name: str, path: Path, known: dict[str, Path], source: str | None = None):
    """(line, module) of every import of module ``name`` (anywhere in it: a function's,
    a TYPE_CHECKING block's), resolved to the most specific module of ``known``."""
    tree = ast.parse(path.read_text("utf-8") if source is None else source)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            targets = [f"{module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name and not name.startswith(target + "."):
                yield node.lineno, target  # (a module's own packages are set up before it)


def layer_of(name: str, rows: list[list[str]]) -> int | None:
    """The layer of serve's module ``name`` (relative to serve: ``collect.screens``; the
    package's own ``__init__``: ``__init__``): its most specific entry's."""
    best, found = -1, None
    for i, row in enumerate(rows):
        for entry in row:
            if (name == entry or name.startswith(entry + ".")) and len(entry) > best:
                best, found = len(entry), i
    return found


def _serve_name(full: str) -> str:
    return full.removeprefix("tripletsearch.serve").lstrip(".") or "__init__"


def _upward(rows, known) -> list[str]:
    bad = []
    for full, path in known.items():
        if not full.startswith("tripletsearch.serve"):
            continue
        mine = layer_of(_serve_name(full), rows)
        for line, target in imports(full, path, known):
            if target.startswith("tripletsearch.serve"):
                theirs = layer_of(_serve_name(target), rows)
                if mine is not None and theirs is not None and theirs > mine:
                    where = f"{path.name}:{line}"
                    bad.append(f"{where} imports {_serve_name(target)} (a layer above)")
    return bad


def test_every_module_of_the_service_has_a_layer():
    rows, known = layers(), modules()
    names = [_serve_name(m) for m in known if m.startswith("tripletsearch.serve")]
    assert not [n for n in names if layer_of(n, rows) is None]
    entries = [e for row in rows for e in row]
    assert len(entries) == len(set(entries)), "an entry in two layers"
    assert not [e for e in entries if not any(n == e or n.startswith(e + ".") for n in names)]


def test_the_services_imports_run_downwards():
    assert not _upward(layers(), modules())


def test_the_layer_check_sees_an_upward_import_inside_a_function(tmp_path):
    rows = [["store"], ["modes"]]  # bottom first
    known = {"tripletsearch.serve.store": tmp_path, "tripletsearch.serve.modes": tmp_path}
    store = tmp_path / "store.py"
    store.write_text("def f():\n    from .modes import Mode\n")
    known["tripletsearch.serve.store"] = store
    modes = tmp_path / "modes.py"
    modes.write_text("from .store import Store\n")
    known["tripletsearch.serve.modes"] = modes
    assert len(_upward(rows, known)) == 1
    store.write_text("import json\n")
    assert not _upward(rows, known)


def test_few_modules_at_the_services_top_level():
    top = sorted(p.stem for p in SERVE.glob("*.py") if p.name != "__init__.py")
    assert len(top) <= MAX_TOP_LEVEL, top


def lazy_imports(package: Path = SERVE) -> list[tuple[str, int, int, bool]]:
    """(file, line, names, commented) of each import of the package's own modules inside a
    function of ``package``; commented: a comment on its line or the line above it."""
    out = []
    for path in sorted(package.rglob("*.py")):
        text = path.read_text("utf-8")
        lines = text.splitlines()
        seen = set()
        for fn in ast.walk(ast.parse(text)):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                own = (isinstance(node, ast.ImportFrom) and node.level) or any(
                    n.startswith("tripletsearch")
                    for n in (
                        [node.module or ""]
                        if isinstance(node, ast.ImportFrom)
                        else [a.name for a in node.names]
                        if isinstance(node, ast.Import)
                        else []
                    )
                )
                if own and node.lineno not in seen:
                    seen.add(node.lineno)
                    said = (
                        "#" in lines[node.lineno - 1] or lines[node.lineno - 2].strip()[:1] == "#"
                    )
                    out.append((str(path.relative_to(ROOT)), node.lineno, len(node.names), said))
    return out


def test_few_imports_inside_the_services_functions_each_saying_why():
    """Each for an optional part or a measured start-up cost, its comment says which."""
    found = lazy_imports()
    assert sum(n for _, _, n, _ in found) <= MAX_LAZY_NAMES, found
    assert not [f"{f}:{line}" for f, line, _, said in found if not said]


def test_every_module_of_the_service_imports_first():
    """Each module imported first (the service's modules forgotten before each): an import
    circle that only some orders meet fails here."""
    pytest.importorskip("starlette")
    names = sorted(m for m in modules() if m.startswith("tripletsearch.serve"))
    code = (
        "import importlib, importlib.machinery as machinery, sys\n"
        # each source compiled once, not once an import (no bytecode files written here)
        "compiled, to_code = {}, machinery.SourceFileLoader.source_to_code\n"
        "def source_to_code(self, data, path, *, _optimize=-1):\n"
        "    if (path, data) not in compiled:\n"
        "        compiled[path, data] = to_code(self, data, path, _optimize=_optimize)\n"
        "    return compiled[path, data]\n"
        "machinery.SourceFileLoader.source_to_code = source_to_code\n"
        f"bad = []\nfor name in {names!r}:\n"
        "    for m in [m for m in sys.modules if m.startswith('tripletsearch.serve')]:\n"
        "        del sys.modules[m]\n"
        "    try:\n        importlib.import_module(name)\n"
        "    except Exception as exc:\n        bad.append(f'{name}: {exc!r}')\n"
        "print('\\n'.join(bad))\n"
    )
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert not got.stdout.strip(), got.stdout


def test_the_library_never_imports_the_service():
    """The command line adds the service's commands, lazily (the one exception)."""
    known = modules()
    for name, path in known.items():
        if name.startswith("tripletsearch.serve") or path == PACKAGE / "cli.py":
            continue
        reached = [t for _, t in imports(name, path, known) if t.startswith("tripletsearch.serve")]
        assert not reached, (name, reached)

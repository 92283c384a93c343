"""The size and shape rules of the code (CONTRIBUTING.md, "Structure"): classes and
functions small enough to read, headers split by concept, the service's modes behind one
interface, and every twin of a native kernel checked by a test marked ``twin``."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "python" / "tripletsearch"
HEADERS = ROOT / "cpp" / "include" / "tripletsearch"
MAX_CLASS, MAX_FUNCTION, MAX_HEADER = 400, 80, 400


def _docstring_lines(node: ast.AST) -> int:
    body = getattr(node, "body", None)
    if not body or not isinstance(body[0], ast.Expr):
        return 0
    value = body[0].value
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return body[0].end_lineno - body[0].lineno + 1
    return 0


def code_lines(node: ast.AST) -> int:
    """Lines of a def or class minus its docstring and those of the defs nested in it."""
    total = node.end_lineno - node.lineno + 1
    for inner in ast.walk(node):
        if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            total -= _docstring_lines(inner)
    return total


def _python_files():
    return sorted(p for p in PACKAGE.rglob("*.py"))


def test_code_lines_counts_code_not_docstrings():
    src = (
        'def f():\n    """One\n    two."""\n'
        '    def g():\n        "doc"\n        return 1\n    return g\n'
    )
    (fn,) = ast.parse(src).body
    assert code_lines(fn) == 7 - 2 - 1


def test_no_python_class_or_function_over_the_limits():
    over = []
    for path in _python_files():
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.ClassDef) and code_lines(node) > MAX_CLASS:
                over.append(f"class {path.relative_to(ROOT)}:{node.lineno} {node.name}")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if code_lines(node) > MAX_FUNCTION:
                    over.append(f"def {path.relative_to(ROOT)}:{node.lineno} {node.name}")
    assert not over, over


def test_no_header_over_the_limit():
    over = [
        (str(p.relative_to(ROOT)), n)
        for p in sorted(HEADERS.rglob("*.hpp"))
        if (n := len(p.read_text("utf-8").splitlines())) > MAX_HEADER
    ]
    assert not over, over


def _mode_names() -> set[str]:
    pytest.importorskip("starlette")
    from tripletsearch.serve.modes import MODES

    return set(MODES)


def _compares_a_mode_name(node: ast.AST, names: set[str]) -> bool:
    if not isinstance(node, ast.Compare):
        return False
    operands = [node.left, *node.comparators]
    for op in operands:
        if isinstance(op, ast.Constant) and op.value in names:
            return True
        if isinstance(op, (ast.Tuple, ast.List, ast.Set)) and any(
            isinstance(e, ast.Constant) and e.value in names for e in op.elts
        ):
            return True
    return False


def test_the_service_never_branches_on_a_modes_name():
    names = _mode_names()
    serve = PACKAGE / "serve"
    found = []
    for path in sorted(serve.rglob("*.py")):
        if "modes" in path.relative_to(serve).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if _compares_a_mode_name(node, names):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not found, found
    for js in sorted((serve / "static").rglob("*.js")):
        if "modes" in js.relative_to(serve / "static").parts:
            continue
        text = js.read_text("utf-8")
        hits = [m.group(0) for m in re.finditer(r"""[=!]==?\s*["'](\w+)["']""", text)]
        assert not [h for h in hits if re.sub(r"""[^\w]""", "", h) in names], (js, hits)


def test_the_mode_check_sees_a_branch():
    names = {"find", "mix"}
    branch = ast.parse('if row.mode == "find":\n    pass\n').body[0].test
    member = ast.parse('mode in ("find", "x")').body[0].value
    other = ast.parse('kind == "answer"').body[0].value
    assert _compares_a_mode_name(branch, names)
    assert _compares_a_mode_name(member, names)
    assert not _compares_a_mode_name(other, names)


# ---------------------------------------------------------------------- twins and tests
TESTS = ROOT / "tests"
GLUE = PACKAGE / "_testing.py"  # plugs twins into public classes (ReferenceEmbedding)


def _is_twin(node: ast.FunctionDef, module_marked: bool) -> bool:
    return module_marked or any("mark.twin" in ast.unparse(d) for d in node.decorator_list)


def _twin_test_sources() -> list[str]:
    """The source of every test marked ``twin``, with the module-level helpers it calls (and
    the glue module when it uses the glue), so a twin named through a helper counts."""
    glue = GLUE.read_text("utf-8")
    glue_names = {n.name for n in ast.parse(glue).body if hasattr(n, "name")}
    shared = (TESTS / "conftest.py").read_text("utf-8")  # MODELS: (public, twin) classes
    out = []
    for path in sorted(TESTS.rglob("test_*.py")):
        tree = ast.parse(path.read_text("utf-8"))
        module_marked = any(
            isinstance(n, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in n.targets)
            and "twin" in ast.unparse(n.value)
            for n in tree.body
        )
        helpers = {
            n.name: ast.unparse(n)
            for n in tree.body
            if isinstance(n, ast.FunctionDef) and not n.name.startswith("test")
        }
        # names bound by imports from the reference: a test naming the alias names the twin
        aliases = {
            (a.asname or a.name): a.name
            for n in tree.body
            if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("tripletsearch")
            for a in n.names
        }
        for node in tree.body:
            if not (isinstance(node, ast.FunctionDef) and node.name.startswith("test")):
                continue
            if not _is_twin(node, module_marked):
                continue
            text = ast.unparse(node)
            names = {x.id for x in ast.walk(node) if isinstance(x, ast.Name)}
            for n in names & set(helpers):
                text += "\n" + helpers[n]
                names |= {x.id for x in ast.walk(ast.parse(helpers[n])) if isinstance(x, ast.Name)}
            text += "".join(f"\n{aliases[n]}" for n in names if n in aliases)
            if names & {a for a, o in aliases.items() if o in ("_reference", "_testing")} or any(
                n in aliases for n in names
            ):
                text += "\n_reference"
            if names & glue_names:
                text += "\n" + glue
            if "MODELS" in names:
                text += "\n" + shared
            out.append(text)
    return out


def test_every_twin_is_named_by_a_twin_test():
    from tripletsearch import _reference

    sources = _twin_test_sources()
    assert len(sources) >= 40  # the marker is on the twin tests, not on a handful
    missing = []
    for key in _reference.TWINS:
        module, name = key.split(".")
        mod = __import__(f"tripletsearch._reference.{module}", fromlist=[name])
        assert name in mod.__all__, key
        assert callable(getattr(mod, name)), key
        if not any(re.search(rf"\b{name}\b", src) and "_reference" in src for src in sources):
            missing.append(key)
    assert not missing, f"no test marked twin names {missing}"


def test_every_kernel_of_the_extension_has_a_twin():
    from tripletsearch import _core, _reference

    mirrored = {e for entries in _reference.TWINS.values() for e in entries}
    entry_points = {
        name
        for name, obj in vars(_core).items()
        if not name.startswith("_")
        and (callable(obj) and not isinstance(obj, type) or name.endswith("Searcher"))
    }
    entry_points |= {"ItemStore", "Purpose"}
    assert not (entry_points - mirrored - set(_reference.NO_TWIN)), sorted(
        entry_points - mirrored - set(_reference.NO_TWIN)
    )
    assert not (mirrored - set(vars(_core))), sorted(mirrored - set(vars(_core)))
    assert not (set(_reference.NO_TWIN) - set(vars(_core)))


# what starts a browser, a database server, worker processes or a cluster
ONCE_SIGNS = ("chromium(", "postgres_bindir(", "local_cluster(", "LocalCluster(", "ServeProcess(")


def test_tests_of_servers_and_clusters_are_marked_once():
    """.ci/run runs them once, not again under the sanitizers (`-m "not once"`)."""
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        text = path.read_text()
        if any(sign in text for sign in ONCE_SIGNS):
            assert "pytest.mark.once" in text, f"{path.relative_to(ROOT)}: mark it once"


def test_the_browser_fixtures_mark_their_modules_once():
    """A conftest that starts what is run once makes every test module beside it once."""
    for conftest in sorted((ROOT / "tests").rglob("conftest.py")):
        if not any(sign in conftest.read_text() for sign in ONCE_SIGNS):
            continue
        for path in sorted(conftest.parent.rglob("test_*.py")):
            assert "pytest.mark.once" in path.read_text(), f"{path.relative_to(ROOT)}: once"


# ---------------------------------------------------------------------- the service's layout
SERVE = PACKAGE / "serve"
MAX_MODULE_LINES, MAX_MODULES_PER_FOLDER = 500, 12


def test_the_service_is_laid_out_in_small_packages():
    long = [
        (str(p.relative_to(ROOT)), n)
        for p in sorted(SERVE.rglob("*.py"))
        if (n := len(p.read_text("utf-8").splitlines())) > MAX_MODULE_LINES
    ]
    assert not long, long
    for folder in [SERVE, *sorted(p.parent for p in SERVE.rglob("__init__.py"))]:
        modules = sorted(folder.glob("*.py"))
        assert len(modules) <= MAX_MODULES_PER_FOLDER, (folder, len(modules))
        doc = ast.get_docstring(ast.parse((folder / "__init__.py").read_text("utf-8")))
        assert doc, f"{folder.relative_to(ROOT)}: its __init__ says what it holds"


# what each of the service's packages may import of the others (data flows down)
SERVE_IMPORTS = {
    "catalogue": set(),
    # the export declared once (its files' columns, the cell rule, the package): low
    "export": {"catalogue", "store"},
    "store": set(),
    "modes": {"catalogue", "store"},
    "service": {"catalogue", "store", "modes"},
    # a participant's whole part (identity, parts, outcome, ending, table; platform rules)
    "participation": {"catalogue", "store", "modes", "service"},
    "study": {"catalogue", "store", "modes", "service", "participation"},
    "collect": {"catalogue", "store", "modes", "service", "participation"},
    "web": {"catalogue", "store", "modes", "service", "study", "collect", "participation"},
    "commands": {"catalogue", "store", "modes", "service", "study", "collect", "participation"}
    | {"web"},
}
SERVE_MODULES = {
    "errors",
    "schema",
    "config",
    "experiment",
    "export",
    "cli",
    "roster",
    "clock",
}  # serve/*.py


def _serve_imports(path: Path) -> set[str]:
    """The service's packages and modules that ``path`` imports (first level under serve)."""
    module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    package = module.rsplit(".", 1)[0] if path.name != "__init__.py" else module
    found = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
                names = [name] if node.module else [f"{name}.{a.name}" for a in node.names]
            else:
                names = [node.module or ""]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[:2] == ["tripletsearch", "serve"] and len(parts) > 2:
                found.add(parts[2])
    return found


def test_the_services_packages_import_downwards_only():
    bad = []
    for package, allowed in SERVE_IMPORTS.items():
        for path in sorted((SERVE / package).rglob("*.py")):
            used = _serve_imports(path) - {package} - SERVE_MODULES - {"static"}
            if used - allowed:
                bad.append(f"{path.relative_to(ROOT)} imports {sorted(used - allowed)}")
    assert not bad, bad
    # the library never imports the service (the command line adds its commands, lazily)
    for path in sorted(PACKAGE.rglob("*.py")):
        if SERVE not in path.parents and path != PACKAGE / "cli.py":
            assert not _serve_imports(path), path


def test_the_triplet_agreement_is_written_once():
    """``(d_close < d_far) + 0.5 * (d_close == d_far)``: outcomes.triplet_agreement only."""
    rule = re.compile(r"\(\s*(\w+)\s*<\s*(\w+)\s*\)\s*\+\s*0\.5\s*\*\s*\(\s*\1\s*==\s*\2\s*\)")
    found = [
        str(p.relative_to(ROOT))
        for p in _python_files()
        if "_reference" not in p.parts and rule.search(p.read_text("utf-8"))
    ]
    assert found == ["python/tripletsearch/outcomes.py"], found


def test_the_simulated_people_live_in_one_module():
    people = re.compile(r"^class \w*(People|Person)\b", re.M)
    found = sorted(
        str(p.relative_to(ROOT))
        for root in ("python", "tests", "bench")
        for p in (ROOT / root).rglob("*.py")
        if people.search(p.read_text("utf-8"))
    )
    assert found == ["python/tripletsearch/people.py"], found


# ---------------------------------------------------------------------- the tests' layout


# sys.path changed: insert, append, extend, assignment (pytest's pythonpath setting instead)
CHANGES_PATH = re.compile(r"\bsys" + r"\.path\s*(\.\s*(insert|append|extend)\b|\+?=[^=]|\[)")


def test_no_test_module_imports_another_or_changes_the_path():
    tests = ROOT / "tests"
    names = {p.stem for p in tests.rglob("test_*.py")}
    for path in sorted(tests.rglob("*.py")):
        text = path.read_text("utf-8")
        assert not CHANGES_PATH.search(text), f"{path.relative_to(ROOT)} changes the path"
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ImportFrom) and node.module:
                last = node.module.split(".")[-1]
                assert last not in names, f"{path.relative_to(ROOT)} imports {node.module}"
            elif isinstance(node, ast.Import):
                for a in node.names:
                    assert a.name.split(".")[-1] not in names, f"{path.relative_to(ROOT)}"


def _layout_folders() -> list[str]:
    """The folders CONTRIBUTING.md's layout lists (its first code block after "## Layout")."""
    text = (ROOT / "CONTRIBUTING.md").read_text("utf-8")
    block = text[text.index("## Layout") :].split("```")[1]
    return [line.split()[0] for line in block.splitlines() if line and not line[0].isspace()]


def test_contributings_layout_is_the_tree():
    listed = _layout_folders()
    assert len(listed) == len(set(listed)), "a folder listed twice"
    missing = [f for f in listed if not (ROOT / f).is_dir()]
    assert not missing, f"listed but not in the tree: {missing}"
    expected = {"cpp/include/tripletsearch/", "cpp/bindings/", "bench/", "tests/"}
    headers = ROOT / "cpp/include/tripletsearch"
    expected |= {f"{p.relative_to(ROOT)}/" for p in headers.iterdir() if p.is_dir()}
    expected |= {f"{p.parent.relative_to(ROOT)}/" for p in PACKAGE.rglob("__init__.py")}
    expected |= {f"{p.parent.relative_to(ROOT)}/" for p in (ROOT / "tests").rglob("test_*.py")}
    expected |= {f"{p.parent.relative_to(ROOT)}/" for p in (SERVE / "static").rglob("*.js")}
    unlisted = sorted(expected - set(listed))
    assert not unlisted, f"in the tree but not in CONTRIBUTING.md's layout: {unlisted}"

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

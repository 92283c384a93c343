"""The package's structure: the reference stands alone, one source per default, the typed
boundary (stubs), one seeding scheme in both languages."""

import ast
import inspect
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import tripletsearch as ts
from tripletsearch import _core
from tripletsearch._reference import rng as ref_rng

PACKAGE = Path(ts.__file__).parent

HIDE_CORE = """
import importlib.abc, sys

class HideCore(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "tripletsearch._core":
            raise ImportError("tripletsearch._core hidden by the test")
        return None

sys.meta_path.insert(0, HideCore())
"""


def run_without_core(code: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", HIDE_CORE + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        cwd=str(Path.home()),
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_reference_runs_without_the_extension():
    out = run_without_core(
        """
        import numpy as np
        import tripletsearch
        from tripletsearch._reference import (
            choice, continuous, discrete, embedding, oracles, resample, rng, theory,
        )
        X = np.random.default_rng(0).normal(size=(30, 3))
        T = np.random.default_rng(1).integers(0, 30, size=(200, 3))
        print(round(float(oracles.GammaCKL(3.0).log_likelihood(X, T)), 6))
        s = discrete.DiscreteSearcher(X, selection="infogain", seed=1)
        q = s.select()
        s.update(q, 0)
        c = continuous.ContinuousSearcher(dim=2, particles=64, seed=1)
        a, b = c.ask()
        c.tell(True)
        print(len(q), c.n_queries)
        assert "tripletsearch._core" not in sys.modules
        try:
            tripletsearch.GammaCKL
        except ImportError as exc:
            print("public API needs the core:", exc)
        """
    )
    lines = out.splitlines()
    assert lines[1] == "2 1"
    assert "hidden by the test" in lines[2]
    # the same number as the native kernel
    X = __import__("numpy").random.default_rng(0).normal(size=(30, 3))
    T = __import__("numpy").random.default_rng(1).integers(0, 30, size=(200, 3))
    assert float(lines[0]) == pytest.approx(ts.GammaCKL(3.0).log_likelihood(X, T), rel=1e-9)


def test_import_tripletsearch_loads_numpy_only():
    out = run_without_core(
        """
        import tripletsearch
        print(sorted(m for m in sys.modules if m.startswith("tripletsearch")))
        print(tripletsearch.__version__)
        """
    )
    assert out.splitlines()[0] == "['tripletsearch']"


def test_the_library_and_its_command_line_do_not_import_the_service():
    """The service's dependencies are an optional extra: the library, the public API and
    the command line's parser never import them; the service imports them when run."""
    code = textwrap.dedent(
        """
        import sys
        import tripletsearch as ts
        ts.GammaCKL(3.0), ts.DiscreteSearch, ts.ContinuousSearch, ts.Embedding
        from tripletsearch import cli
        try:
            cli.main(["--help"])
        except SystemExit:
            pass
        heavy = {"starlette", "uvicorn", "sqlalchemy", "httpx", "anyio"}
        print(sorted(heavy & {m.split(".")[0] for m in sys.modules}))
        print("tripletsearch.serve.web.app" in sys.modules)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-2:] == ["[]", "False"]


def _imported_modules(path: Path) -> set:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):  # relative: "." (this package), ".." (above)
            names.add("." * node.level if node.level else node.module.split(".")[0])
    return names


@pytest.mark.parametrize(
    "path", sorted((PACKAGE / "_reference").glob("*.py")), ids=lambda p: p.name
)
def test_reference_imports_numpy_and_the_stdlib_only(path):
    stdlib = getattr(sys, "stdlib_module_names", {"math", "enum", "typing"})  # 3.10+
    allowed = {"numpy", "__future__", "."} | set(stdlib)
    assert _imported_modules(path) <= allowed


# ------------------------------------------------------------------ one source per default


def _defaults(func) -> dict:
    return {
        k: v.default
        for k, v in inspect.signature(func).parameters.items()
        if v.default is not inspect.Parameter.empty
    }


def test_continuous_defaults_are_the_cores():
    core = _core.ContinuousConfig()
    for func in (ts.ContinuousSearch.__init__, ts.simulate_continuous):
        py = _defaults(func)
        assert core.method == _core.ContinuousMethod.Global
        assert py["method"] == "global"
        assert py["alpha"] == core.alpha and py["lapse"] == core.lapse
        assert list(core.low) == [py["bounds"][0]] * core.dim
        assert list(core.high) == [py["bounds"][1]] * core.dim


def test_discrete_defaults_are_the_cores():
    core = _core.SearchConfig()
    for func in (ts.DiscreteSearch.__init__, ts.simulate_discrete):
        py = _defaults(func)
        assert py["method"] == "gamma-ckl" and core.method == _core.SearchMethod.GammaCKL
        for name in ("r", "sigma", "n_choices", "lapse"):
            assert py[name] == getattr(core, name), name
    # a session infers the user's gamma by default; a simulation's default user and
    # searcher share the core's gamma (the core's gamma is the filler of "auto")
    assert _defaults(ts.DiscreteSearch.__init__)["gamma"] == "auto" and not core.gamma_auto
    assert _defaults(ts.simulate_discrete)["gamma"] == core.gamma


def test_embedding_defaults_are_the_cores():
    core, py = _core.TrainOptions(), _defaults(ts.Embedding.__init__)
    assert py["optimizer"] == "lbfgs" and core.optimizer == _core.Optimizer.LBFGS
    for name in ("max_epochs", "tol", "l2", "learn_gamma"):
        assert py[name] == getattr(core, name), name


@pytest.mark.parametrize(
    "dim,method,expected",
    [(4, "posterior", 4096), (3, "posterior", 2048), (5, "global", 1024), (2, "global", 1024)],
)
def test_default_particles_by_method_and_dimension(dim, method, expected):
    s = ts.ContinuousSearch(dim, 3.0, method=method, random_state=0)
    assert s.n_particles == expected
    # what the native searcher holds: up to d = 3 a grid of floor(P^(1/d))^d cell centres
    grid = int(expected ** (1 / dim) + 1e-9) ** dim if dim <= 3 else expected
    assert s._s.n_particles == grid
    assert ts.ContinuousSearch(dim, 3.0, method=method, n_particles=100).n_particles == 100


def test_hypothesis_test_has_no_particles_and_a_plan():
    s = ts.ContinuousSearch(2, 3.0, method="hypothesis-test")
    assert s.n_particles == 0 and s._s.n_particles == 0
    assert s.test_plan == ts.continuous.hypothesis_test_plan(2, 3.0)
    assert ts.ContinuousSearch.from_dict(s.to_dict()).test_plan == s.test_plan


# ------------------------------------------------------------------ the typed boundary


def _stub_names():
    tree = ast.parse((PACKAGE / "_core.pyi").read_text())
    top, members = set(), {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            top.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            top.add(node.target.id)
        if isinstance(node, ast.ClassDef):
            members[node.name] = {
                n.name if isinstance(n, ast.FunctionDef) else n.target.id
                for n in node.body
                if isinstance(n, ast.FunctionDef)
                or (isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name))
            }
    return top, members


def test_stub_matches_the_extension():
    """_core.pyi (pybind11-stubgen, checked in) declares what the extension defines."""
    top, members = _stub_names()
    public = {n for n in dir(_core) if not n.startswith("_")}
    assert top - {"__all__"} == public
    for cls, names in members.items():
        have = {n for n in dir(getattr(_core, cls)) if not n.startswith("_")}
        assert {n for n in names if not n.startswith("_")} == have, cls


def test_configs_are_typed_objects_not_codes():
    with pytest.raises(TypeError):
        _core.SearchConfig(method=0)
    with pytest.raises(TypeError):
        _core.SearchConfig(3.0)  # keyword-only
    with pytest.raises(ValueError, match=r"n_choices: must lie in \[2, 64\], got 65"):
        _core.SearchConfig(n_choices=65)
    with pytest.raises(ValueError, match="alpha: must lie in"):
        _core.ContinuousConfig(alpha=1.0)
    with pytest.raises(ValueError, match="cells_per_axis: the hypothesis test needs its plan"):
        _core.ContinuousSearcher(
            _core.ContinuousConfig(method=_core.ContinuousMethod.HypothesisTest), 0, 1
        )


# ------------------------------------------------------------------ seeding


@pytest.mark.twin
def test_stream_purposes_agree_with_the_twin():
    assert {p.name: int(p.value) for p in ref_rng.Purpose} == {
        name: int(p) for name, p in _core.Purpose.__members__.items()
    }
    for p in ref_rng.Purpose:
        for seed, index in ((0, 0), (12345, 7), (2**64 - 1, 3)):
            assert ref_rng.child_seed(seed, p, index) == _core.child_seed(
                seed, getattr(_core.Purpose, p.name), index
            )


def test_the_version_lives_in_one_place():
    import importlib.metadata
    import re

    import tripletsearch

    root = Path(__file__).resolve().parents[2]
    pyproject = (root / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject
    assert not re.search(r"^version\s*=", pyproject, re.M)  # no second copy
    assert importlib.metadata.version("tripletsearch") == tripletsearch.__version__
    changelog = (root / "CHANGELOG.md").read_text()
    assert f"## {tripletsearch.__version__} " in changelog  # the release has its entry


# ------------------------------------------------------------------ private names stay inside


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported_names(source: str, package: str) -> list[tuple[int, str]]:
    """(line, dotted name) of everything ``source`` imports, anywhere in it (a function's
    lazy imports too), relative imports resolved from ``package``: a module (``import a.b``,
    ``from a import b`` as ``a.b``) and each name taken from it (``a.b.name``)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([node.module] if node.module else []))
            out += [(node.lineno, base)] + [(node.lineno, f"{base}.{a.name}") for a in node.names]
    return out


def _private_owner(name: str) -> str | None:
    """The package whose private name ``name`` reaches (the parent of its first component
    that begins with ``_`` and is not a dunder), None for a public name. A private name of
    a plain module (``outcomes._ints``) is its package's."""
    parts = name.split(".")
    for k, part in enumerate(parts[1:], start=1):
        if part.startswith("_") and not (part.startswith("__") and part.endswith("__")):
            owner = ".".join(parts[:k])
            is_package = (PACKAGE.parent / owner.replace(".", "/")).is_dir()
            return owner if is_package else owner.rpartition(".")[0]
    return None


def reach_ins(module: str, source: str, is_package: bool = False) -> list[str]:
    """The imports of ``module`` (its ``source``) that reach a package's private names from
    outside that package, and, in the service, any private name of the library outside the
    service (``tripletsearch._core``, ``tripletsearch._validation``, ...)."""
    package = module if is_package else module.rpartition(".")[0]
    in_serve = module == "tripletsearch.serve" or module.startswith("tripletsearch.serve.")
    found = []
    for line, name in _imported_names(source, package):
        if not (name == "tripletsearch" or name.startswith("tripletsearch.")):
            continue
        owner = _private_owner(name)
        if owner is None:
            continue
        if not (module == owner or module.startswith(owner + ".")):
            found.append(f"{module}:{line} imports {name}")
        elif in_serve and not name.startswith("tripletsearch.serve."):
            found.append(f"{module}:{line} imports {name} (the service: public names only)")
    return found


def test_no_module_imports_another_packages_private_names():
    found = [
        hit
        for path in sorted(PACKAGE.rglob("*.py"))
        for hit in reach_ins(_module_name(path), path.read_text("utf-8"), path.stem == "__init__")
    ]
    assert not found, "\n".join(found)


@pytest.mark.parametrize(
    "module, source, bad",
    [
        ("tripletsearch.serve.collect.refitter", "from ...collect._sampler import REFIT_MIN", 1),
        ("tripletsearch.serve.collect.refitter", "from ...collect import REFIT_MIN", 0),
        ("tripletsearch.serve.modes.find", "def f():\n    from ..._core import ItemStore", 1),
        ("tripletsearch.serve.modes.find", "import tripletsearch._validation", 1),
        ("tripletsearch.serve.web.app", "from ..store._schema import X", 1),
        ("tripletsearch.serve.store.tables", "from ._schema import X", 0),
        ("tripletsearch.reproduce.collect", "from ..collect._timing import f", 1),
        ("tripletsearch.collect._methods", "from .. import _core\nfrom ._sampler import X", 0),
        ("tripletsearch.discrete._session", "from .._validation import check_int", 0),
        ("tripletsearch.people", "from .embedding import _train", 1),
    ],
)
def test_the_private_name_check_sees_a_reach_in(module, source, bad):
    assert bool(reach_ins(module, source)) == bool(bad)


# ------------------------------------------------------------------ private attributes stay inside

# Reach-ins the attribute check allows, as "module: name" (none: pybind11's classes of
# ``_core`` are declared in a stub, not in a module of the package, so they own no name here).
ALLOWED_REACH_INS: frozenset[str] = frozenset()


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _class_private_names(tree: ast.AST) -> set[str]:
    """The private attribute names a module's classes define: their bodies' methods and
    attributes, and what their methods assign on ``self`` or ``cls``."""
    names = set()
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        for node in cls.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Assign):
                names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names.add(node.target.id)
        for node in ast.walk(cls):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.ctx, ast.Store)
                and isinstance(node.value, ast.Name)
                and node.value.id in ("self", "cls")
            ):
                names.add(node.attr)
    return {n for n in names if _is_private(n)}


def _own_instances(func: ast.AST) -> set[str]:
    """The names a function binds to an object of its own class: ``self``, ``cls`` and
    what it assigns from ``cls(...)``, ``cls.__new__(cls)`` or ``copy.copy(self)``."""
    own = {"self", "cls"}
    for node in ast.walk(func):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            f = node.value.func
            new = (
                (isinstance(f, ast.Name) and f.id == "cls")
                or (
                    isinstance(f, ast.Attribute)
                    and isinstance(f.value, ast.Name)
                    and (f.value.id, f.attr) in (("cls", "__new__"), ("copy", "copy"))
                )
            ) and all(isinstance(a, ast.Name) and a.id in own for a in node.value.args)
            if new:
                own |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return own


def attribute_reach_ins(sources: dict[str, str]) -> list[str]:
    """``x._name`` (read, written or called; ``getattr(x, "_name")`` too) in a module of
    ``sources`` ({module: source}) where ``_name`` is a private name that another module's
    class defines and no class of this module does, and ``x`` is not the function's own
    object (``self``, ``cls``, ``super()``, a new instance of ``cls``). Names are matched,
    not types: a module whose own class defines ``_x`` may read any object's ``_x``."""
    trees = {module: ast.parse(source) for module, source in sources.items()}
    own = {module: _class_private_names(tree) for module, tree in trees.items()}
    owners: dict[str, list[str]] = {}
    for module, names in own.items():
        for name in names:
            owners.setdefault(name, []).append(module)
    found: list[str] = []
    for module, tree in trees.items():
        _check_node(tree, {"self", "cls"}, module, own[module], owners, found)
    return found


def _private_attribute(node: ast.AST) -> tuple[ast.AST, str] | None:
    """(object, name) of ``obj._name`` or ``getattr(obj, "_name", ...)`` (and set-, has-,
    delattr), None for anything else."""
    if isinstance(node, ast.Attribute) and _is_private(node.attr):
        return node.value, node.attr
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("getattr", "setattr", "hasattr", "delattr")
        and len(node.args) >= 2
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
        and _is_private(node.args[1].value)
    ):
        return node.args[0], node.args[1].value
    return None


def _check_node(
    node: ast.AST,
    selves: set[str],
    module: str,
    own: set[str],
    owners: dict[str, list[str]],
    found: list[str],
) -> None:
    """:func:`attribute_reach_ins` of ``node`` and what it holds (``selves``: the names of
    the enclosing function's own object)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        selves = _own_instances(node)
    hit = _private_attribute(node)
    if hit is not None:
        obj, name = hit
        if not (
            name in own
            or name not in owners
            or (isinstance(obj, ast.Name) and obj.id in selves)
            or (isinstance(obj, ast.Call) and ast.unparse(obj.func) == "super")
            or f"{module}: {name}" in ALLOWED_REACH_INS
        ):
            found.append(
                f"{module}:{node.lineno} {ast.unparse(node)} reaches {name} of "
                f"{', '.join(sorted(owners[name]))}"
            )
    for child in ast.iter_child_nodes(node):
        _check_node(child, selves, module, own, owners, found)


def test_no_module_reaches_another_modules_private_attributes():
    sources = {
        _module_name(path): path.read_text("utf-8") for path in sorted(PACKAGE.rglob("*.py"))
    }
    found = attribute_reach_ins(sources)
    assert not found, "\n".join(found)


_OWNER = "class A:\n    _k = 1\n\n    def __init__(self):\n        self._x = 0\n"


@pytest.mark.parametrize(
    "source, bad",
    [
        ("def f(a):\n    return a._x", 1),  # a read
        ("def f(a):\n    a._x = 2", 1),  # a write
        ("def f(a):\n    return a._k", 1),  # a class attribute
        ("def f(o):\n    return o.oracle._x(2)", 1),  # a call, through an attribute
        ("def f(a):\n    return getattr(a, '_x')", 1),
        ("def f(a):\n    return a.x", 0),  # public
        ("def f(a):\n    return a._y", 0),  # no class of the package defines _y
        ("import sys\n\ndef f():\n    return sys._getframe()", 0),
        ("class B:\n    def f(self):\n        return self._x", 0),  # its own (a part of A)
        ("class B:\n    def f(self):\n        return super()._x", 0),
        ("class B:\n    @classmethod\n    def f(cls):\n        b = cls()\n        b._x = 1", 0),
        ("class B:\n    def f(self, other):\n        b = cls()\n        other._x = 1", 1),
        ("class B:\n    def __init__(self):\n        self._x = 1\n\ndef f(b):\n    b._x = 2", 0),
    ],
)
def test_the_attribute_check_sees_a_reach_in(source, bad):
    found = attribute_reach_ins({"tripletsearch.a": _OWNER, "tripletsearch.b": source})
    assert len(found) == bad, found
    assert not attribute_reach_ins({"tripletsearch.a": _OWNER + "\n\n" + source})  # its own


# ------------------------------------------------------------------ no import circle in the package


def import_circles(sources: dict[str, str], packages: set[str]) -> list[list[str]]:
    """The circles of imports among ``sources`` ({module: source}; ``packages``: the modules
    that are packages), counting every import: inside functions and ``if TYPE_CHECKING``
    too. A module's import of a package it belongs to is not counted (``from .. import
    _core`` is the module ``tripletsearch._core``)."""
    graph = {}
    for module, source in sources.items():
        package = module if module in packages else module.rpartition(".")[0]
        graph[module] = {
            name
            for _, name in _imported_names(source, package)
            if name in sources and name != module and not module.startswith(name + ".")
        }
    circles, done = [], set()
    for start in sorted(graph):  # the circle through each module, found once
        if start not in done:
            circle = {m for m in _reach(graph, start) if start in _reach(graph, m)}
            done |= circle
            if len(circle) > 1:
                circles.append(sorted(circle))
    return circles


def _reach(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, stack = {start}, [start]
    while stack:
        for nxt in graph[stack.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen


def test_the_package_has_no_import_circle():
    """The library and the service (whose layers tests/project/test_layers.py checks)."""
    paths = sorted(PACKAGE.rglob("*.py"))
    sources = {_module_name(p): p.read_text("utf-8") for p in paths}
    packages = {_module_name(p) for p in paths if p.stem == "__init__"}
    circles = import_circles(sources, packages)
    assert not circles, circles


@pytest.mark.parametrize(
    "sources, circles",
    [
        ({"t.a": "from .b import X", "t.b": "Y = 1"}, 0),
        ({"t.a": "from .b import X", "t.b": "def f():\n    from .a import Y"}, 1),
        (
            {
                "t.a": "from .b import X",
                "t.b": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import S",
            },
            1,
        ),
        ({"t.a": "from . import b", "t.b": "from . import c", "t.c": "from . import a"}, 1),
        ({"t": "from .a import X", "t.a": "from . import _core", "t._core": ""}, 0),
    ],
)
def test_the_circle_check_sees_a_circle(sources, circles):
    assert len(import_circles(sources, {"t"})) == circles

"""The documentation's examples run: every ``code-block:: python`` of a user-guide page,
in order, in a fresh interpreter (as a reader would paste them)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guide"
# pages whose examples need what a test cannot have
SKIP = {"serving.rst": "reads the export of a recorded database"}  # its TOML: below


def python_blocks(text: str) -> list[str]:
    """The bodies of the page's ``.. code-block:: python`` directives, dedented."""
    blocks = []
    for m in re.finditer(r"^\.\. code-block:: python\n\n((?:   .*\n|\n)+)", text, re.M):
        lines = [line[3:] for line in m.group(1).splitlines()]
        blocks.append("\n".join(lines).strip() + "\n")
    return blocks


PAGES = sorted(p.name for p in GUIDE.glob("*.rst")) if GUIDE.is_dir() else []


@pytest.mark.skipif(not PAGES, reason="docs/ not next to the tests (installed package)")
@pytest.mark.parametrize("page", PAGES)
def test_guide_examples_run(page, tmp_path):
    if page in SKIP:
        pytest.skip(SKIP[page])
    code = "\n".join(python_blocks((GUIDE / page).read_text()))
    if not code.strip():
        pytest.skip("no Python example")
    script = tmp_path / "example.py"
    script.write_text("import matplotlib\nmatplotlib.use('Agg')\n" + code)
    run = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning", str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]


def test_every_guide_page_has_its_examples_found():
    # the pattern must not silently find nothing
    assert len(python_blocks((GUIDE / "embedding.rst").read_text())) == 7


def toml_blocks(text: str) -> list[str]:
    """The bodies of the page's ``.. code-block:: toml`` directives, dedented."""
    return [
        "\n".join(line[3:] for line in m.group(1).splitlines()).strip() + "\n"
        for m in re.finditer(r"^\.\. code-block:: toml\n\n((?:   .*\n|\n)+)", text, re.M)
    ]


@pytest.mark.skipif(not PAGES, reason="docs/ not next to the tests (installed package)")
def test_the_guides_study_and_collect_files_are_complete_and_load(tmp_path, recwarn):
    """The serving guide's example files run as they are: every key of each kind given."""
    pytest.importorskip("starlette")
    from tripletsearch.serve.collect import load_collect
    from tripletsearch.serve.collect.file import _DEFAULTS
    from tripletsearch.serve.study import load_study
    from tripletsearch.serve.study.file import _KEYS

    blocks = toml_blocks((GUIDE / "serving.rst").read_text())
    assert len(blocks) == 2
    study_file, collect_file = tmp_path / "study.toml", tmp_path / "collect.toml"
    study_file.write_text(blocks[0])
    collect_file.write_text(blocks[1])
    study, collect = load_study(study_file), load_collect(collect_file)
    assert (study.name, study.named) == ("colour-study", True)
    assert (collect.name, collect.named) == ("colours-alike", True)
    assert not [w for w in recwarn if issubclass(w.category, DeprecationWarning)]

    def keys(block):
        return {line.split("=")[0].strip() for line in block.splitlines() if "=" in line}

    assert keys(blocks[0]) == _KEYS - {"embeddings"}  # (a table of files: the README's)
    assert keys(blocks[1]) == (set(_DEFAULTS) | {"catalogue"})

"""The service tests' shared fixtures: a search server on the colour demo, in process, and
the collect and study files (one set of keys, each test naming what it needs otherwise)."""

import contextlib

import pytest

from serve.helpers import ADMIN, DemoServer, collect_toml, study_toml, write_design
from tripletsearch.serve import create_app, demo_catalogue


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The demo's search server over a SQLite file, admin ``ADMIN``: a
    :class:`~serve.helpers.DemoServer` (``client``, ``app``, ``db``, ``url``, and ``base``
    for a browser; it unpacks as ``client, app, db``).

    Seeded: the simulated searches of a module replay (the statistical bounds hold for
    this seed, not by chance on each run). One per module.
    """
    db = tmp_path_factory.mktemp("db") / "sessions.sqlite"

    def make_app():
        return create_app(demo_catalogue(), f"sqlite:///{db}", admin_token=ADMIN, random_state=0)

    with contextlib.ExitStack() as stack:
        yield DemoServer(make_app, db, stack)


@pytest.fixture(scope="session")
def collect_file():
    """``collect_file(folder, name="collect.toml", **keys)``: a collect file written in
    ``folder`` (:func:`~serve.helpers.collect_toml`: the shared keys with ``keys``, None
    leaves one out), with its catalogue ``items`` beside it when it names that; its path."""

    def write(folder, name="collect.toml", **keys):
        return write_design(folder, name, collect_toml(**keys))

    return write


@pytest.fixture(scope="session")
def study_file():
    """``study_file(folder, name="study.toml", **keys)``: a study file written in ``folder``
    (:func:`~serve.helpers.study_toml`: the shared keys with ``keys``, None leaves one out),
    with its catalogue ``items`` beside it when it names that; its path."""

    def write(folder, name="study.toml", **keys):
        return write_design(folder, name, study_toml(**keys))

    return write

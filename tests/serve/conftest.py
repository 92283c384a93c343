"""The service tests' shared fixtures: a search server on the colour demo, in process, and
the collect and study files (one set of keys, each test naming what it needs otherwise)."""

import contextlib

import pytest

from serve.helpers import ADMIN, DemoServer, write_collect, write_study
from tripletsearch.serve import create_app, demo_catalogue
from tripletsearch.serve.config import ServeConfig


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
        return create_app(
            demo_catalogue(),
            f"sqlite:///{db}",
            config=ServeConfig(admin_token=ADMIN, random_state=0),
        )

    with contextlib.ExitStack() as stack:
        yield DemoServer(make_app, db, stack)


@pytest.fixture(scope="session")
def collect_file():
    """``collect_file(folder, file="collect.toml", **keys)``: a collect file written in
    ``folder`` (the shared keys with ``keys``, None leaving one out), with its catalogue
    ``items`` beside it when it names that; its path (:func:`~serve.helpers.write_collect`)."""
    return write_collect


@pytest.fixture(scope="session")
def study_file():
    """``study_file(folder, file="study.toml", **keys)``: a study file written in ``folder``
    (the shared keys with ``keys``, None leaving one out), with its catalogue ``items``
    beside it when it names that; its path (:func:`~serve.helpers.write_study`)."""
    return write_study

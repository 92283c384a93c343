"""The service tests' shared fixture: a search server on the colour demo, in process."""

import pytest

from serve.helpers import ADMIN, in_process
from tripletsearch.serve import create_app, demo_catalogue


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """``(client, app, db)``: the demo's search server over a SQLite file, admin ``ADMIN``.

    Seeded: the simulated searches of a module replay (the statistical bounds hold for
    this seed, not by chance on each run). One per module.
    """
    db = tmp_path_factory.mktemp("db") / "sessions.sqlite"
    app = create_app(demo_catalogue(), f"sqlite:///{db}", admin_token=ADMIN, random_state=0)
    with in_process(app) as client:
        yield client, app, db

"""The collect tests' people answer in process, instantly: the server's clock would flag
every one of them (a median under a quarter second per screen). The check is off here but
in the tests about it, which turn it on (``clock_check``)."""

import pytest

from tripletsearch.serve.collect import quality


@pytest.fixture(autouse=True)
def instant_people(monkeypatch, request):
    if "clock_check" not in request.fixturenames:
        monkeypatch.setattr(quality, "FAST_SERVER_MS", 0)


@pytest.fixture
def clock_check():
    """The server's clock check as it ships (a test about it asks for this fixture)."""
    return quality.FAST_SERVER_MS

"""Ten seconds of the catalogue-scale load (bench/serve_load.py): a million items of ten
dimensions, one worker with every core, 200 people with think times of mean 10 s arriving
over 3 s, and a --memory that holds fewer searches than there are people, so searches are
evicted and rebuilt under load. Every confirmed answer is in the database once, no request
fails, the worker stays within --memory. Latency is the bench's (ten minutes), not this."""

from __future__ import annotations

import pytest
from serve_load import run_load  # bench/ (pytest's pythonpath)

pytestmark = [pytest.mark.once, pytest.mark.long]


def test_a_million_items_under_load_within_memory():
    res = run_load(
        people=200,
        seconds=10.0,
        think=10.0,
        workers=1,
        catalogue="1000000x10",
        memory="1GB",
        arrivals=3.0,
    )
    summary = res.summary()
    print(summary)
    assert res.errors == 0 and res.answers >= 100  # (one answer in 10 s each)
    assert res.lost == res.doubled == res.unexpected == 0
    # the guarantee documented: within --memory but for the catalogue itself (its float64
    # embedding and float32 store; a busy machine queues requests, whose memory in flight
    # may pass the margin kept for them: 1.01 GiB seen once on a loaded 2-core machine)
    catalogue_bytes = 1_000_000 * 10 * (8 + 4)
    assert summary["peak_pss_max_worker_bytes"] <= (1 << 30) + catalogue_bytes
    assert summary["evictions"] > 0  # the budget held fewer searches than people

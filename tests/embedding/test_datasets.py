"""Bundled data sets and the CSV loader."""

import gzip

import numpy as np
import pytest

from tripletsearch import datasets


def test_load_music_matches_the_paper_description():
    d = datasets.load_music()
    assert d.triplets.shape == (9107, 3) and d.triplets.dtype == np.int64
    assert d.n_items == 412 and len(np.unique(d.triplets)) == 400
    assert len(d.truth) == 412 and set(d.truth) >= {"rock", "pop", "hiphop"}
    assert "cblearn-benchmark" in d.description


@pytest.mark.parametrize("n,m", [(300, 17611), (30, 20086)])
def test_load_alien_eggs(n, m):
    d = datasets.load_alien_eggs(n)
    assert d.triplets.shape == (m, 3) and d.n_items == n
    assert d.truth.shape == (n,) and np.all(np.diff(np.sort(d.truth)) > 0)
    assert d.participants.shape == (m,)
    # the humans mostly agree with the 1-D ground truth (SOURCE.md: 79.7% and 86.3%)
    t, i, j = d.triplets.T
    closer = np.abs(d.truth[i] - d.truth[t]) < np.abs(d.truth[j] - d.truth[t])
    assert 0.75 < closer.mean() < 0.9


def test_bundled_files_match_shared_data():
    shared = "../shared/data/music_aset400_vdmaaten/triplets.csv"
    try:
        T = datasets.load_triplets_csv(shared)
    except ValueError:
        pytest.skip("../shared is not available")
    np.testing.assert_array_equal(T, datasets.load_music().triplets)


SHARED_EGGS = {30: "alien_eggs_n30_next2015", 300: "alien_eggs_n300_salmon"}


@pytest.mark.parametrize("n", [30, 300])
def test_bundled_eggs_keep_the_sampler_and_response_times_of_shared_data(n):
    import csv
    from pathlib import Path

    path = Path(__file__).resolve().parents[3] / "shared" / "data" / SHARED_EGGS[n]
    if not path.is_dir():
        pytest.skip("../shared is not available")
    with open(path / "triplets.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    d = datasets.load_alien_eggs(n)
    expected = np.array([[int(r[k]) for k in ("head", "closer", "farther")] for r in rows])
    np.testing.assert_array_equal(d.triplets, expected)
    assert d.sampler.tolist() == [r["sampler"] for r in rows]
    if n == 30:
        seconds = [float(r["response_time_s"]) for r in rows]
    else:
        seconds = [int(r["response_time_ms"]) / 1000 for r in rows]
    np.testing.assert_array_equal(d.response_time_s, seconds)


def test_eggs_samplers_as_published():
    d30, d300 = datasets.load_alien_eggs(30), datasets.load_alien_eggs(300)
    labels, counts = np.unique(d30.sampler, return_counts=True)
    assert dict(zip(labels, counts)) == {
        "CrowdKernel": 3979,
        "RandomSampling": 4092,
        "STE": 3982,
        "Test": 4014,
        "UncertaintySampling": 4019,
    }
    labels, counts = np.unique(d300.sampler, return_counts=True)
    assert dict(zip(labels, counts)) == {"Random": 7456, "Test": 2557, "Uncertainty": 7598}
    # medians of the published times (SOURCE.md: salmon's look like milliseconds)
    assert np.median(d30.response_time_s) == pytest.approx(1.744)
    assert np.median(d300.response_time_s) == pytest.approx(2.008)
    assert datasets.load_music().sampler is None


def test_load_alien_eggs_bad_n():
    with pytest.raises(ValueError, match="n: the alien-eggs sets have n = 300 or n = 30"):
        datasets.load_alien_eggs(100)


def test_load_triplets_csv(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("head,closer,farther,extra\n0,1,2,x\n3,1,0,y\n")
    np.testing.assert_array_equal(datasets.load_triplets_csv(p), [[0, 1, 2], [3, 1, 0]])
    np.testing.assert_array_equal(
        datasets.load_triplets_csv(p, columns=("farther", "closer", "head")), [[2, 1, 0], [0, 1, 3]]
    )
    gz = tmp_path / "t.csv.gz"
    with gzip.open(gz, "wt") as f:
        f.write("a,b,c\n5,6,7\n")
    np.testing.assert_array_equal(datasets.load_triplets_csv(gz), [[5, 6, 7]])


def test_load_triplets_csv_bad_input(tmp_path):
    with pytest.raises(ValueError, match="path: no such file"):
        datasets.load_triplets_csv(tmp_path / "missing.csv")
    p = tmp_path / "bad.csv"
    p.write_text("h,c,f\n0,1,2\n0,1.5,2\n")
    with pytest.raises(ValueError, match="path: line 3 of bad.csv is not three integer"):
        datasets.load_triplets_csv(p)
    p.write_text("h,c,f\n0,1,-2\n")
    with pytest.raises(ValueError, match="path: negative index"):
        datasets.load_triplets_csv(p)
    p.write_text("h,c,f\n0,1,9\n")
    with pytest.raises(ValueError, match="triplets: index 9"):
        datasets.load_triplets_csv(p, n_items=5)
    with pytest.raises(ValueError, match="columns: "):
        datasets.load_triplets_csv(p, columns=("x", "y", "z"))
    p.write_text("")
    with pytest.raises(ValueError, match="path: empty file"):
        datasets.load_triplets_csv(p)

"""Catalogues and colours of the search service: sRGB -> CIELAB against published
reference values, catalogue files validated with the file and row named."""

from __future__ import annotations

import numpy as np
import pytest

import tripletsearch as ts
from tripletsearch.colour import (
    hex_to_srgb,
    in_gamut,
    lab_to_srgb,
    srgb_to_hex,
    srgb_to_lab,
)
from tripletsearch.serve.catalogue import demo_catalogue, load_catalogue

# ---------------------------------------------------------------------- colour

# CIELAB (D65) of sRGB primaries and greys, as published (Lindbloom's calculator,
# EasyRGB): 4 decimals
REFERENCE = [
    ("#ffffff", (100.0, 0.0, 0.0)),
    ("#000000", (0.0, 0.0, 0.0)),
    ("#ff0000", (53.2408, 80.0925, 67.2032)),
    ("#00ff00", (87.7347, -86.1827, 83.1793)),
    ("#0000ff", (32.2970, 79.1875, -107.8602)),
    ("#808080", (53.5850, 0.0, 0.0)),
    ("#ffff00", (97.1393, -21.5537, 94.4780)),
]


@pytest.mark.parametrize("code,lab", REFERENCE)
def test_srgb_to_lab_matches_published_values(code, lab):
    np.testing.assert_allclose(srgb_to_lab(hex_to_srgb([code]))[0], lab, atol=2e-3)


def test_lab_round_trip_and_gamut():
    rng = np.random.default_rng(0)
    rgb = rng.uniform(size=(1000, 3))
    np.testing.assert_allclose(lab_to_srgb(srgb_to_lab(rgb)), rgb, atol=1e-10)
    assert in_gamut(srgb_to_lab(rgb)).all()
    assert not in_gamut(np.array([[50.0, 120.0, 0.0], [101.0, 0.0, 0.0]])).any()
    # "only about a fifth of CIELAB's bounding box is inside the sRGB gamut"
    lo, hi = np.array([0.0, -86.1827, -107.8602]), np.array([100.0, 98.2343, 94.4780])
    frac = in_gamut(rng.uniform(lo, hi, size=(200_000, 3))).mean()
    assert 0.18 < frac < 0.26
    assert srgb_to_hex(hex_to_srgb(["#1a2b3c", "#FFFFFF"])) == ["#1a2b3c", "#ffffff"]


@pytest.mark.parametrize("bad", ["#12345", "123456", "#12345g", "#+f+f+f", "#1234567"])
def test_bad_hex(bad):
    with pytest.raises(ValueError, match="hex: entry 0 is not a #rrggbb code"):
        hex_to_srgb([bad])


def test_demo_catalogue():
    cat = demo_catalogue("colours")
    assert cat.n_items == 949 and cat.dim == 3 and cat.has_colours
    assert len(set(cat.names)) == 949
    i = cat.names.index("red")
    np.testing.assert_allclose(cat.embedding[i], srgb_to_lab(hex_to_srgb([cat.hex[i]]))[0])
    with pytest.raises(ValueError, match="demo: expected one of"):
        demo_catalogue("fruit")
    # simulated gamma = 3 people: a median of 7 screens of 4 (the figure)
    sim = ts.simulate_discrete(cat.embedding, n_choices=4, n_runs=300, random_state=1)
    assert 6 <= sim.median <= 8


# ---------------------------------------------------------------------- catalogues


def folder(tmp_path, items, X=None, name="embedding.npy"):
    root = tmp_path / "cat"
    root.mkdir(exist_ok=True)
    (root / "items.csv").write_text(items)
    if X is not None:
        if name.endswith(".npy"):
            np.save(root / name, np.asarray(X))
        else:
            (root / name).write_text(X)
    return root


def test_folder_and_csv_catalogues(tmp_path):
    X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0]])
    root = folder(tmp_path, 'name,hex\n"a, the first",#112233\nb,#445566\nc,#AABBCC\n', X)
    cat = load_catalogue(root)
    assert cat.names == ("a, the first", "b", "c") and cat.hex[2] == "#aabbcc"
    np.testing.assert_array_equal(cat.embedding, X)
    assert cat.item(1) == {"id": 1, "name": "b", "hex": "#445566"}
    one = tmp_path / "one.csv"
    one.write_text("name,x,y\na,0,1\nb,1,0\nc,2,2\n")
    flat = load_catalogue(one)
    np.testing.assert_array_equal(flat.embedding, X)
    assert flat.hex is None and flat.title == "one"
    # an embedding fitted and saved by the library
    emb = ts.Embedding("t-ste", 2, random_state=0, max_epochs=5).fit([[0, 1, 2], [1, 2, 0]])
    (root / "embedding.npy").unlink()
    emb.save(root / "embedding.npz")
    np.testing.assert_array_equal(load_catalogue(root).embedding, emb.embedding_)
    (root / "embedding.npz").unlink()
    (root / "embedding.csv").write_text("0,1\n1,0\n2,2\n")
    np.testing.assert_array_equal(load_catalogue(root).embedding, X)


X3 = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0]])


@pytest.mark.parametrize(
    "items,X,match",
    [
        ("name\na\nb\n\n\n", X3[:2], None),  # trailing blank lines are ignored
        ("name\na\n\nb\n", X3, r"items.csv: row 3: 0 fields, the header has 1"),
        ("name\na\nb\n", X3, r"items.csv.*|embedding.npy: 3 embedding rows for 2 items"),
        ("name\na\na\nc\n", X3, r"items.csv: row 3: duplicate name 'a' \(first at row 2"),
        # names that differ only by invisible or compatibility characters, or spaces
        ("name\nred\nre\u200bd\nc\n", X3, r"row 3: name 're\\u200bd' holds .* U\+200B"),
        ("name\nabc\n\u202eabc\nc\n", X3, r"row 3: .* U\+202E \(RIGHT-TO-LEFT OVERRIDE\)"),
        ("name\nok\nbell\x07\nc\n", X3, r"row 3: .* U\+0007"),
        ("name\nok\nsoft\xadhyphen\nc\n", X3, r"row 3: .* U\+00AD \(SOFT HYPHEN\)"),
        ("name\nﬁsh\nfish\nc\n", X3, r"row 3: duplicate name 'fish' \(first at row 2; names"),
        ("name\nsea  green\nsea green\nc\n", X3, r"row 3: duplicate name 'sea green'"),
        ("name\nok\n" + "x" * 201 + "\nc\n", X3, r"row 3: name of 201 characters \(at most 200"),
        ("name,hex\na,#000000\n ,#111111\nc,#222222\n", X3, r"items.csv: row 3: missing name"),
        ("name,hex\na,#000000\nb,red\nc,#ffffff\n", X3, r"items.csv: row 3: bad colour 'red'"),
        ("name,image\na,x.png\nb,y.png\nc,z.png\n", X3, r"items.csv: row 2: image 'x.png' is not"),
        ("name,weight\na,1\nb,2\nc,3\n", X3, r"items.csv: unknown columns \['weight'\]"),
        ("title\na\nb\nc\n", X3, r"items.csv: no 'name' column"),
        ("name\na,1\nb\nc\n", X3, r"items.csv: row 2: 2 fields, the header has 1"),
        ("name\na\nb\nc\n", np.array([[0, 1], [0, 1], [2, 2.0]]), r"row 1: duplicate embedding"),
        ("name\na\nb\nc\n", np.array([[0, 1], [np.nan, 1], [2, 2.0]]), r"row 1, column 0: not"),
        ("name\na\nb\nc\n", np.array(["a", "b", "c"]), r"expected real numbers"),
        ("name\na\n", X3[:1], r"at least 2 items"),
        ("", X3, r"items.csv: empty file"),
    ],
)
def test_bad_folder_catalogues(tmp_path, items, X, match):
    root = folder(tmp_path, items, X)
    if match is None:
        assert load_catalogue(root).n_items == 2
        return
    with pytest.raises(ValueError, match=match):
        load_catalogue(root)


def test_bad_embedding_files_and_paths(tmp_path):
    root = folder(tmp_path, "name\na\nb\nc\n", "0,1\n1,x\n2,2\n", name="embedding.csv")
    with pytest.raises(ValueError, match=r"embedding.csv: row 2, column 1: 'x' is not a number"):
        load_catalogue(root)
    (root / "embedding.csv").write_text("0,1\n1\n2,2\n")
    with pytest.raises(ValueError, match=r"embedding.csv: row 2: 1 values, row 1 has 2"):
        load_catalogue(root)
    np.save(root / "embedding.npy", X3)
    with pytest.raises(ValueError, match=r"exactly one of embedding.npy, embedding.csv"):
        load_catalogue(root)
    (root / "embedding.csv").unlink()
    (root / "embedding.npy").unlink()
    with pytest.raises(ValueError, match=r"exactly one of .*found \[\]"):
        load_catalogue(root)
    (root / "embedding.npz").write_bytes(b"junk")
    with pytest.raises(ValueError, match=r"embedding.npz: not an Embedding"):
        load_catalogue(root)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_catalogue(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="has no items.csv"):
        load_catalogue(tmp_path / "empty")
    csv_file = tmp_path / "flat.csv"
    csv_file.write_text("name,x\na,1\nb,zz\n")
    with pytest.raises(ValueError, match=r"flat.csv: row 3, column 1: 'zz' is not a number"):
        load_catalogue(csv_file)
    csv_file.write_text("name,hex\na,#000000\nb,#ffffff\n")
    with pytest.raises(ValueError, match=r"flat.csv: no embedding columns"):
        load_catalogue(csv_file)


def test_images_must_stay_inside_the_folder(tmp_path):
    (tmp_path / "outside.png").write_bytes(b"x")
    root = folder(tmp_path, "name,image\na,../outside.png\nb,b.png\n", X3[:2])
    (root / "b.png").write_bytes(b"x")
    with pytest.raises(ValueError, match=r"row 2: image '../outside.png' is not a file inside"):
        load_catalogue(root)
    (root / "items.csv").write_text(f"name,image\na,{tmp_path / 'outside.png'}\nb,b.png\n")
    with pytest.raises(ValueError, match=r"row 2: image .* is not a file inside"):
        load_catalogue(root)
    (root / "link.png").symlink_to(tmp_path / "outside.png")
    (root / "items.csv").write_text("name,image\na,link.png\nb,b.png\n")
    with pytest.raises(ValueError, match=r"row 2: image 'link.png' is not a file inside"):
        load_catalogue(root)


def _unique_rule(X):
    """The first row equal to an earlier one, by sorting the rows (np.unique)."""
    _, first, inverse = np.unique(X, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    dup = np.nonzero(first[inverse] != np.arange(X.shape[0]))[0]
    return None if len(dup) == 0 else (int(dup[0]), int(first[inverse[dup[0]]]))


def test_the_duplicate_row_check_finds_what_sorting_the_rows_finds():
    """Over sizes and dimensions, with many repeats and signed zeros (-0.0 == 0.0), and
    with two different rows built to share their hash (only an exact check tells)."""
    from tripletsearch.serve.catalogue.files import first_duplicate_row

    rng = np.random.default_rng(0)
    for _ in range(200):
        n, d = int(rng.integers(2, 50)), int(rng.integers(1, 5))
        X = rng.integers(-2, 3, size=(n, d)).astype(float)
        X[X == 0] = np.where(rng.random(int((X == 0).sum())) < 0.5, 0.0, -0.0)
        assert first_duplicate_row(X) == _unique_rule(X)
    X = rng.normal(size=(1000, 3))
    assert first_duplicate_row(X) is None
    X[700], X[900] = X[20], X[3]
    assert first_duplicate_row(X) == (700, 20)
    # rows (x, y) and (x', y') whose bits differ by (+c2, -c1): the same hash, not equal
    c = np.arange(1, 3, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15) | np.uint64(1)
    while True:
        a = rng.normal(size=2).view(np.uint64)
        b = np.array([a[0] + c[1], a[1] - c[0]], dtype=np.uint64)
        if np.isfinite(b.view(np.float64)).all():
            break
    pair = np.stack([a.view(np.float64), b.view(np.float64), rng.normal(size=2)])
    assert first_duplicate_row(pair) is None
    assert first_duplicate_row(np.vstack([pair, pair[1]])) == (3, 1)

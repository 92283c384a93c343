"""The collect mode's inputs: a catalogue whose embedding is still to be learned, and the
collect file (every key checked, the file and key named)."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from tripletsearch.serve.catalogue import MAX_ITEMS_WITHOUT_EMBEDDING, load_catalogue
from tripletsearch.serve.collect import DEFAULT_COLLECT_CONSENT, load_collect


def folder(tmp_path, n=5, embedding=False, column="hex"):
    root = tmp_path / "items"
    root.mkdir(parents=True)
    values = [f"#{(40 * i) % 256:02x}{(90 * i) % 256:02x}{(17 * i) % 256:02x}" for i in range(n)]
    rows = [f"name,{column}"] + [f"item {i},{values[i]}" for i in range(n)]
    (root / "items.csv").write_text("\n".join(rows) + "\n")
    if embedding:
        np.save(root / "embedding.npy", np.random.default_rng(0).normal(size=(n, 2)))
    return root


def test_a_catalogue_may_wait_for_its_embedding(tmp_path):
    root = folder(tmp_path)
    with pytest.raises(ValueError, match="needs exactly one of embedding.npy"):
        load_catalogue(root)  # the search modes need one
    cat = load_catalogue(root, embedding=False)
    assert cat.n_items == 5 and cat.embedding.shape == (5, 0) and cat.dim == 0
    assert not cat.has_embedding and cat.has_colours and cat.item(2)["name"] == "item 2"
    other = load_catalogue(folder(tmp_path / "b", embedding=True), embedding=False)
    assert other.has_embedding and other.dim == 2  # one present is loaded as always
    csv = tmp_path / "names.csv"
    csv.write_text("name\n" + "".join(f"n{i}\n" for i in range(4)))
    assert load_catalogue(csv, embedding=False).embedding.shape == (4, 0)
    with pytest.raises(ValueError, match="no embedding columns"):
        load_catalogue(csv)


def test_a_catalogue_without_an_embedding_has_a_bound(tmp_path):
    n = MAX_ITEMS_WITHOUT_EMBEDDING + 1
    csv = tmp_path / "many.csv"
    csv.write_text("name\n" + "".join(f"n{i}\n" for i in range(n)))
    with pytest.raises(ValueError, match=f"{n} items without an embedding"):
        load_catalogue(csv, embedding=False)


def write(tmp_path, text, name="collect.toml"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def test_a_collect_file_with_defaults(tmp_path):
    folder(tmp_path, n=12)
    cfg = load_collect(write(tmp_path, 'catalogue = "items"\n'))
    assert cfg.catalogue.n_items == 12 and not cfg.catalogue.has_embedding
    assert cfg.samplers == ("active",) and cfg.models == ("gamma-ckl",)
    assert (cfg.k, cfg.dim, cfg.max_queries, cfg.burn_in, cfg.seed) == (2, 2, 100, 20, 0)
    assert cfg.test_share == 0.1 and cfg.attention == () and cfg.repeats == ()
    assert cfg.consent == DEFAULT_COLLECT_CONSENT and cfg.completion_code is None


def test_a_full_collect_file(tmp_path):
    folder(tmp_path, n=30)
    cfg = load_collect(
        write(
            tmp_path,
            """
            title = "Alike?"
            catalogue = "items"
            samplers = ["active", "random", "arr"]
            test_share = 0.2
            n_choices = 4
            dim = 3
            models = ["gammackl", "t-ste", "probit"]
            max_queries = 60
            burn_in = 10
            attention = [40, 5]
            repeats = [20]
            instructions = "Pick the most similar."
            debrief = "Thanks."
            completion_code = "X1"
            redirect = "https://example.org/done"
            seed = 9
            consent = "ok?"
            """,
        )
    )
    assert cfg.samplers == ("active", "random", "arr") and cfg.k == 4 and cfg.dim == 3
    assert cfg.models == ("gamma-ckl", "t-ste", "probit")  # aliases resolved
    assert cfg.attention == (5, 40) and cfg.repeats == (20,) and cfg.test_share == 0.2
    assert (cfg.completion_code, cfg.redirect, cfg.seed) == ("X1", "https://example.org/done", 9)
    assert load_collect(write(tmp_path, 'catalogue = "colours"\n', "c.toml")).catalogue.dim == 3


@pytest.mark.parametrize(
    "text,match",
    [
        ('catalogue = "items"\nsampler = ["active"]', r"unknown key\(s\) \['sampler'\]"),
        ('catalogue = "items"\nsamplers = ["clever"]', r"samplers: unknown \['clever'\]"),
        ('catalogue = "items"\nsamplers = []', "samplers: a non-empty list"),
        ('catalogue = "items"\nsamplers = ["random", "random"]', "a name given twice"),
        ('catalogue = "items"\nmodels = ["umap"]', r"models: unknown \['umap'\]"),
        ('catalogue = "items"\ntest_share = 1.0', r"test_share: a number in \[0, 1\)"),
        ('catalogue = "items"\ntest_share = true', r"test_share: a number in \[0, 1\)"),
        (
            'catalogue = "items"\nn_choices = 1',
            "n_choices: candidates per query, an integer from 2 to 11",
        ),
        ('catalogue = "items"\nn_choices = 0', r"n_choices: .* from 2 to 11 \(got 0\)"),
        ('catalogue = "items"\nn_choices = 2.5', "n_choices: candidates per query, an integer"),
        ('catalogue = "items"\nn_choices = 2\nk = 2', "k: renamed n_choices; give n_choices only"),
        ('catalogue = "items"\ndim = 0', "dim: the embeddings' dimension, .* from 1 to 11"),
        ('catalogue = "items"\ndim = 100000', r"dim: .* below the items' number, .* to 11 \(got"),
        (
            'catalogue = "items"\nmax_queries = 0',
            "max_queries: queries per participant, an integer",
        ),
        ('catalogue = "items"\nmax_queries = 10000000000000', "max_queries: .* from 1 to 10000"),
        ('catalogue = "items"\nburn_in = -1', "burn_in: random queries before the adaptive ones"),
        (
            'catalogue = "items"\nburn_in = 50\nmax_queries = 5',
            r"burn_in: .* max_queries - 1 = 4 \(got 50\)",
        ),
        ('catalogue = "items"\nseed = -2', "seed: the seed, an integer from 0"),
        ('catalogue = "items"\nshow_names = "no"', "show_names: true or false"),
        ('catalogue = "items"\nname = "Two Words"', "name: lower-case letters"),
        ('catalogue = "items"\nname = ""', "name: a string of 1 to 64"),
        ('catalogue = "items"\nattention = [100]', r"attention: distinct positions in 0\.\.99"),
        ('catalogue = "items"\nattention = ["5"]', "attention: a list of query positions"),
        ('catalogue = "items"\nattention = [5]\nrepeats = [5]', "one check only"),
        ('catalogue = "items"\nrepeats = [0]', "repeats: a repeat needs an earlier query"),
        ('catalogue = "items"\ndebrief = 3', "debrief: a string"),
        ('catalogue = "items"\ncompletion_code = ""', "completion_code: a string"),
        ('catalogue = "items"\nredirect = "ftp://x"', "redirect: an http"),
        ("samplers = []", "catalogue: required"),
        ('catalogue = "nowhere"', "does not exist"),
        ('catalogue = "items"\nn_choices = ', "not valid TOML"),
    ],
)
def test_bad_collect_files(tmp_path, text, match):
    folder(tmp_path, n=12)
    with pytest.raises((ValueError, FileNotFoundError), match=match):
        load_collect(write(tmp_path, text))


def test_a_catalogue_too_small_for_a_triplet(tmp_path):
    csv = tmp_path / "two.csv"
    csv.write_text("name\na\nb\n")
    with pytest.raises(ValueError, match="a triplet needs 3 items, it has 2"):
        load_collect(write(tmp_path, 'catalogue = "two.csv"\n'))


@pytest.mark.parametrize(
    "header, rows, match",
    [
        ("hex", ["#112233", "#445566", "#778899"], "name"),  # colours without names
        ("image", ["a.png", "b.png", "c.png"], "name"),  # pictures without names
        ("name", ["", "b", "c"], "row 2"),  # a nameless item
    ],
)
def test_a_collect_catalogue_needs_named_items(tmp_path, header, rows, match):
    root = tmp_path / "items"
    root.mkdir()
    (root / "items.csv").write_text(header + "\n" + "\n".join(rows) + "\n")
    with pytest.raises(ValueError, match=match) as err:
        load_collect(write(tmp_path, 'catalogue = "items"\n'))
    assert "items.csv" in str(err.value)


def test_the_default_burn_in_is_never_above_the_queries(tmp_path):
    folder(tmp_path, n=12)
    cfg = load_collect(write(tmp_path, 'catalogue = "items"\nmax_queries = 5'))
    assert (cfg.max_queries, cfg.burn_in) == (5, 5)
    cfg = load_collect(write(tmp_path, 'catalogue = "items"\nmax_queries = 50', "c2.toml"))
    assert cfg.burn_in == 20


def test_k_is_the_old_name_of_n_choices(tmp_path):
    folder(tmp_path, n=12)
    with pytest.warns(DeprecationWarning, match="'k' was renamed 'n_choices'") as said:
        cfg = load_collect(write(tmp_path, 'catalogue = "items"\nk = 3'))
    assert said[0].filename == __file__  # said at the call
    assert cfg.n_choices == 3 and dict(cfg.spelled) == {"n_choices": "k"}
    plain = load_collect(write(tmp_path, 'catalogue = "items"\nn_choices = 3', "c2.toml"))
    assert plain.identity().design == cfg.identity().design  # the same design
    assert plain.design_fingerprint == cfg.design_fingerprint

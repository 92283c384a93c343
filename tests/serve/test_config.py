"""The server's one configuration (ServeConfig) and the one base of experiment files.

The configuration goes to the workers as JSON and back unchanged, refuses what it does not
know by name, and is what ``create_app``'s keywords build; a worker's app is the app its
parent's configuration and design describe. The study and collect files keep the
identities they had before their base (hashes recorded with the code of the base commit),
and say the ``k`` rename in one message.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import warnings

import numpy as np
import pytest

from serve.helpers import in_process, parts_of
from tripletsearch.serve import create_app, demo_catalogue
from tripletsearch.serve.collect import load_collect, quality
from tripletsearch.serve.config import ServeConfig, serving_catalogue
from tripletsearch.serve.modes import mode_registry
from tripletsearch.serve.store import Store
from tripletsearch.serve.study import load_study
from tripletsearch.serve.web import app as app_module
from tripletsearch.serve.web.limits import Limits

CAT = demo_catalogue()


def _every_field_set() -> ServeConfig:
    return ServeConfig(
        database="sqlite:////tmp/x.sqlite",
        gamma="auto",
        max_queries=12,
        random_state=5,
        limits=Limits(3, 4, 5, frozenset({"10.0.0.1"})),
        memory=1 << 30,
        threads=2,
        steps_at_once=3,
        guesses=2,
        fast_server_ms=125.5,
        admin_token="secret",
        catalogue="/data/items",
        design="/tmp/design.pickle",
        shared={"embedding": "/tmp/e.npy", "store": "/tmp/s.bin"},
        certificate={"file": "/tmp/cert.pem", "not_before": 1.5e9, "not_after": 1.9e9},
    )


def test_a_configuration_round_trips_through_json():
    config = _every_field_set()
    again = ServeConfig.from_dict(json.loads(json.dumps(config.to_dict())))
    assert again == config
    assert again.limits == Limits(3, 4, 5, frozenset({"10.0.0.1"}))
    assert ServeConfig.from_dict({}) == ServeConfig()  # missing keys: the defaults
    assert "secret" not in repr(config)


def test_the_defaults_are_create_apps_and_the_clock_checks():
    config = ServeConfig()
    assert (config.gamma, config.max_queries, config.threads, config.guesses) == (3.0, 300, 1, 0)
    assert config.limits == Limits(0, 0, 0)  # no limits: a server in front sets its own
    assert config.fast_server_ms == quality.FAST_SERVER_MS == 250


def test_unknown_keys_are_refused_naming_them():
    with pytest.raises(ValueError, match=r"unknown key\(s\) \['colour', 'zzz'\]"):
        ServeConfig.from_dict({"gamma": 3.0, "colour": "red", "zzz": 1})
    with pytest.raises(TypeError, match="d: expected a dict"):
        ServeConfig.from_dict([("gamma", 3.0)])


@pytest.mark.parametrize(
    "field, value, error, said",
    [
        ("gamma", 0, ValueError, "gamma"),
        ("gamma", "high", ValueError, "gamma"),
        ("max_queries", 0, ValueError, "max_queries"),
        ("max_queries", 2.5, ValueError, "max_queries"),
        ("threads", 0, ValueError, "threads"),
        ("steps_at_once", 0, ValueError, "steps_at_once"),
        ("memory", -1, ValueError, "memory"),
        ("guesses", True, ValueError, "guesses"),
        ("random_state", -3, ValueError, "random_state"),
        ("fast_server_ms", -1.0, ValueError, "fast_server_ms"),
        ("fast_server_ms", float("nan"), ValueError, "fast_server_ms"),
        ("limits", {"sessions_per_minute": 3}, TypeError, "limits"),
        ("database", 5, TypeError, "database"),
    ],
)
def test_bad_settings_are_refused_naming_them(field, value, error, said):
    with pytest.raises(error, match=said):
        ServeConfig(**{field: value})


def test_a_demo_and_a_catalogue_path_are_one_too_many():
    with pytest.raises(ValueError, match="demo and catalogue"):
        ServeConfig(demo="colours", catalogue="/data/items")


def test_the_catalogue_served_is_the_experiments(tmp_path):
    collect = load_collect(_write(tmp_path, "c.toml", 'catalogue = "colours"\n'))
    other = CAT.without(["red"])[0]
    assert serving_catalogue(None, other) is other
    assert serving_catalogue(collect, other) is collect.catalogue  # another: the file's
    same = demo_catalogue()  # the same items (e.g. shared by the workers): kept
    assert serving_catalogue(collect, same) is same
    with pytest.raises(ValueError, match="catalogue"):
        serving_catalogue(None, None)


def test_create_app_takes_its_configuration(tmp_path):
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    config = ServeConfig(database=db, max_queries=7, random_state=3, guesses=1)
    beside = create_app(CAT, db, config=ServeConfig(max_queries=7, random_state=3, guesses=1))
    given = create_app(CAT, config=config)
    assert parts_of(beside).config == parts_of(given).config == config
    screens = []
    for app in (beside, given):  # the same settings: the same seeds, the same screens
        with in_process(app) as client:
            reply = client.post("/api/sessions", json={"mode": "find"}).json()
            screens.append(reply["screen"])
    assert screens[0] == screens[1] and len(screens[0]["guesses"]) == 1
    with pytest.raises(TypeError, match="database"):
        create_app(CAT, f"sqlite:///{tmp_path / 'other.sqlite'}", config=config)
    with pytest.raises(TypeError, match="config: expected a ServeConfig"):
        create_app(CAT, db, config={"gamma": 2.0})
    with pytest.raises(TypeError, match=r"unexpected keyword argument\(s\) \['gama'\]"):
        create_app(CAT, db, gama=2.0)


@pytest.mark.filterwarnings("default::DeprecationWarning")
def test_the_old_keywords_warn_naming_the_config_and_still_work(tmp_path):
    """Before 0.3.0 each setting was a keyword of create_app: each still works, warning
    with the new spelling, until 0.4.0; with a config beside them, a TypeError."""
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    limits = Limits(3, 4, 5)
    old = {"gamma": 2.0, "max_queries": 7, "random_state": 3, "guesses": 1, "limits": limits}
    old |= {"admin_token": "t", "threads": 2, "steps_at_once": 2, "fast_server_ms": 0.0}
    old |= {"memory": None}  # None: the config's default, as the keyword's default was
    assert set(old) == set(app_module.DEPRECATED_KEYWORDS)
    with pytest.warns(DeprecationWarning) as said:
        app = create_app(CAT, db, **old)
    new = {k: v for k, v in old.items() if v is not None}
    assert parts_of(app).config == ServeConfig(database=db, **new)
    messages = sorted(str(w.message) for w in said)
    assert len(messages) == len(old)
    for name in old:
        assert any(
            f"create_app: '{name}=' was renamed 'config=ServeConfig({name}=...)'" in m
            and "stops working in tripletsearch 0.4.0" in m
            for m in messages
        ), name
    with pytest.warns(DeprecationWarning), pytest.raises(TypeError, match=r"give \['gamma'\]"):
        create_app(CAT, config=ServeConfig(database=db), gamma=2.0)


def test_a_worker_builds_the_app_its_parent_configured(tmp_path, monkeypatch):
    from tripletsearch.serve.commands import serve as serving
    from tripletsearch.serve.experiment import bind
    from tripletsearch.serve.service import processes

    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    study = load_study(_write(tmp_path, "s.toml", 'catalogue = "colours"\nmax_queries = 9\n'))
    store = Store(db)
    store.setup()
    study = bind(study, store)
    design = processes.write_design({"study": study})
    config = ServeConfig(database=db, gamma=2.0, admin_token="t0ken", design=design)
    ran = {}
    monkeypatch.setattr("uvicorn.run", lambda *a, **k: ran.update(k))
    monkeypatch.delenv("TRIPLETSEARCH_SERVE", raising=False)
    args = type("Args", (), {"host": "127.0.0.1", "port": 0, "workers": 2, "log_level": "info"})
    serving.workers(args(), config)
    assert ran["workers"] == 2
    sent = json.loads(__import__("os").environ["TRIPLETSEARCH_SERVE"])
    assert sent == json.loads(json.dumps(config.to_dict()))
    # no seam: a worker's app always binds its life to its parent (this test is its parent)
    monkeypatch.setattr(processes, "die_with_parent", lambda *a, **k: 0)
    app = app_module.app_from_env()
    assert parts_of(app).config == config
    assert parts_of(app).service.max_queries == 9  # the study's
    with in_process(app) as client:
        assert client.get("/api/catalogue?limit=0").json()["n_items"] == study.catalogue.n_items
        refused = client.post("/api/sessions", json={"mode": "find"})
        assert refused.status_code == 403  # a study server: no free sessions
        for token, status in (("t0ken", 200), ("other", 401)):
            reply = client.get("/api/admin/study", headers={"Authorization": f"Bearer {token}"})
            assert reply.status_code == status
    store.dispose()


def test_the_modes_get_what_the_experiment_gives_them(tmp_path):
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    store = Store(db)
    store.setup()
    n = CAT.n_items
    np.save(tmp_path / "own.npy", np.linspace(0.0, 1.0, 3 * n).reshape(n, 3))
    study = load_study(
        _write(
            tmp_path,
            "s.toml",
            'catalogue = "colours"\nexclude = []\nmethods = ["gamma-ckl", "gauss"]\n'
            '[embeddings]\ngauss = "own.npy"\n',
        )
    )
    collect = load_collect(_write(tmp_path, "c.toml", 'catalogue = "colours"\n'))
    config = ServeConfig(gamma=2.5, threads=2)
    plain = mode_registry(CAT, config, store)
    of_study = mode_registry(CAT, config, store, study)
    of_collect = mode_registry(CAT, config, store, collect)
    assert plain["find"].gamma == of_study["find"].gamma == 2.5
    assert of_study["find"].settings.embeddings["gauss"] is study.embeddings["gauss"]
    assert plain["find"].settings.embeddings is None
    assert of_collect["collect"].config is collect
    assert plain["collect"].space == "none"  # a server without a collect: none to serve
    store.dispose()


# ------------------------------------------------------------------ the experiment base
def _write(folder, name, text):
    path = folder / name
    path.write_text(text)
    return path


STUDIES = {
    "plain": 'title = "Find the colour"\ncatalogue = "colours"\n',
    "full": (
        'name = "colour-study"\ntitle = "T"\ncatalogue = "colours"\n'
        'methods = ["gamma-ckl", "gauss"]\ntargets = [3, 5, 9]\nk = 3\nseed = 7\n'
        'max_queries = 40\nguesses = 2\ngamma = "auto"\nsigma = 0.5\nexclude = []\n'
        'completion_code = "C0DE"\nredirect = "https://example.org/x"\nshow_names = false\n'
    ),
    "emb": (
        'catalogue = "colours"\nmethods = ["gamma-ckl", "gauss"]\ntargets = 4\n'
        '[embeddings]\ngauss = "gauss.npy"\n'
    ),
}
COLLECTS = {
    "plain": 'catalogue = "colours"\n',
    "full": (
        'name = "alike"\ntitle = "Alike?"\ncatalogue = "colours"\n'
        'samplers = ["active", "random"]\ntest_share = 0.2\nk = 2\ndim = 3\n'
        'models = ["gamma-ckl", "t-ste"]\nmax_queries = 50\nburn_in = 10\n'
        "attention = [5, 30]\nrepeats = [12, 40]\ngold = [[3, 7, 12], [5, 2, 9]]\nseed = 4\n"
        'instructions = "I"\ndebrief = "D"\nconsent = "C"\n'
    ),
}
# (design_fingerprint, sha256 of the identity's JSON without its path), recorded with the
# code of the base commit de4cd32, before the files had a common base
BEFORE = {
    "collect_full": ("4aa7bf37411a8d5e", "eae7eb14de272133"),
    "collect_plain": ("3c34667c219941e0", "6984a0c928a6dfbd"),
    "study_emb": ("ba11df0bf370a23c", "4aa8edbadb565409"),
    "study_full": ("c8e8fa6926b65a1d", "6bdbf92b0b23d64c"),
    "study_plain": ("09e5f26135b343f9", "fafeb8edd7751fdf"),
}


def test_the_files_keep_the_identities_they_had_before_their_base(tmp_path):
    n = CAT.n_items
    np.save(tmp_path / "gauss.npy", np.linspace(0.0, 1.0, 3 * n).reshape(n, 3))
    got = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # (k)
        for kind, files, load in (
            ("study", STUDIES, load_study),
            ("collect", COLLECTS, load_collect),
        ):
            for key, text in files.items():
                exp = load(_write(tmp_path, f"{kind}_{key}.toml", text))
                ident = dataclasses.asdict(exp.identity())
                del ident["path"]
                digest = hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()
                got[f"{kind}_{key}"] = (exp.design_fingerprint, digest[:16])
                assert exp.fingerprint == exp.design_fingerprint  # (no key before a database)
                assert ident["kind"] == kind
    assert got == BEFORE


def test_a_study_and_a_collect_say_the_k_rename_in_one_message(tmp_path):
    said = []
    for name, load in (("study.toml", load_study), ("collect.toml", load_collect)):
        path = _write(tmp_path, name, 'catalogue = "colours"\nk = 3\n')
        with pytest.warns(DeprecationWarning) as caught:
            exp = load(path)
        assert caught[0].filename == __file__  # said at the call
        assert exp.n_choices == 3 and dict(exp.spelled) == {"n_choices": "k"}
        said.append(str(caught[0].message).replace(str(path), "FILE"))
    assert (
        said[0]
        == said[1]
        == (
            "FILE: 'k' was renamed 'n_choices' in tripletsearch 0.2.0; the old name stops "
            "working in tripletsearch 0.4.0"
        )
    )
    for name, load in (("s2.toml", load_study), ("c2.toml", load_collect)):
        with pytest.raises(ValueError, match="k: renamed n_choices; give n_choices only"):
            load(_write(tmp_path, name, 'catalogue = "colours"\nk = 3\nn_choices = 3\n'))


def test_the_texts_people_read_are_checked_alike(tmp_path):
    for name, load in (("s.toml", load_study), ("c.toml", load_collect)):
        for key in ("title", "consent"):
            with pytest.raises(ValueError, match=f"{key}: a string"):
                load(_write(tmp_path, name, f'catalogue = "colours"\n{key} = 3\n'))

"""The catalogue's shared arrays are read from nowhere another user can write: their folder
is checked even when it exists already (a folder open to others, or another user's, is
refused in one line; ``serve`` exits 2 before anything listens), and each file is checked
against the SHA-256 recorded when it was made (a planted file of the right shape but with
its rows shuffled is written anew by the server and refused by a worker)."""

from __future__ import annotations

import json
import os
import tempfile

import numpy as np
import pytest

from serve.helpers import make_catalogue
from tripletsearch.cli import main
from tripletsearch.discrete import ItemStore
from tripletsearch.serve.catalogue.shared import attach_shared, share_catalogue
from tripletsearch.serve.service.processes import read_design, write_design


def test_a_folder_others_can_write_to_is_refused_even_when_it_exists(tmp_path):
    cat = make_catalogue(tmp_path / "cat", 200)
    for mode in (0o777, 0o770, 0o702):
        shared = tmp_path / f"shared-{mode:o}"
        shared.mkdir()
        os.chmod(shared, mode)
        with pytest.raises(ValueError, match=f"can write to it \\(mode {mode:04o}\\)"):
            share_catalogue(cat, shared)
        assert list(shared.iterdir()) == []  # nothing written, nothing read
    link = tmp_path / "link"
    os.symlink(tmp_path / "cat", link)
    with pytest.raises(ValueError, match="not a folder but a link"):
        share_catalogue(cat, link)
    new = tmp_path / "new" / "shared"  # made here: owner-only
    share_catalogue(cat, new)
    assert os.stat(new).st_mode & 0o777 == 0o700


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown: root")
def test_a_folder_of_another_user_is_refused(tmp_path):
    """Another user's folder, made so by ``os.chown`` (the tests run as root), mode 0700."""
    cat = make_catalogue(tmp_path / "cat", 200)
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o700)
    os.chown(theirs, 4321, -1)
    mine = f"owned by user id 4321, not by this user \\({os.getuid()}"
    with pytest.raises(ValueError, match=mine):
        share_catalogue(cat, theirs)
    with pytest.raises(ValueError, match="owned by user id 4321"):
        attach_shared(cat, {"embedding": str(theirs / "x.npy"), "store": str(theirs / "x.store")})


def test_serve_refuses_a_shared_temp_folder_in_one_line(tmp_path, monkeypatch, capsys):
    import uvicorn

    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: pytest.fail("served"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    poisoned = tmp_path / f"tripletsearch-{os.getuid()}"
    poisoned.mkdir()
    os.chmod(poisoned, 0o777)
    argv = ["serve", "--demo", "colours", "--database", f"sqlite:///{tmp_path / 'db.sqlite'}"]
    assert main([*argv, "--port", "9"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {poisoned}: its group or others"), err
    with pytest.raises(ValueError, match="its group or others"):
        write_design({"study": None})  # the server's design: never there either


def plant(cat, folder, rows):
    """Files of the right name and shape holding the embedding's rows in ``rows``' order."""
    X = np.asarray(cat.embedding, dtype=np.float64)[rows]
    np.save(folder / f"{cat.fingerprint}.embedding.npy", X)
    ItemStore(X, scaled=True, distinct=True).save(str(folder / f"{cat.fingerprint}.store"))


def test_planted_files_of_the_right_shape_are_never_used(tmp_path, capsys):
    cat = make_catalogue(tmp_path / "cat", 300)
    X = np.asarray(cat.embedding, dtype=np.float64)
    shuffled = np.random.default_rng(0).permutation(len(X))
    folder = tmp_path / "shared"
    folder.mkdir(mode=0o700)
    plant(cat, folder, shuffled)  # no hash recorded for them: written anew
    shared = share_catalogue(cat, folder)
    assert "written anew: no hash recorded" in capsys.readouterr().err
    np.testing.assert_array_equal(np.load(shared["embedding"]), X)
    attached = attach_shared(cat, shared)
    np.testing.assert_array_equal(attached.embedding, X)
    mine = (folder / f"{cat.fingerprint}.store").read_bytes()
    # a planted embedding or store beside a true record: written anew too
    for which in ("embedding", "store"):
        keep = {k: (folder / f"{cat.fingerprint}.{k}{'.npy' * (k == 'embedding')}").read_bytes()
                for k in ("embedding", "store")}  # fmt: skip
        plant(cat, folder, shuffled)
        other = "store" if which == "embedding" else "embedding"
        (folder / f"{cat.fingerprint}.{other}{'.npy' * (other == 'embedding')}").write_bytes(
            keep[other]
        )
        again = share_catalogue(cat, folder)
        said = capsys.readouterr().err
        assert "written anew" in said and f"{cat.fingerprint}.{which}" in said, said
        assert again == shared and (folder / f"{cat.fingerprint}.store").read_bytes() == mine
        np.testing.assert_array_equal(np.load(again["embedding"]), X)
    # a true record forged for the planted files: the embedding is checked against the
    # catalogue's own, so the planted rows are still not used
    plant(cat, folder, shuffled)
    record = json.loads((folder / f"{cat.fingerprint}.sha256.json").read_text())
    record["embedding"] = (
        __import__("hashlib")
        .sha256((folder / f"{cat.fingerprint}.embedding.npy").read_bytes())
        .hexdigest()
    )
    (folder / f"{cat.fingerprint}.sha256.json").write_text(json.dumps(record))
    assert share_catalogue(cat, folder) == shared
    assert "is not the catalogue's embedding" in capsys.readouterr().err
    # reused as it is when it is the one recorded (nothing said, nothing written)
    before = os.stat(folder / f"{cat.fingerprint}.store").st_mtime_ns
    assert share_catalogue(cat, folder) == shared and capsys.readouterr().err == ""
    assert os.stat(folder / f"{cat.fingerprint}.store").st_mtime_ns == before


def test_a_worker_refuses_a_file_changed_after_the_server_wrote_it(tmp_path):
    cat = make_catalogue(tmp_path / "cat", 300)
    folder = tmp_path / "shared"
    shared = share_catalogue(cat, folder)
    shuffled = np.random.default_rng(1).permutation(300)
    for which in ("embedding", "store"):
        share_catalogue(cat, folder)  # the true files again
        path = shared[which]
        fresh = share_catalogue(cat, tmp_path / f"planted-{which}")
        plant(cat, tmp_path / f"planted-{which}", shuffled)
        os.replace(fresh[which], path)  # same shape and layout, rows shuffled
        with pytest.raises(ValueError, match=f"{path}: not the file recorded .* refused"):
            attach_shared(cat, shared)


def test_a_design_open_to_others_is_never_unpickled(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    path = write_design({"study": None})
    assert read_design(path) == {"study": None}
    os.chmod(path, 0o666)
    with pytest.raises(ValueError, match="not this user's own file"):
        read_design(path)

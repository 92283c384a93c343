"""The catalogue's side of the API in process (Starlette's TestClient): health, the
catalogue's pages and name filter, the page and its files, and a catalogue folder's images
(raster images only, from the catalogue folder only)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from serve.helpers import in_process
from tripletsearch.serve import create_app, demo_catalogue, load_catalogue

CAT = demo_catalogue()
PNG = b"\x89PNG\r\n\x1a\n"


# ---------------------------------------------------------------------- the catalogue


def test_health_and_catalogue(server):
    client, _, _ = server
    assert client.get("/api/health").json()["status"] == "ok"
    cat = client.get("/api/catalogue").json()
    assert cat["n_items"] == 949 and cat["n_matches"] == 949 and len(cat["items"]) == 100
    assert cat["modes"] == ["find", "mix"]
    assert cat["n_choices"] == {
        "find": {"min": 2, "max": 8, "default": 4},
        "mix": {"min": 2, "max": 2, "default": 2},
    }
    assert cat["items"][0] == {"id": 0, "name": CAT.names[0], "hex": CAT.hex[0]}
    page = client.get("/")
    assert page.status_code == 200 and 'src="/static/main.js"' in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]
    js = client.get("/static/api.js")
    assert js.status_code == 200 and "/api/sessions" in js.text
    assert js.headers["content-type"].startswith("text/javascript")
    assert client.get("/static/app.css").headers["content-type"].startswith("text/css")
    for path in ("/static/../store.py", "/static/index.html", "/static/nope.js", "/study"):
        assert client.get(path).status_code == 404, path
    # no study on this server
    assert client.get("/api/experiment").json() == {"error": "this server runs no experiment"}
    for path in ("/api/participants", "/api/participants/P-1/next"):
        assert client.post(path, json={"consent": False}).status_code == 404, path


def test_catalogue_pages_and_name_filter(server):
    client, _, _ = server
    tail = client.get("/api/catalogue", params={"offset": 940, "limit": 20}).json()
    assert (tail["offset"], tail["limit"], tail["n_matches"]) == (940, 20, 949)
    assert tail["items"] == [CAT.item(i) for i in range(940, 949)]
    meta = client.get("/api/catalogue?limit=0").json()
    assert meta["items"] == [] and meta["n_items"] == 949 and meta["title"] == CAT.title
    assert len(client.get("/api/catalogue?limit=1000").json()["items"]) == 949
    # the filter: case-insensitive, paged, against a scan of the names
    expected = [i for i, name in enumerate(CAT.names) if "blue" in name.lower()]
    got, offset = [], 0
    while True:
        page = client.get("/api/catalogue", params={"q": "BLUE", "offset": offset, "limit": 7})
        assert page.json()["n_matches"] == len(expected) and page.json()["q"] == "BLUE"
        if not page.json()["items"]:
            break
        got += [it["id"] for it in page.json()["items"]]
        offset += 7
    assert got == expected and len(expected) > 7
    assert client.get("/api/catalogue?q=no+such+colour").json()["n_matches"] == 0
    for query, match in [
        ("limit=1001", "limit: expected an integer 0 to 1000, got '1001'"),
        ("limit=-1", "limit: expected an integer 0 to 1000"),
        ("limit=", "limit: expected an integer 0 to 1000"),
        ("offset=x", "offset: expected an integer >= 0, got 'x'"),
        ("offset=1.5", "offset: expected an integer >= 0"),
        ("q=" + "x" * 201, "q: at most 200 characters"),
        ("page=2", "unknown parameter(s): ['page']"),
        ("limit=1&limit=2", "limit: given 2 times"),
    ]:
        r = client.get("/api/catalogue?" + query)
        assert r.status_code == 400 and match in r.json()["error"], (query, r.text)


# ---------------------------------------------------------------------- images


def test_images_are_served_from_the_catalogue_folder_only(tmp_path):
    root = tmp_path / "cat"
    (root / "img").mkdir(parents=True)
    (root / "img" / "a.png").write_bytes(PNG + b" a")
    (root / "img" / "b.png").write_bytes(PNG + b" b")
    (tmp_path / "secret.txt").write_text("secret")
    (root / "items.csv").write_text("name,image\nalpha,img/a.png\nbeta,img/b.png\n")
    np.save(root / "embedding.npy", np.array([[0.0, 0.0], [1.0, 0.0]]))
    cat = load_catalogue(root)
    app = create_app(cat, f"sqlite:///{tmp_path / 's.sqlite'}")
    with in_process(app) as c:
        assert c.get("/api/catalogue").json()["items"][1]["image"] == "/images/1"
        r = c.get("/images/1")
        assert r.content == PNG + b" b" and r.headers["content-type"] == "image/png"
        assert r.headers["content-security-policy"] == "default-src 'none'; sandbox"
        assert r.headers["x-content-type-options"] == "nosniff"
        (root / "img" / "b.png").write_text("<script>alert(1)</script>")  # replaced since
        assert c.get("/images/1").status_code == 404
        assert c.get("/api/catalogue").json()["modes"] == ["find"]
        for path in (
            "/images/2",
            "/images/-1",
            "/images/../secret.txt",
            "/images/%2e%2e%2fsecret.txt",
            "/images/x",
        ):
            r = c.get(path)
            assert r.status_code == 404 and "secret" not in r.text, path
        r = c.post("/api/sessions", json={"mode": "mix"})
        assert r.status_code == 400 and "mode: expected one of ['find']" in r.json()["error"]
    assert Path(root / "items.csv").exists()


@pytest.mark.parametrize(
    "name, content",
    [
        ("evil.svg", b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'),
        ("evil.html", b"<html><script>fetch('/x?'+localStorage)</script></html>"),
        ("evil.png", b"<html><script>alert(1)</script></html>"),  # named .png, not one
        ("empty.jpg", b""),
    ],
)
def test_only_raster_images_load(tmp_path, name, content):
    root = tmp_path / "cat"
    root.mkdir()
    (root / "ok.gif").write_bytes(b"GIF89a...")
    (root / name).write_bytes(content)
    (root / "items.csv").write_text(f"name,image\nalpha,ok.gif\nbeta,{name}\n")
    np.save(root / "embedding.npy", np.array([[0.0, 0.0], [1.0, 0.0]]))
    with pytest.raises(ValueError, match=rf"items.csv: row 3: image '{name}' is not a PNG, JPEG"):
        load_catalogue(root)


def test_raster_types_by_their_first_bytes(tmp_path):
    from tripletsearch.serve.catalogue import raster_type

    for content, kind in [
        (PNG + b"...", "image/png"),
        (b"\xff\xd8\xff\xe0...", "image/jpeg"),
        (b"GIF87a...", "image/gif"),
        (b"RIFF\x10\x00\x00\x00WEBPVP8 ", "image/webp"),
        (b"\x00\x00\x00\x1cftypavif", "image/avif"),
        (b"RIFF\x10\x00\x00\x00WAVEfmt ", None),
        (b"<svg/>", None),
        (b"\x89PN", None),
    ]:
        f = tmp_path / "f"
        f.write_bytes(content)
        assert raster_type(f) == kind, content
    assert raster_type(tmp_path / "missing") is None

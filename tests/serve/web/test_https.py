"""HTTPS built in: ``tripletsearch serve --ssl-certfile --ssl-keyfile`` (uvicorn's TLS, one
worker and several), HSTS over TLS only, and every bad certificate, key or password refused
in one line (exit 2) before anything listens. The certificates are the test's own: a CA made
here (``trustme``) and a server certificate for 127.0.0.1 and localhost; a client trusts
that CA only."""

from __future__ import annotations

import os
import re
import ssl
import subprocess
import sys

import httpx
import pytest

from serve.helpers import free_port, in_process
from serve.tls import PASSWORD, Certs, serving
from tripletsearch.cli import main
from tripletsearch.serve import demo_catalogue
from tripletsearch.serve.config import HSTS_MAX_AGE, ServeConfig
from tripletsearch.serve.web.app import create_app
from tripletsearch.serve.web.tls import PASSWORD_ENV, tls_options

trustme = pytest.importorskip("trustme")
serialization = pytest.importorskip("cryptography.hazmat.primitives.serialization")


@pytest.fixture(scope="module")
def certs(tmp_path_factory) -> Certs:
    return Certs(tmp_path_factory.mktemp("tls"))


# ---------------------------------------------------------------- HSTS, in process
@pytest.mark.parametrize(
    "age, base, expected",
    [
        (HSTS_MAX_AGE, "https://testserver", f"max-age={HSTS_MAX_AGE}"),
        (600, "https://testserver", "max-age=600"),
        (0, "https://testserver", None),  # 0: off
        (HSTS_MAX_AGE, "http://testserver", None),  # plain HTTP: never
    ],
)
def test_hsts_goes_with_every_reply_over_https_only(tmp_path, age, base, expected):
    config = ServeConfig(database=f"sqlite:///{tmp_path / 's.sqlite'}", hsts_max_age=age)
    with in_process(create_app(demo_catalogue(), config=config)) as client:
        client.base_url = httpx.URL(base)
        for path in ("/", "/api/health", "/static/app.css", "/api/no-such-route"):
            r = client.get(path)
            assert r.headers.get("strict-transport-security") == expected, (path, r.status_code)
        # a reply the middleware makes itself (413) carries it too
        r = client.post("/api/sessions", content=b"x" * 20_000)
        assert r.status_code == 413
        assert r.headers.get("strict-transport-security") == expected
        # behind a TLS proxy: the proxy's X-Forwarded-Proto is not believed
        if base.startswith("http:"):
            r = client.get("/", headers={"X-Forwarded-Proto": "https"})
            assert "strict-transport-security" not in r.headers


def test_the_hsts_max_age_is_checked():
    with pytest.raises(ValueError, match="hsts_max_age"):
        ServeConfig(hsts_max_age=-1)
    with pytest.raises(ValueError, match="hsts_max_age"):
        ServeConfig(hsts_max_age=1.5)


# ------------------------------------------------ bad certificates, keys and passwords
def _one_error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: "), err
    return err[0]


@pytest.mark.parametrize(
    "given, said",
    [
        ({"cert": "cert"}, "--ssl-certfile: give its private key with --ssl-keyfile"),
        ({"key": "key"}, "--ssl-keyfile: give its certificate with --ssl-certfile"),
        ({"cert": "missing", "key": "key"}, "--ssl-certfile: cannot read"),
        ({"cert": "cert", "key": "missing"}, "--ssl-keyfile: cannot read"),
        ({"cert": "junk", "key": "key"}, "--ssl-certfile: .* holds no PEM certificate"),
        ({"cert": "cert", "key": "junk"}, "--ssl-keyfile: .* holds no PEM private key"),
        ({"cert": "cert", "key": "other_key"}, "--ssl-keyfile: .* is not the key of"),
        ({"cert": "cert", "key": "encrypted"}, "--ssl-keyfile: .* is encrypted: give its"),
        (
            {"cert": "cert", "key": "encrypted", "env": "wrong"},
            "--ssl-keyfile-password: wrong password",
        ),
        (
            {"cert": "cert", "key": "encrypted", "password": "wrong"},
            "--ssl-keyfile-password: wrong password",
        ),
        ({"password": PASSWORD}, "--ssl-keyfile-password: the password of --ssl-keyfile"),
        ({"age": "-5"}, "--hsts-max-age: expected an integer >= 0"),
    ],
)
def test_a_bad_certificate_key_or_password_is_one_line_and_exit_2_before_listening(
    certs, tmp_path, monkeypatch, capsys, given, said
):
    (tmp_path / "junk.pem").write_text("-----BEGIN CERTIFICATE-----\nnot one\n")
    files = {
        "cert": certs.cert,
        "key": certs.key,
        "encrypted": certs.encrypted,
        "other_key": certs.other_key,
        "junk": tmp_path / "junk.pem",
        "missing": tmp_path / "no-such.pem",
    }
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TRIPLETSEARCH_ADMIN_TOKEN", "x")
    monkeypatch.delenv(PASSWORD_ENV, raising=False)
    if "env" in given:
        monkeypatch.setenv(PASSWORD_ENV, given["env"])
    db = tmp_path / "db.sqlite"
    argv = ["serve", "--demo", "colours", "--database", f"sqlite:///{db}"]
    if "cert" in given:
        argv += ["--ssl-certfile", str(files[given["cert"]])]
    if "key" in given:
        argv += ["--ssl-keyfile", str(files[given["key"]])]
    if "password" in given:
        argv += ["--ssl-keyfile-password", given["password"]]
    if "age" in given:
        argv += ["--ssl-certfile", str(certs.cert), "--ssl-keyfile", str(certs.key)]
        argv += ["--hsts-max-age", given["age"]]
    assert main(argv) == 2
    assert re.search(said, _one_error(capsys))
    assert not db.exists()  # refused before the database (and long before listening)


def test_a_password_file_must_be_owner_only_and_not_empty(certs, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TRIPLETSEARCH_ADMIN_TOKEN", "x")
    pw = tmp_path / "pw"
    pw.write_text(PASSWORD + "\n")
    os.chmod(pw, 0o644)
    argv = ["serve", "--demo", "colours", "--ssl-certfile", str(certs.cert)]
    argv += ["--ssl-keyfile", str(certs.encrypted), "--ssl-keyfile-password-file", str(pw)]
    assert main(argv) == 2
    assert "chmod 600" in _one_error(capsys)
    pw.write_text("")
    os.chmod(pw, 0o600)
    assert main(argv) == 2
    assert "is empty" in _one_error(capsys)


def test_the_password_comes_from_the_environment_or_a_file(certs, tmp_path, monkeypatch):
    from argparse import Namespace

    pw = tmp_path / "pw"
    pw.write_text(PASSWORD + "\n")
    os.chmod(pw, 0o600)
    common = dict(ssl_certfile=str(certs.cert), ssl_keyfile=str(certs.encrypted), hsts_max_age=0)

    def args(password=None, file=None):
        return Namespace(**common, ssl_keyfile_password=password, ssl_keyfile_password_file=file)

    monkeypatch.setenv(PASSWORD_ENV, PASSWORD)
    assert tls_options(args())["ssl_keyfile_password"] == PASSWORD
    monkeypatch.delenv(PASSWORD_ENV)
    assert tls_options(args(file=str(pw))) == {
        "ssl_certfile": str(certs.cert),
        "ssl_keyfile": str(certs.encrypted),
        "ssl_keyfile_password": PASSWORD,
    }
    with pytest.raises(ValueError, match="give one"):
        tls_options(args(password="x", file=str(pw)))


# ---------------------------------------------------------------- the real server
@pytest.mark.once
@pytest.mark.parametrize("workers", [1, 2])
def test_a_tls_server_is_trusted_by_its_ca_only_and_sends_hsts(certs, tmp_path, workers):
    args = ["--ssl-certfile", str(certs.cert), "--ssl-keyfile", str(certs.key)]
    with serving(tmp_path, *args, "--workers", str(workers), verify=certs.trusting()) as base:
        for path in ("/", "/api/catalogue?limit=0"):
            r = httpx.get(base + path, verify=certs.trusting(), timeout=10)
            assert r.status_code == 200
            assert r.headers["strict-transport-security"] == f"max-age={HSTS_MAX_AGE}"
        # a search over TLS: a session, an answer
        s = httpx.post(base + "/api/sessions", json={}, verify=certs.trusting(), timeout=30)
        assert s.status_code == 201, s.text
        # the system's trust store does not know the test's CA
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            httpx.get(base + "/", timeout=10)
        # nor does a client trusting another CA
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            other = ssl.create_default_context(cafile=str(certs.other_cert))
            httpx.get(base + "/", verify=other, timeout=10)
        # plain HTTP to the TLS port gets no reply
        with pytest.raises(httpx.HTTPError):
            httpx.get(base.replace("https:", "http:") + "/", timeout=10)


@pytest.mark.once
def test_a_plain_http_server_sends_no_hsts(tmp_path):
    with serving(tmp_path, verify=True) as base:
        r = httpx.get(base + "/", timeout=10)
        assert r.status_code == 200
        assert "strict-transport-security" not in r.headers


@pytest.mark.once
def test_an_encrypted_key_opens_with_the_password_from_its_file(certs, tmp_path):
    pw = tmp_path / "pw"
    pw.write_text(PASSWORD + "\n")
    os.chmod(pw, 0o600)
    args = ["--ssl-certfile", str(certs.cert), "--ssl-keyfile", str(certs.encrypted)]
    args += ["--ssl-keyfile-password-file", str(pw), "--hsts-max-age", "120"]
    with serving(tmp_path, *args, verify=certs.trusting()) as base:
        r = httpx.get(base + "/api/health", verify=certs.trusting(), timeout=10)
        assert r.headers["strict-transport-security"] == "max-age=120"


@pytest.mark.once
def test_a_wrong_password_in_the_environment_exits_2_in_one_line(certs, tmp_path):
    port = free_port()
    cmd = [sys.executable, "-m", "tripletsearch", "serve", "--demo", "colours"]
    cmd += ["--port", str(port), "--ssl-certfile", str(certs.cert)]
    cmd += ["--ssl-keyfile", str(certs.encrypted)]
    env = {**os.environ, "TRIPLETSEARCH_ADMIN_TOKEN": "x", PASSWORD_ENV: "not it"}
    done = subprocess.run(
        cmd, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"error: --ssl-keyfile-password: wrong password for {certs.encrypted}"
    ]
    assert "serving" not in done.stdout

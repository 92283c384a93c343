"""The HTTPS tests' certificates and server: a CA made by the test (``trustme``), a
server certificate for 127.0.0.1 and localhost, its key plain and encrypted, another CA's
(not trusted); ``tripletsearch serve`` in its own process group with them."""

from __future__ import annotations

import contextlib
import os
import signal
import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from serve.helpers import free_port, wait_until

trustme = pytest.importorskip("trustme")
serialization = pytest.importorskip("cryptography.hazmat.primitives.serialization")

PASSWORD = "correct horse battery staple"


class Certs:
    """A CA, a server certificate for 127.0.0.1/localhost signed by it, and its key in
    plain and encrypted PEM files; another CA's certificate and key (not trusted)."""

    def __init__(self, root: Path):
        self.ca = trustme.CA()
        issued = self.ca.issue_cert("127.0.0.1", "localhost")
        self.cert, self.key = root / "cert.pem", root / "key.pem"
        for i, pem in enumerate(issued.cert_chain_pems):
            pem.write_to_path(str(self.cert), append=i > 0)
        issued.private_key_pem.write_to_path(str(self.key))
        key = serialization.load_pem_private_key(issued.private_key_pem.bytes(), None)
        self.encrypted = root / "encrypted.pem"
        self.encrypted.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.BestAvailableEncryption(PASSWORD.encode()),
            )
        )
        self.ca_file = root / "ca.pem"
        self.ca.cert_pem.write_to_path(str(self.ca_file))
        other = trustme.CA().issue_cert("127.0.0.1", "localhost")
        self.other_cert, self.other_key = root / "other-cert.pem", root / "other-key.pem"
        other.cert_chain_pems[0].write_to_path(str(self.other_cert))
        other.private_key_pem.write_to_path(str(self.other_key))

    def spki(self, cert: Path | None = None) -> str:
        """The base64 SHA-256 of a certificate's public key (its SPKI): what Chromium's
        ``--ignore-certificate-errors-spki-list`` trusts (this key only)."""
        import base64
        import hashlib

        from cryptography import x509

        c = x509.load_pem_x509_certificate((cert or self.cert).read_bytes())
        der = c.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        return base64.b64encode(hashlib.sha256(der).digest()).decode()

    def trusting(self) -> ssl.SSLContext:
        """A client context that trusts this CA only."""
        return ssl.create_default_context(cafile=str(self.ca_file))


@contextlib.contextmanager
def serving(
    tmp_path: Path, *args: str, verify: object, env: dict | None = None, said: list | None = None
) -> Iterator[str]:
    """``tripletsearch serve`` with ``args`` (and ``--demo colours`` when they name no study
    or collect) in its own process group, its database in ``tmp_path``; yields
    its base URL (https when it has a certificate) once its health check answers. ``said``:
    gets what the server printed, once it stopped."""
    port = free_port()
    scheme = "https" if "--ssl-certfile" in args else "http"
    base = f"{scheme}://127.0.0.1:{port}"
    cmd = [sys.executable, "-m", "tripletsearch", "serve"]
    if "--study" not in args and "--collect" not in args:
        cmd += ["--demo", "colours"]
    cmd += ["--port", str(port), "--log-level", "warning", "--database"]
    cmd += [f"sqlite:///{tmp_path / f'db-{port}.sqlite'}", *args]
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        cwd=tmp_path,
        env={**os.environ, "TRIPLETSEARCH_ADMIN_TOKEN": "test-admin", **(env or {})},
    )

    def healthy() -> bool:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited ({proc.returncode}): {proc.stdout.read()}")
        try:
            return httpx.get(base + "/api/health", verify=verify, timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    try:
        wait_until(healthy, 90, f"{base} healthy", every=0.2)
        yield base
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        if said is not None and proc.stdout is not None:
            said.append(proc.stdout.read())

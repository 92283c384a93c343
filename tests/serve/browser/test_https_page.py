"""A collect's page over HTTPS in Chromium: ``tripletsearch serve --ssl-certfile
--ssl-keyfile`` with the test's own certificate, a browser that trusts exactly that
certificate's key (``--ignore-certificate-errors-spki-list``, not Playwright's
``ignore_https_errors``, which would trust any) loads the page and answers a screen; a
browser trusting another key, or none, is refused the connection."""

from __future__ import annotations

import pytest
from playwright.sync_api import Error, expect

from serve.browser.conftest import _without_preload, chromium
from serve.browser.helpers import DESKTOP, PHONE
from serve.helpers import collect_toml
from serve.tls import Certs, serving
from tripletsearch.serve.store import Store

# a browser and a server process: run once, not again under the sanitizers (.ci/run)
pytestmark = pytest.mark.once

COLLECT_FILE = collect_toml(catalogue="colours", n_choices=3, max_queries=4, seed=None)


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return Certs(tmp_path_factory.mktemp("tls"))


def trusting(playwright, spki: str):
    """Chromium that trusts the certificate of public key ``spki`` only (beyond its own)."""
    with _without_preload():
        return playwright.chromium.launch(
            executable_path=chromium(),
            args=["--no-sandbox", f"--ignore-certificate-errors-spki-list={spki}"],
        )


def test_the_page_over_https_trusting_that_certificate_only(playwright, browser, certs, tmp_path):
    """One server and one trusting browser for both screen sizes (a participant each)."""
    (tmp_path / "collect.toml").write_text(COLLECT_FILE)
    db = tmp_path / "c.sqlite"
    args = ["--collect", str(tmp_path / "collect.toml"), "--database", f"sqlite:///{db}"]
    args += ["--ssl-certfile", str(certs.cert), "--ssl-keyfile", str(certs.key)]
    said: list[str] = []
    pids = []
    with serving(tmp_path, *args, verify=certs.trusting(), said=said) as base:
        assert base.startswith("https://")
        ours = trusting(playwright, certs.spki())
        try:
            for device in (DESKTOP, PHONE):
                page = ours.new_context(**device).new_page()
                reply = page.goto(base + "/collect")
                assert reply is not None and reply.ok
                assert reply.headers["strict-transport-security"] == "max-age=31536000"
                assert page.evaluate("window.isSecureContext && location.protocol") == "https:"
                page.click("#agree")
                page.click("#go")  # the instructions
                expect(page.locator("#grid .pick")).to_have_count(3)
                with page.expect_response(lambda r: r.url.endswith("/answer")) as answered:
                    page.locator("#grid .pick").nth(1).click()
                assert answered.value.ok
                expect(page.locator("#progress")).to_have_text("query 2 of 4")
                pids.append(
                    page.evaluate("JSON.parse(localStorage.getItem('ts-collect')).participant.id")
                )
                page.context.close()
        finally:
            ours.close()
        # another key trusted, or none: the connection is refused, the page never loads
        other = trusting(playwright, certs.spki(certs.other_cert))
        try:
            for trusts in (other, browser):  # (the shared browser trusts none)
                page = trusts.new_page()
                with pytest.raises(Error, match="ERR_CERT_AUTHORITY_INVALID"):
                    page.goto(base + "/collect")
                page.close()
        finally:
            other.close()
    # the server says where it listens and where its owner previews it, over HTTPS
    assert f"on {base}/ with 1 worker(s)" in said[0]
    assert f"preview: {base}/preview#token=<admin token>" in said[0]
    for pid in pids:  # each screen size's participant: one answer recorded
        (session,) = Store(f"sqlite:///{db}").participant_sessions(pid)
        assert session.n_queries == 1
    assert len(set(pids)) == 2

"""Headless Chromium for the HTML report's tests and screenshots: the system's package (Debian
``chromium``), started with no network of its own and every request sent to a recording proxy, so a
test can say that a page fetched nothing."""

from __future__ import annotations

import http.server
import re
import shutil
import socketserver
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--no-pings",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-features=NetworkTimeServiceQuerying,OptimizationHints,MediaRouter,Translate,AutofillServerCommunication,SignInProfileCreation",
    "--allow-browser-signin=false",
)
#: What the browser itself asks of Google's hosts at start (time, account, connectivity checks; and since
#: Debian's Chromium 156.0.8078.114, a component-update POST to update.googleapis.com that
#: ``--disable-component-update`` no longer stops), whatever the page: left out of what a page fetched.
#: A page's own request to any other host is recorded (the pages rigcheck writes have no script or form).
BROWSER_OWN = re.compile(
    r"^(GET http://|POST http://|CONNECT )[a-z0-9.-]*\b(google|gstatic|googleapis)\.com\b"
)


def chromium() -> str | None:
    """The browser's path, or None where it is not installed."""
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


class _Recorder(http.server.BaseHTTPRequestHandler):
    seen: list[str] = []

    def _record(self) -> None:
        type(self).seen.append(f"{self.command} {self.path}")
        self.send_response(404)
        self.end_headers()

    do_GET = do_POST = do_HEAD = do_CONNECT = _record

    def log_message(self, format: str, *args: object) -> None:  # quiet
        return


@contextmanager
def recording_proxy() -> Iterator[tuple[int, list[str]]]:
    """A local HTTP proxy that answers 404 to everything and records what was asked of it."""
    handler = type("Recorder", (_Recorder,), {"seen": []})
    server = socketserver.TCPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], handler.seen
    finally:
        server.shutdown()
        server.server_close()


def run(
    page: Path, *, screenshot: Path | None = None, width: int = 1200, height: int = 1600
) -> tuple[str, list[str]]:
    """Open ``page``: its DOM after loading (``--dump-dom``), and the requests it made (through the
    proxy); with ``screenshot``, also write a PNG of it."""
    browser = chromium()
    if browser is None:
        raise FileNotFoundError("chromium is not installed (Debian: apt-get install chromium)")
    with recording_proxy() as (port, seen), tempfile.TemporaryDirectory() as profile:
        common = [
            browser,
            *FLAGS,
            f"--user-data-dir={profile}",
            f"--proxy-server=http://127.0.0.1:{port}",
            "--proxy-bypass-list=<-loopback>",
            f"--window-size={width},{height}",
        ]
        dom = subprocess.run(
            [*common, "--dump-dom", page.resolve().as_uri()],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        ).stdout
        if screenshot is not None:
            subprocess.run(
                [*common, f"--screenshot={screenshot.resolve()}", page.resolve().as_uri()],
                capture_output=True,
                timeout=120,
                check=True,
            )
        return dom, [request for request in seen if not BROWSER_OWN.match(request)]

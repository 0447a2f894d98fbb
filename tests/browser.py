"""A headless Debian chromium driven over the DevTools protocol, for the report's
real-browser test: open a page, collect console errors, evaluate JavaScript,
take a screenshot."""

from __future__ import annotations

import base64
import itertools
import json
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import websocket

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--remote-debugging-port=0", "--window-size=1280,1024")
# Guards against a hung browser, not performance limits: each step normally takes
# well under a second.
STARTUP_GUARD_S = 60
CALL_GUARD_S = 60


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Chromium:
    """`with Chromium() as page:` a fresh profile and one page; `page.errors` lists the
    console errors and uncaught exceptions seen so far."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self._ids = itertools.count(1)

    def __enter__(self) -> Chromium:
        self._profile = Path(tempfile.mkdtemp(prefix="ssdlab-chromium-"))
        self._proc = subprocess.Popen([chromium_path(), *FLAGS, f"--user-data-dir={self._profile}",
                                       "about:blank"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port = self._port()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list") as answer:
            page = next(t for t in json.load(answer) if t["type"] == "page")
        self._ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=CALL_GUARD_S,
                                               suppress_origin=True)
        for domain in ("Runtime", "Log", "Page"):
            self.call(f"{domain}.enable")
        return self

    def __exit__(self, *exc: object) -> None:
        self._ws.close()
        self._proc.terminate()
        self._proc.wait()
        shutil.rmtree(self._profile, ignore_errors=True)

    def _port(self) -> int:
        active = self._profile / "DevToolsActivePort"
        deadline = time.monotonic() + STARTUP_GUARD_S
        while not active.exists() or not active.read_text().strip():
            if self._proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("chromium did not open its DevTools port")
            time.sleep(0.05)
        return int(active.read_text().split()[0])

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """Send a command and return its result, recording the events that arrive first."""
        call_id = next(self._ids)
        self._ws.send(json.dumps({"id": call_id, "method": method, "params": params}))
        while True:
            message = json.loads(self._ws.recv())
            if message.get("id") == call_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]
            self._record(message)

    def _record(self, event: dict[str, Any]) -> None:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.consoleAPICalled" and params["type"] in ("error", "assert"):
            self.errors.append(" ".join(str(a.get("value", a.get("description")))
                                        for a in params["args"]))
        elif method == "Runtime.exceptionThrown":
            self.errors.append(params["exceptionDetails"].get("exception", {})
                               .get("description", params["exceptionDetails"]["text"]))
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            self.errors.append(params["entry"]["text"])

    def open(self, url: str) -> None:
        self.call("Page.navigate", url=url)

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']['text']}")
        return result["result"].get("value")

    def wait_for(self, expression: str) -> Any:
        """Evaluate until the expression is truthy (the page finished something)."""
        deadline = time.monotonic() + CALL_GUARD_S
        while not (value := self.evaluate(expression)):
            if time.monotonic() > deadline:
                raise RuntimeError(f"still false: {expression}")
            time.sleep(0.1)
        return value

    def screenshot(self, path: Path) -> None:
        shot = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        path.write_bytes(base64.b64decode(shot["data"]))

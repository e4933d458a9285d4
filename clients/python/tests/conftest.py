"""A real ``warden serve`` for the tests: ``node bin/warden.js serve`` (run ``npm run setup`` first).

Three test tenants: ``main`` (no policy), ``limited`` (maxSessions 1, for 429s) and ``policy``
(policies/default.yaml, whose ``sleep`` asks). The warm pool is off and the server closes its
sessions on exit; any container of these tenants still there afterwards is removed.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


def _tenant(tenant_id: str, key: str, max_sessions: int, **extra):
    quotas = {
        "maxSessions": max_sessions,
        "maxConcurrentToolCalls": 4,
        "cpus": 1,
        "memoryBytes": 268435456,
        "workspaceBytes": 67108864,
    }
    keys = [{"id": "k", "sha256": hashlib.sha256(key.encode()).hexdigest()}]
    return {"id": tenant_id, "keys": keys, "quotas": quotas, **extra}


@pytest.fixture(scope="session")
def served():
    """``{"url", "keys": {"main", "limited", "policy"}}`` of a running server."""
    prefix = f"test-py-{os.getpid()}"
    keys = {name: f"{prefix}-key-{name}" for name in ("main", "limited", "policy")}
    tenants = [
        _tenant(f"{prefix}-main", keys["main"], 4),
        _tenant(f"{prefix}-limited", keys["limited"], 1),
        _tenant(f"{prefix}-policy", keys["policy"], 4, policy=[str(REPO / "policies/default.yaml")]),
    ]
    with tempfile.TemporaryDirectory(prefix="warden-py-") as tmp:
        config = Path(tmp) / "serve.json"
        config.write_text(
            json.dumps({"port": 0, "stateDir": "state", "warmPool": {"size": 0}, "tenants": tenants})
        )
        child = subprocess.Popen(
            ["node", str(REPO / "bin/warden.js"), "serve", "--config", str(config), "--on-exit", "close"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        lines: list[str] = []
        listening = threading.Event()

        def drain() -> None:
            for line in child.stderr:  # type: ignore[union-attr]
                lines.append(line)
                if "listening on" in line:
                    listening.set()

        threading.Thread(target=drain, daemon=True).start()
        deadline = time.monotonic() + 60
        while not listening.wait(0.2):
            if child.poll() is not None or time.monotonic() > deadline:
                child.kill()
                raise RuntimeError("warden serve did not start:\n" + "".join(lines))
        url = re.search(r"listening on (http://\S+)", "".join(lines)).group(1)  # type: ignore[union-attr]
        try:
            yield {"url": url, "keys": keys}
        finally:
            child.terminate()
            try:
                child.wait(timeout=60)
            except subprocess.TimeoutExpired:
                child.kill()
            for tenant in tenants:
                ids = subprocess.run(
                    ["docker", "ps", "-aq", "--filter", f"label=io.warden.tenant={tenant['id']}"],
                    capture_output=True,
                    text=True,
                ).stdout.split()
                if ids:
                    subprocess.run(["docker", "rm", "-f", "-v", *ids], capture_output=True)

"""docs/clients.md's Python example, read from the markdown and run as written against the real
``warden serve`` of conftest.py: its ``http://127.0.0.1:8080`` and ``demo-key-acme`` are replaced by
that server's URL and a test tenant's key, and nothing else (see test/helpers/doc-snippets.ts for
the marks)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def doc_snippet(file: str, name: str) -> str:
    """The text of the fenced block marked ``<!-- snippet: NAME -->`` in ``file`` (from the repository)."""
    text = (REPO / file).read_text(encoding="utf-8")
    found = re.findall(r"<!--\s*snippet:\s*" + re.escape(name) + r"\s*-->\s*\n```[^\n]*\n(.*?)```", text, re.S)
    assert len(found) == 1, f"{file} has {len(found)} blocks marked {name!r} (want exactly one)"
    return found[0]


def test_clients_md_python_example(served):
    code = doc_snippet("docs/clients.md", "client-python")
    for old, new in (("http://127.0.0.1:8080", served["url"]), ("demo-key-acme", served["keys"]["main"])):
        assert old in code
        code = code.replace(old, new)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, "docs/clients.md#client-python", "exec"), {})
    out = printed.getvalue()
    assert "hello.txt" in out
    assert "+++ b/hello.txt" in out

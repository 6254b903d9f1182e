"""Which host a failed build or gold run needed (Terminal-Bench tasks that fetch from GitHub,
Hugging Face...): real failure texts from the benchmark over the full task set. Only internet
hosts this machine cannot reach count; a server the task itself should have started
(``localhost``, a compose service) or a Python module named in a traceback never does.

``reachable`` is replaced by a fixed answer so the cases do not depend on this machine's network
(the real check, a TCP connection, runs in bench/bench_terminal_bench.py)."""

from __future__ import annotations

import pytest

from exploreval.suites.terminal import _image

REACHABLE = {"pypi.org", "files.pythonhosted.org", "deb.debian.org"}


@pytest.fixture(autouse=True)
def _network(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_image, "reachable", lambda host: host in REACHABLE)


@pytest.mark.parametrize(
    ("output", "host"),
    [
        ("fatal: unable to access 'https://github.com/x/y.git/': Could not resolve host: "
         "github.com", "github.com"),
        ("--2025-01-01--  https://cdn.kernel.org/pub/linux.tar.xz\nResolving cdn.kernel.org "
         "(cdn.kernel.org)... failed: Name or service not known.", "cdn.kernel.org"),
        ("wget: unable to resolve host address \u2018upc.lbl.gov\u2019", "upc.lbl.gov"),
        # a server the task should have started: the agent's (or gold's) problem, not the network
        ("curl: (7) Failed to connect to localhost port 8000 after 0 ms: Connection refused",
         None),
        ("requests.exceptions.ConnectionError: HTTPConnectionPool(host='0.0.0.0', port=5000): "
         "Max retries exceeded (NewConnectionError)", None),
        ("Could not connect to remote: Name or service not known", None),
        # a module path printed by a traceback next to a resolver error
        ("File \"/usr/lib/python3.12/urllib.request.py\", line 1319\nurlopen error [Errno -2] "
         "Name or service not known", None),
        ("pip._vendor.urllib3.connection.HTTPSConnection object: Failed to establish a new "
         "connection: [Errno -2] Name or service not known", None),
        # reachable from here: not the reason
        ("Could not resolve host: pypi.org", None),
    ],
)  # fmt: skip
def test_the_host_a_failure_needed(output: str, host: str | None) -> None:
    assert _image._unreachable_host(output) == host


def test_urls_in_scripts_are_checked_and_local_ones_ignored() -> None:
    script = (
        "curl -fsSL http://localhost:8080/health\n"
        "pip install torch --index-url https://download.pytorch.org/whl/cpu\n"
    )
    assert _image.unreachable_in([script]) == "download.pytorch.org"
    assert _image.unreachable_in(["curl -s http://127.0.0.1:5000/ && pip install x"]) is None

"""Which host a failed build or gold run needed (Terminal-Bench tasks that fetch from GitHub,
Hugging Face...): real failure texts from the benchmark over the full task set. Only internet
hosts this machine cannot reach count; a server the task itself should have started
(``localhost``, a compose service) or a Python module named in a traceback never does.

``reachable`` is replaced by a fixed answer so the cases do not depend on this machine's network
(the real check, a TCP connection, runs in bench/bench_terminal_bench.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from exploreval.suites.terminal import _reachability

SEAL = Path(__file__).parents[2] / "fixtures" / "terminal" / "seal"

REACHABLE = {"pypi.org", "files.pythonhosted.org", "deb.debian.org"}


@pytest.fixture(autouse=True)
def _network(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_reachability, "reachable", lambda host: host in REACHABLE)


@pytest.mark.parametrize(
    ("output", "host"),
    [
        ("fatal: unable to access 'https://github.com/x/y.git/': Could not resolve host: "
         "github.com", "github.com"),
        ("--2025-01-01--  https://cdn.kernel.org/pub/linux.tar.xz\nResolving cdn.kernel.org "
         "(cdn.kernel.org)... failed: Name or service not known.", "cdn.kernel.org"),
        ("wget: unable to resolve host address \u2018upc.lbl.gov\u2019", "upc.lbl.gov"),
        # terminal-bench-core's chem-rf: its gold fetches its data with the AWS CLI
        ('fatal error: Could not connect to the endpoint URL: "https://kin-del-2024.s3.amazonaws'
         '.com/data/mapk14_1M.parquet"', "kin-del-2024.s3.amazonaws.com"),
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
    assert _reachability.unreachable_host(output) == host


def test_urls_in_scripts_are_checked_and_local_ones_ignored() -> None:
    script = (
        "curl -fsSL http://localhost:8080/health\n"
        "pip install torch --index-url https://download.pytorch.org/whl/cpu\n"
    )
    assert _reachability.unreachable_in([script]) == "download.pytorch.org"
    assert _reachability.unreachable_in(["curl -s http://127.0.0.1:5000/ && pip install x"]) is None
    # terminal-bench-core's home-server-https: its own DNS service answers homeserver.local
    served = ["nslookup homeserver.local\ncurl -k https://homeserver.local/ https://api.test/"]
    assert _reachability.unreachable_in(served) is None


@pytest.mark.parametrize(
    ("code", "host"), [(4, "dl-cdn.alpinelinux.org"), (6, "dl-cdn.alpinelinux.org"), (1, None)]
)
def test_a_quiet_downloader_names_its_host_by_its_exit_code(code: int, host: str | None) -> None:
    """terminal-bench-core's ``qemu-startup``: ``RUN wget -q https://dl-cdn.alpinelinux.org/...``
    prints nothing and exits 4 (wget's network failure): the host is the one it fetches from.
    Any other exit of a silent command says nothing about the network."""
    run = ["/bin/sh", "-c", "wget -q https://dl-cdn.alpinelinux.org/alpine/x.iso -O /app/a.iso"]
    assert _reachability.unreachable_host("", run, code) == host
    assert _reachability.unreachable_host("", ["/bin/sh", "-c", "exit 4"], 4) is None


HF_OFFLINE = """\
E   OSError: We couldn't connect to 'https://huggingface.co' to load the files, and couldn't
E   find them in the cached files.
"""
HF_CACHE_MISS = """\
E   huggingface_hub.errors.LocalEntryNotFoundError: An error happened while trying to locate
E   the file on the Hub and we cannot find the requested files in the local cache.
"""


@pytest.mark.parametrize("output", [HF_OFFLINE, HF_CACHE_MISS], ids=["named", "cache-miss"])
def test_a_model_hub_the_tests_load_from_is_a_host_hidden_in_test_code(output: str) -> None:
    """Tests that load a model at test time name no host in the task's files: the hub's own
    offline errors do (issue 43: these counted as gold failures)."""
    assert not _reachability.reachable("huggingface.co")  # no internet here but package registries
    assert _reachability.unreachable_at_test_time(output) == "huggingface.co"


def test_a_host_in_the_test_files_counts_only_for_a_remote_failure() -> None:
    tests = ['URL = "https://download.pytorch.org/models/x.pt"\n']
    resolve = (
        "urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>"
    )
    refused = "ConnectionRefusedError: [Errno 111] Connection refused"
    assert _reachability.unreachable_at_test_time(resolve, tuple(tests)) == "download.pytorch.org"
    # a refused connection is a server that is down (the agent's), not a host out of reach
    assert _reachability.unreachable_at_test_time(refused, tuple(tests)) is None
    assert _reachability.unreachable_at_test_time("AssertionError: 41 != 42", tuple(tests)) is None


@pytest.mark.slow
async def test_a_verification_that_needs_an_unreachable_host_says_so(tmp_path: Path) -> None:
    """A real task whose test fetches a model card at test time: the verdict names the host
    instead of blaming the agent (and the benchmark counts the task as unreachable)."""
    import json
    import shutil

    from exploreval.suites.terminal._env import TerminalEnv

    task = tmp_path / "hub-at-test-time"
    shutil.copytree(SEAL / "tb1-answer", task)
    (task / "tests" / "test_outputs.py").write_text(
        "import urllib.request\n\n\ndef test_model_card():\n"
        "    urllib.request.urlopen('https://huggingface.co/api/models/gpt2', timeout=20)\n"
    )
    env = TerminalEnv(tasks=str(task), image="build", cast=False)
    try:
        await env.areset(seed=0)
        _, _, _, _, info = await env.astep(json.dumps({"commands": [], "task_complete": True}))
    finally:
        await env.aclose()
    verification = info["verification"]
    assert verification["resolved"] is False
    assert verification["unreachable_host"] == "huggingface.co"
    assert any("need huggingface.co" in r for r in verification["reasons"])


@pytest.mark.slow
async def test_a_host_no_file_spells_is_named_from_the_lookups_that_failed(tmp_path: Path) -> None:
    """terminal-bench-core's get-bitcoin-nodes and solana-data need hosts no file spells as a URL
    (a DNS seed list, ``f"https://api.{NETWORK}.solana.com"``) and catch the error: only the
    episode's DNS log sees them. The tests' failed lookup names the host the verdict needs; the
    agent's own lookups are listed, never blamed on the task."""
    import json
    import shutil

    from exploreval.suites.terminal._env import TerminalEnv

    task = tmp_path / "rpc-at-test-time"
    shutil.copytree(SEAL / "tb1-answer", task)
    (task / "tests" / "test_outputs.py").write_text(
        "import socket\n\n\ndef test_rpc_endpoint():\n    network = 'devnet'\n    try:\n"
        "        socket.getaddrinfo(f'api.{network}.solana' + '.com', 443)\n        ok = True\n"
        "    except OSError:\n        ok = False\n    assert ok, 'the endpoint did not answer'\n"
    )
    lookup = ("python3 -c \"import socket\ntry: socket.getaddrinfo('seed.' + 'bitcoin.sipa.be', "
              "8333)\nexcept OSError: print('no seed')\"\n")  # fmt: skip
    env = TerminalEnv(tasks=str(task), image="build", cast=False)
    try:
        await env.areset(seed=0)
        action = {"commands": [{"keystrokes": lookup, "duration": 8.0, "block": True}],
                  "task_complete": True}  # fmt: skip
        _, _, _, _, info = await env.astep(json.dumps(action))
    finally:
        await env.aclose()
    verification = info["verification"]
    assert verification["resolved"] is False
    assert verification["unresolved_hosts"] == ["seed.bitcoin.sipa.be", "api.devnet.solana.com"]
    assert verification["unreachable_host"] == "api.devnet.solana.com"
    assert any("need api.devnet.solana.com" in r for r in verification["reasons"])

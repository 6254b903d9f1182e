"""The DNS log: names an episode's processes asked for and did not get, seen from outside.

The real path runs a sandbox with a network on this machine, whose resolver answers for the
package registries and fails for every other internet name (github.com, a Bitcoin DNS seed)."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from exploreval.suites.terminal._dns_log import outcome, question, upstream_nameserver
from exploreval.suites.terminal._sandbox import Sandbox
from exploreval.suites.terminal._sandbox_config import SandboxConfig

_LABEL = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=20)


def _query(labels: list[str], qtype: int, ident: int = 7) -> bytes:
    name = b"".join(bytes([len(x)]) + x.encode() for x in labels) + b"\0"
    return struct.pack("!HHHHHH", ident, 0x0100, 1, 0, 0, 0) + name + struct.pack("!HH", qtype, 1)


@given(st.lists(_LABEL, min_size=1, max_size=6), st.integers(0, 65535))
def test_a_question_reads_back_as_it_was_asked(labels: list[str], qtype: int) -> None:
    query = _query(labels, qtype)
    assert question(query) == (".".join(labels), qtype)
    assert question(query[:-1]) is None  # cut short: no type
    assert question(query[:11]) is None


@given(st.integers(0, 15), st.integers(0, 3))
def test_only_a_noerror_answer_counts_as_resolved(rcode: int, answers: int) -> None:
    header = struct.pack("!HHHHHH", 7, 0x8180 | rcode, 1, answers, 0, 0)
    why = outcome(header)
    assert (why is None) == (rcode == 0)
    if rcode == 3:
        assert why == "NXDOMAIN"
    assert outcome(None) == "no answer in 5 s" and outcome(b"\x00") == "a malformed answer"


def test_the_upstream_is_the_hosts_first_nameserver(tmp_path: Path) -> None:
    conf = tmp_path / "resolv.conf"
    conf.write_text("# comment\nsearch example.org\nnameserver fe80::1%eth0\nnameserver 9.9.9.9\n")
    assert upstream_nameserver(conf) == "fe80::1"
    conf.write_text("nameserver not-an-address\nnameserver 10.0.0.2\n")
    assert upstream_nameserver(conf) == "10.0.0.2"
    assert upstream_nameserver(tmp_path / "missing") == "127.0.0.1"


_LOOKUP = (
    "import socket, sys\n"
    "for name in sys.argv[1:]:\n"
    "    try:\n"
    "        socket.getaddrinfo(name, 443)\n"
    "        print(name, 'resolved')\n"
    "    except OSError as exc:\n"
    "        print(name, 'failed', exc)\n"
)


@pytest.mark.slow
async def test_the_log_names_what_the_sandbox_could_not_resolve_and_only_that(
    template: Path,
) -> None:
    """A name built at run time (no URL in any file) is still seen: the lookup itself is."""
    config = SandboxConfig(workdir_template=template, network=True)
    async with await Sandbox.start(config) as sb:
        seed = "seed." + "bitcoin.sipa.be"
        done = await sb.exec(["python3", "-c", _LOOKUP, "pypi.org", seed, "github.com"])
        assert "pypi.org resolved" in done.stdout, done.stdout + done.stderr
        assert f"{seed} failed" in done.stdout and "github.com failed" in done.stdout
        resolv = await sb.exec(["cat", "/etc/resolv.conf"])
        assert resolv.stdout.splitlines()[0] == "nameserver 127.0.0.53"
        # nothing in the sandbox can take the forwarder's port over: it is held from outside
        # (where low ports are open to the sandbox: a compose network), or privileged
        squat = await sb.exec(["python3", "-c", "import socket; s = socket.socket(socket.AF_INET,"
                               " socket.SOCK_DGRAM); s.bind(('127.0.0.53', 53))"])  # fmt: skip
        assert squat.returncode != 0
        assert "Address already in use" in squat.stderr or "Permission denied" in squat.stderr
        assert sb._net is not None and sb._net.dns is not None
        assert sb._net.dns.error is None
        assert sb._net.unresolved() == [seed, "github.com"]
        assert sb._net.dns.why("github.com") in ("NXDOMAIN", "SERVFAIL", "REFUSED")
        later = sb._net.dns.unresolved(since=float("inf"))
        assert later == []
    assert sb._net.unresolved() == [seed, "github.com"]  # readable after the sandbox ended


@pytest.mark.slow
async def test_without_the_log_names_still_resolve(
    template: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If the forwarder cannot listen in the namespace, the sandbox's resolver falls back to
    slirp4netns's DNS: the log is a diagnostic, never a dependency."""
    from exploreval.suites.terminal import _dns_log

    def refuse(pid: int) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(_dns_log, "bind_in_namespace", refuse)
    config = SandboxConfig(workdir_template=template, network=True)
    async with await Sandbox.start(config) as sb:
        done = await sb.exec(["python3", "-c", _LOOKUP, "pypi.org"])
        assert "pypi.org resolved" in done.stdout, done.stdout + done.stderr
        assert sb._net is not None and sb._net.dns is not None
        assert "could not listen" in (sb._net.dns.error or "")
        assert sb._net.unresolved() == []


@pytest.mark.slow
async def test_on_a_compose_network_the_port_is_held_and_every_sandbox_is_logged(
    template: Path,
) -> None:
    """On an episode's shared network low ports are open to every sandbox (a web server binds
    :80), so only the forwarder's own socket keeps the agent off 127.0.0.53:53."""
    from exploreval.suites.terminal._network import EpisodeNetwork

    network = await EpisodeNetwork(["main"]).start(internet=True)
    try:
        config = SandboxConfig(workdir_template=template, network=True)
        async with await Sandbox.start(config, network_of=network) as sb:
            squat = await sb.exec(["python3", "-c", "import socket; s = socket.socket(socket."
                                   "AF_INET, socket.SOCK_DGRAM); s.bind(('127.0.0.53', 53))"])  # fmt: skip
            assert squat.returncode != 0 and "Address already in use" in squat.stderr
            low = await sb.exec(["python3", "-c", "import socket; socket.socket().bind(("
                                 "'127.0.0.1', 80)); print('bound')"])  # fmt: skip
            assert "bound" in low.stdout, low.stderr  # low ports are open here
            done = await sb.exec(["python3", "-c", _LOOKUP, "github.com", "pypi.org"])
            assert "github.com failed" in done.stdout and "pypi.org resolved" in done.stdout
        assert network.slirp is not None and network.slirp.unresolved() == ["github.com"]
    finally:
        network.close()


_FLOOD = (
    "import socket, sys, time\n"
    "held = []\n"
    "for _ in range(300):\n"
    "    s = socket.socket()\n"
    "    s.settimeout(2)\n"
    "    try:\n"
    "        s.connect(('127.0.0.53', 53))\n"
    "        held.append(s)\n"
    "    except OSError:\n"
    "        s.close()\n"
    "print('held', len(held), flush=True)\n"
    "time.sleep(float(sys.argv[1]))\n"
)


@pytest.mark.slow
async def test_a_flood_of_lookups_cannot_spend_the_hosts_descriptors(template: Path) -> None:
    """The forwarder runs in this process: connections beyond MAX_IN_FLIGHT are closed at once,
    and names still resolve once the flood is gone."""
    import asyncio

    from exploreval.suites.terminal._dns_log import MAX_IN_FLIGHT

    config = SandboxConfig(workdir_template=template, network=True)
    async with await Sandbox.start(config) as sb:
        assert sb._net is not None and sb._net.dns is not None
        log = sb._net.dns
        flood = asyncio.ensure_future(sb.exec(["python3", "-c", _FLOOD, "4"], timeout=60))
        peak = 0
        while not flood.done():
            peak = max(peak, len(log._tasks))  # connections served: each holds a descriptor
            await asyncio.sleep(0.02)
        # every connect succeeded on the sandbox's side, yet no more than the cap were served
        # (without it: all 300, one descriptor each here). Counting this process's open files
        # instead was flaky beside a whole test session's.
        assert "held 300" in (await flood).stdout
        assert min(MAX_IN_FLIGHT, 200) - 8 <= peak <= min(MAX_IN_FLIGHT, 200), peak
        done = await sb.exec(["python3", "-c", _LOOKUP, "pypi.org"])
        assert "pypi.org resolved" in done.stdout, done.stdout + done.stderr


@given(st.binary(max_size=600))
def test_any_bytes_a_sandbox_sends_are_read_without_raising(data: bytes) -> None:
    """The forwarder parses what the sandbox sends, in this process: hostile bytes give None or
    a name, never an exception."""
    asked = question(data)
    assert asked is None or (isinstance(asked[0], str) and 0 <= asked[1] <= 65535)
    why = outcome(data)
    assert why is None or isinstance(why, str)

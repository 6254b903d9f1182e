"""What the host sets in a sandbox's namespaces before anything of the agent runs there.

**System V IPC.** A sandbox's IPC namespace (``bwrap --unshare-ipc``) starts with the kernel's
defaults: shared memory segments up to 16 EB in all, held by no process and seen by no resident
set size. The host writes the namespace's limits from memory_mb (:func:`ipc_limits`): at most
``memory_mb`` of segments in all, a segment destroyed with its last attachment
(``shm_rmid_forced``, so every segment that holds pages is mapped by a process of the sandbox,
where the memory watchdog counts it: :func:`._limits.sample_tree`), and message queues within an
eighth of it. These sysctls belong to the namespace's root user, so the sandbox sees
``/proc/sys`` read-only (:func:`._sandbox_argv.bwrap_root_args`), and no user namespace can be
made inside it (which would own a fresh IPC namespace of its own).

**The host's own addresses.** The user-mode stack (slirp4netns) connects from this machine to
whatever address the sandbox asks for, this machine's own addresses included: a service the
host bound to ``0.0.0.0`` answered a sandbox at the host's ``eth0`` address. Before the sandbox
is released, :func:`block_host_addresses` adds an ``unreachable`` route to the sandbox's network
namespace for every address of every host interface (``/32``, ``/128``), every network the
host is directly on (its addresses' prefixes), ``127.0.0.0/8`` and slirp4netns's host alias
``10.0.2.2``. Nothing in the sandbox can remove them: its network namespace belongs to its user
namespace, where it holds no ``CAP_NET_ADMIN`` (nor ``CAP_NET_RAW``, whose packet sockets would
bypass routes: :data:`._userns.DOCKER_CAPS`). The DNS log asks the upstream resolver from the
host's namespace (:mod:`._dns_log`), and slirp4netns's DNS (``10.0.2.3``) stays reachable.
"""

from __future__ import annotations

import ipaddress
import json
import os
import subprocess
import time
from pathlib import Path

from exploreval.suites.terminal._errors import SandboxError

#: slirp4netns's address for the host (its gateway): with ``--disable-host-loopback`` it
#: forwards nowhere, and is blocked all the same.
SLIRP_HOST = "10.0.2.2"
_PAGE = os.sysconf("SC_PAGE_SIZE")
#: System V message queues' default size (kernel.msgmnb): what one queue can hold.
_MSGMNB = 16384


def ipc_limits(memory_mb: int) -> dict[str, int]:
    """The IPC namespace's sysctls (``/proc/sys/kernel/<name>``) for a sandbox of ``memory_mb``."""
    total = int(memory_mb) * 2**20
    return {
        "shmmax": total,
        "shmall": total // _PAGE,
        "shmmni": 4096,
        "shm_rmid_forced": 1,
        "msgmni": max(16, min(32000, total // 8 // _MSGMNB)),
    }


def apply_ipc_limits(pid: int, uid: int, memory_mb: int) -> None:
    """Write :func:`ipc_limits` into the IPC namespace of ``pid``. The kernel lets only the
    namespace's root user write them (host root included: it is not that user), so the writer
    enters the namespace as ``uid``; it runs the host's programs, never the sandbox's.

    bwrap reports its child's pid before the child has written its own uid map (4 starts in 30
    on this machine): until then the namespace has no root user and every write is refused.
    The sandbox is still blocked (``--block-fd``), so the map is awaited first."""
    _await_uid_map(pid)
    script = "".join(
        f"echo {value} > /proc/sys/kernel/{name} && "
        for name, value in ipc_limits(memory_mb).items()
    )
    argv = ["nsenter", f"--ipc=/proc/{pid}/ns/ipc", "--", "setpriv", f"--reuid={uid}"]
    argv += [f"--regid={uid}", "--clear-groups", "--", "/bin/sh", "-c", script + "true"]
    _run(argv, "the sandbox's IPC limits could not be set")


def _await_uid_map(pid: int, timeout: float = 10.0) -> None:
    """Wait until the user namespace of ``pid`` maps a uid (its ``uid_map`` is written)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if Path(f"/proc/{pid}/uid_map").read_text().strip():
                return
        except OSError as exc:
            raise SandboxError(f"the sandbox ended before it started: {exc}") from None
        if time.monotonic() > deadline:
            raise SandboxError(f"the sandbox's user namespace had no uid map after {timeout:.0f} s")
        time.sleep(0.001)


def host_networks() -> list[str]:
    """Every address of every interface of this machine (as a host route) and every network it
    is directly on, IPv4 and IPv6 (link-local ones as addresses only), then ``127.0.0.0/8`` and
    :data:`SLIRP_HOST`: what :func:`block_host_addresses` makes unreachable."""
    done = subprocess.run(["ip", "-j", "addr", "show"], capture_output=True, text=True, check=False)
    found: list[str] = []
    try:
        links = json.loads(done.stdout) if done.returncode == 0 else []
    except ValueError:
        links = []
    for link in links:
        for info in link.get("addr_info", []):
            try:
                iface = ipaddress.ip_interface(f"{info['local']}/{info['prefixlen']}")
            except (KeyError, ValueError):
                continue
            found.append(str(ipaddress.ip_network(iface.ip)))
            if not iface.ip.is_link_local and iface.network.prefixlen < iface.max_prefixlen:
                found.append(str(iface.network))
    found += ["127.0.0.0/8", f"{SLIRP_HOST}/32"]
    return list(dict.fromkeys(found))


def block_host_addresses(pid: int) -> list[str]:
    """Make :func:`host_networks` unreachable from the network namespace of ``pid`` and open
    ping (ICMP datagram sockets) to every uid there; returns the networks blocked."""
    networks = host_networks()
    batch = "".join(f"route replace unreachable {net}\n" for net in networks)
    net = f"--net=/proc/{pid}/ns/net"
    blocked = "the host's addresses could not be blocked"
    _run(["nsenter", net, "--", "ip", "-batch", "-"], blocked, batch)
    ping = "echo '0 2147483647' > /proc/sys/net/ipv4/ping_group_range"
    _run(["nsenter", net, "--", "/bin/sh", "-c", ping], "ping could not be opened")
    return networks


def _run(argv: list[str], what: str, stdin: str | None = None) -> None:
    done = subprocess.run(
        argv, input=stdin, capture_output=True, text=True, check=False, timeout=20
    )
    if done.returncode != 0:
        raise SandboxError(f"{what}: {(done.stderr or done.stdout).strip()}")

"""Which hosts a task needs that this machine cannot reach, read from what failed.

A build step or a verification that fails on the network says nothing about the agent: the
image builder names the host in :class:`ImageBuildError`, and a failed verification records it as
``unreachable_host``. The host comes from the failure's own text (curl, pip, uv, apt, wget,
Hugging Face), from a client's offline error that names none (Hugging Face: huggingface.co), or,
for a failed verification, from the test files' URLs when the failure was remote.
"""

from __future__ import annotations

import re
import sys

_UNREACHABLE = (
    re.compile(r"Could not resolve host:? '?([\w.-]+)"),
    re.compile(r"Failed to connect to ([\w.-]+)"),
    re.compile(r"Could not connect to ([\w.-]+)"),
    re.compile(r"host='([\w.-]+)'.*(?:Max retries|ConnectTimeout|NewConnectionError)"),
    re.compile(r"Temporary failure resolving '([\w.-]+)'"),
    re.compile(r"unable to access 'https?://([\w.-]+)"),
    re.compile(r"Name or service not known.*?([\w-]+\.[\w.-]+)"),
    re.compile(r"unable to resolve host address [‘'\"]([\w.-]+)"),
    re.compile(r"Resolving ([\w.-]+) \([\w.-]+\)\.\.\. failed"),
    # uv: "error sending request for url (https://github.com/...)" ... "dns error"
    re.compile(r"(?:Failed to download|error sending request for url \(?) ?https?://([\w.-]+)"),
    # huggingface_hub / transformers: "We couldn't connect to 'https://huggingface.co' to load"
    re.compile(r"couldn't connect to '?https?://([\w.-]+)"),
    # the AWS CLI: 'Could not connect to the endpoint URL: "https://bucket.s3.amazonaws.com/..."'
    re.compile(r"Could not connect to the endpoint URL: \"?https?://([\w.-]+)"),
)


#: Clients whose offline failure names no host: the host they fetch from by default.
_CLIENT_HOSTS = (
    # huggingface_hub with no network (or HF_HUB_OFFLINE): a model not in the local cache
    (re.compile(r"LocalEntryNotFoundError|OfflineModeIsEnabled|We couldn't connect to"),
     "huggingface.co"),
)  # fmt: skip


_NETWORK_FAILURE = re.compile(
    r"Name or service not known|Temporary failure in name resolution|Could not resolve|"
    r"Network is unreachable|Connection refused|Connection timed out|NewConnectionError|"
    r"Failed to connect|urlopen error"
)


#: A failure to reach a remote host (not a refused local connection: a server that is down).
_REMOTE_FAILURE = re.compile(
    r"Name or service not known|Temporary failure in name resolution|Could not resolve|"
    r"Network is unreachable|Connection timed out|ConnectTimeout|NameResolutionError"
)


_REACHABLE: dict[str, bool] = {}


def reachable(host: str) -> bool:
    """Can this machine open a TCP connection to ``host`` (443, else 80)? Cached per process."""
    import socket

    if host not in _REACHABLE:
        ok = False
        for port in (443, 80):
            try:
                socket.create_connection((host, port), timeout=4).close()
                ok = True
                break
            except OSError:
                continue
        _REACHABLE[host] = ok
    return _REACHABLE[host]


def unreachable_in(texts: list[str]) -> str | None:
    """The first host a URL in ``texts`` names that this machine cannot reach (checked)."""
    pattern = re.compile(
        r"https?://([A-Za-z0-9.-]+\.[A-Za-z]{2,})"
        r"|\b(?:curl|wget)\s+(?:-\S+\s+)*([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,})\b"
    )
    for text in texts:
        for match in pattern.finditer(text):
            host = (match.group(1) or match.group(2)).lower()
            if internet_host(host) and not reachable(host):
                return host
    return None


_HOSTNAME = re.compile(r"^[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}$")
#: Suffixes no internet host has: mDNS (RFC 6762), the reserved test and local names (RFC 6761,
#: RFC 2606) and the private-use ``.internal``, ``.lan``, ``.home.arpa``.
LOCAL_SUFFIXES = (".localhost", ".local", ".test", ".invalid", ".example", ".internal", ".lan",
                  ".home.arpa")  # fmt: skip


def internet_host(name: str) -> bool:
    """Could ``name`` be a host on the internet? Not ``localhost``, an address, a one-label name
    (a compose service: ``remote``), a name under a suffix reserved for local or test use
    (``homeserver.local``, served by a task's own DNS service) or a Python module path that a
    traceback printed near a network error (``urllib.request``, ``pip._vendor...``)."""
    if not _HOSTNAME.match(name) or name.endswith(LOCAL_SUFFIXES):
        return False
    first = name.split(".", 1)[0]
    return first not in sys.stdlib_module_names and first not in {"pip", "requests", "urllib3"}


#: Exit codes that mean the network failed when a downloader runs quietly (``wget -q``,
#: ``curl -s``) and prints nothing: wget's 4, curl's 6 (resolving) and 7 (connecting).
_QUIET_NETWORK_EXITS = frozenset({4, 6, 7})
_DOWNLOADER = re.compile(r"\b(?:wget|curl)\b")


def unreachable_host(
    output: str, command: list[str] | None = None, code: int | None = None
) -> str | None:
    """The host a network failure in ``output`` names; else, when the output shows a network
    failure (or a quiet downloader exited with ``code`` for one), a host the failing ``command``
    fetches from that this machine cannot reach."""
    for pattern in _UNREACHABLE:
        for match in pattern.finditer(output):
            host = match.group(1).strip(".'").lower()
            if internet_host(host) and not reachable(host):
                return host
    quiet = code in _QUIET_NETWORK_EXITS and any(_DOWNLOADER.search(c) for c in command or [])
    if command and (_NETWORK_FAILURE.search(output) or quiet):
        return unreachable_in(command)
    return None


def unreachable_at_test_time(output: str, sources: tuple[str, ...] = ()) -> str | None:
    """The host a failed verification needed and this machine cannot reach: named by the
    failure, implied by a client's offline error (Hugging Face's hub), or fetched by the test
    files (``sources``) when the output shows a network failure. None: not a network failure."""
    host = unreachable_host(output)
    if host:
        return host
    for pattern, default in _CLIENT_HOSTS:
        if pattern.search(output) and not reachable(default):
            return default
    if sources and _REMOTE_FAILURE.search(output):
        return unreachable_in(list(sources))
    return None

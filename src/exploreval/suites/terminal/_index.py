"""Is an agent-written file of a test tool the package index's own? (the audit's one exemption)

A correct solution may upgrade ``pip`` or install ``pytest`` system-wide; the task's test script
then runs that pip, or finds pytest "already satisfied". Their files are the agent's, byte for
byte identical to the release on the package index. The audit (:mod:`._audit`) does not count
such a file as agent code when both hold:

* **it is the index's**: a wheel of its distribution's version, fetched from the index (its
  SHA-256 checked against the index's), lists the file's path with the same SHA-256 in its own
  ``RECORD``; a console script (``bin/pip``) is the standard launcher of an entry point that
  wheel declares;
* **its distribution is a test tool**: the image ships a distribution of that name (any
  version), it is one of Python's packaging tools that the official images ship (pip,
  setuptools, wheel: :data:`PACKAGING_TOOLS`), the task's test scripts install it (``pip
  install``, ``uv add``, ``uvx --with``... lines of the shipped ``run-tests.sh`` /
  ``test.sh``), or it is pytest or something one of those requires (read from the verified
  wheels' own metadata).

A genuine release of something else (a pytest plugin from the index that the agent chose)
still counts: what runs before the tests is the verifier's choice, not only the index's bytes.
Without the index (offline), nothing is exempt. Downloads are cached in
``$EXPLOREVAL_INDEX_CACHE`` (default ``~/.cache/exploreval/index``).
"""

from __future__ import annotations

import base64
import contextlib
import csv
import hashlib
import io
import json
import os
import posixpath
import re
import urllib.error
import urllib.request
import zipfile
from email.parser import HeaderParser
from pathlib import Path

from exploreval.suites.terminal._view import SandboxView, list_in_root

DEFAULT_INDEX = "https://pypi.org/simple"
#: The test tool every Terminal-Bench and Harbor script runs; its requirements are tools too.
ROOT_TOOLS = ("pytest",)
#: Python's packaging tools, which the official ``python:`` images ship (pip always, setuptools
#: and wheel to 3.11). A test script's ``pip install`` runs under whichever of them is there:
#: setuptools' ``distutils-precedence.pth`` starts in every interpreter once a solution's
#: dependency (grpcio-tools...) installs setuptools on a 3.12+ image, and its genuine release
#: shapes no test, whichever version the agent's install chose.
PACKAGING_TOOLS = ("pip", "setuptools", "wheel")
_SITE_DIRS = ("site-packages", "dist-packages")
_MAX_WHEEL_BYTES = 64 * 2**20
_LAUNCHER = re.compile(
    rb"^#!\S*python[\d.]*\n(?:# -\*- coding: utf-8 -\*-\n)?import re\nimport sys\n"
    rb"from ([\w.]+) import (\w+)\nif __name__ == .__main__.:\n"
    rb"    sys\.argv\[0\] = re\.sub\(.*\)\n    sys\.exit\(\w+\(\)\)\n?$"
)


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def cache_dir() -> Path:
    return Path(
        os.environ.get("EXPLOREVAL_INDEX_CACHE", Path.home() / ".cache" / "exploreval" / "index")
    )


class IndexCheck:
    """Answers :meth:`genuine` for the files of one verification (results cached per path)."""

    def __init__(
        self,
        view: SandboxView,
        *,
        pristine: Path | None,
        index_url: str = DEFAULT_INDEX,
        timeout: float = 30.0,
        requested: set[str] | None = None,
    ) -> None:
        self.view = view
        self.requested = {normalize(n) for n in requested or ()}
        self.pristine = pristine
        self.index_url = index_url.rstrip("/")
        self.timeout = timeout
        self._records: dict[str, dict[str, str]] = {}  # site dir -> {relpath: dist-info}
        self._answers: dict[tuple[str, str], bool] = {}
        self._wheels: dict[tuple[str, str], dict[str, str] | None] = {}
        self._wheel_meta: dict[tuple[str, str], bytes] = {}
        self._entry_points: dict[tuple[str, str], str] = {}
        self._tools: set[str] | None = None
        self._test_tools: set[str] | None = None
        self._tool_modules: set[str] | None = None
        self.offline = False

    # -- the question -----------------------------------------------------------------------
    def genuine(
        self, path: str, site_dirs: set[str], captured: tuple[str, bytes] | None = None
    ) -> bool:
        """``path`` (an agent-written file) is a test tool's file as the index ships it.
        ``captured``: (digest, first bytes) of what it held when it was opened (the trace's);
        without it the file is read now."""
        key = (path, captured[0] if captured else "")
        if key in self._answers:
            return self._answers[key]
        answer = False
        with contextlib.suppress(OSError, ValueError, zipfile.BadZipFile, KeyError):
            answer = self._check(path, site_dirs, captured)
        self._answers[key] = answer
        return answer

    def _check(self, path: str, site_dirs: set[str], captured: tuple[str, bytes] | None) -> bool:
        owner = self._owner(path, site_dirs)
        if owner is None:
            return False
        site, rel, dist_info = owner
        name, _, version = dist_info[: -len(".dist-info")].partition("-")
        if normalize(name) not in self.tools(site_dirs):
            return False
        if captured is not None:
            digest, data = captured
        else:
            read = self.view.read(path, _MAX_WHEEL_BYTES)
            if read is None:
                return False
            digest, data = _digest(read), read
        record = self._wheel_record(name, version)
        if record is None:
            return False
        if rel in record:
            return record[rel] == digest
        if posixpath.dirname(path).endswith("/bin"):  # a console script the installer wrote
            match = _LAUNCHER.match(data)
            return match is not None and self._declares(
                name, version, match.group(1), match.group(2)
            )
        return False

    # -- which tools count -------------------------------------------------------------------
    def tools(self, site_dirs: set[str]) -> set[str]:
        """Distributions the image ships, Python's packaging tools, and the test tools
        (:meth:`test_tools`)."""
        if self._tools is not None:
            return self._tools
        tools: set[str] = set()
        if self.pristine is not None:
            for site in site_dirs:
                for name, _real in list_in_root(self.pristine, site):
                    if name.endswith(".dist-info"):
                        tools.add(normalize(name.partition("-")[0]))
        self._tools = tools | set(PACKAGING_TOOLS) | self.test_tools(site_dirs)
        return self._tools

    def test_tools(self, site_dirs: set[str]) -> set[str]:
        """pytest, what the task's test scripts install, and what those require (transitively,
        from the index's own metadata of the installed versions)."""
        if self._test_tools is not None:
            return self._test_tools
        tools: set[str] = set()
        self._test_tools = tools
        wanted = [*ROOT_TOOLS, *sorted(self.requested)]
        while wanted:
            name = normalize(wanted.pop())
            if name in tools:
                continue
            tools.add(name)
            version = self._installed_version(name, site_dirs)
            if version is None:
                continue
            metadata = self._verified_metadata(name, version)
            for requirement in _requirements(metadata):
                wanted.append(requirement)
        return tools

    def tool_modules(self, site_dirs: set[str]) -> set[str]:
        """The top-level modules of the test tools (``pytest``, ``_pytest``, ``pluggy``...):
        from the index's own wheels where they could be fetched, else their installed RECORD
        and the distribution's name."""
        if self._tool_modules is not None:
            return self._tool_modules
        modules: set[str] = set()
        for name in self.test_tools(site_dirs):
            modules.add(name.replace("-", "_"))
            version = self._installed_version(name, site_dirs)
            record = self._wheel_record(name, version) if version else None
            paths: list[str] = list(record or ())
            if not paths:
                for site in site_dirs:
                    paths += [p for p, d in self._record_index(site).items()
                              if normalize(d.partition("-")[0]) == name]  # fmt: skip
            for path in paths:
                top = path.split("/", 1)[0]
                if top and not top.startswith("..") and not top.endswith((".dist-info", ".data")):
                    modules.add(re.sub(r"\.(py|pth)$|\..*\.so$|\.so$", "", top))
        self._tool_modules = modules
        return modules

    def _installed_version(self, name: str, site_dirs: set[str]) -> str | None:
        for site in site_dirs:
            for dist_info in set(self._record_index(site).values()):
                dist, _, version = dist_info[: -len(".dist-info")].partition("-")
                if normalize(dist) == name:
                    return version
        return None

    def _verified_metadata(self, name: str, version: str) -> bytes:
        if self._wheel_record(name, version) is None:
            return b""
        return self._wheel_meta.get((normalize(name), version), b"")

    # -- what the sandbox holds -----------------------------------------------------------------
    def _owner(self, path: str, site_dirs: set[str]) -> tuple[str, str, str] | None:
        """(site dir, path relative to it, the dist-info whose RECORD lists it)."""
        candidates = [s for s in site_dirs if path.startswith(s + "/")]
        if not candidates:
            candidates = sorted(site_dirs)  # a script in bin/, listed as ../../../bin/x
        for site in candidates:
            rel = posixpath.relpath(path, site)
            dist_info = self._record_index(site).get(rel)
            if dist_info is not None:
                return site, rel, dist_info
        return None

    def _record_index(self, site: str) -> dict[str, str]:
        found = self._records.get(site)
        if found is not None:
            return found
        found = {}
        for name, real in self.view.listdir(site):
            if not name.endswith(".dist-info") or not real:
                continue
            raw = self.view.read(f"{site}/{name}/RECORD", 4_000_000) or b""
            for row in csv.reader(io.StringIO(raw.decode("utf-8", "replace"))):
                if row:
                    found.setdefault(posixpath.normpath(row[0]), name)
        self._records[site] = found
        return found

    # -- the index -----------------------------------------------------------------------------
    def _wheel_record(self, name: str, version: str) -> dict[str, str] | None:
        """{path: "sha256=..."} from a wheel of ``name==version`` on the index, or None."""
        key = (normalize(name), version)
        if key in self._wheels:
            return self._wheels[key]
        record = None
        for wheel in self._wheel_files(name, version):
            with zipfile.ZipFile(io.BytesIO(wheel)) as archive:
                names = archive.namelist()
                record_name = next(
                    (n for n in names if n.endswith(".dist-info/RECORD") and n.count("/") == 1),
                    None,
                )
                if record_name is None:
                    continue
                record = {}
                text = archive.read(record_name).decode("utf-8", "replace")
                for row in csv.reader(io.StringIO(text)):
                    if len(row) >= 2 and row[1]:
                        record[posixpath.normpath(_installed_path(row[0]))] = row[1]
                info = record_name.rsplit("/", 1)[0]
                with contextlib.suppress(KeyError):
                    self._wheel_meta[key] = archive.read(f"{info}/METADATA")
                with contextlib.suppress(KeyError):
                    self._entry_points[key] = archive.read(f"{info}/entry_points.txt").decode(
                        "utf-8", "replace"
                    )
            break
        self._wheels[key] = record
        return record

    def _declares(self, name: str, version: str, module: bytes, func: bytes) -> bool:
        text = self._entry_points.get((normalize(name), version), "")
        target = f"{module.decode()}:{func.decode()}"
        return any(line.split("=", 1)[-1].strip() == target for line in text.splitlines())

    def _wheel_files(self, name: str, version: str) -> list[bytes]:
        """The wheels of ``name==version`` (pure-Python ones first), each checked against the
        index's SHA-256, downloaded once and cached."""
        if self.offline:
            return []
        listing = self._fetch(
            f"{self.index_url}/{normalize(name)}/",
            accept="application/vnd.pypi.simple.v1+json",
        )
        if listing is None:
            return []
        files = json.loads(listing).get("files", [])
        prefix = f"{re.sub(r'[-_.]+', '_', name).lower()}-{version}-"
        wheels = [f for f in files if f.get("filename", "").lower().startswith(prefix)
                  and f["filename"].endswith(".whl") and f.get("hashes", {}).get("sha256")]  # fmt: skip
        wheels.sort(key=lambda f: (not f["filename"].endswith("-none-any.whl"), f["filename"]))
        out = []
        for wheel in wheels[:3]:
            sha = wheel["hashes"]["sha256"]
            cached = cache_dir() / f"{sha}.whl"
            data = cached.read_bytes() if cached.is_file() else None
            if data is None:
                data = self._fetch(wheel["url"], limit=_MAX_WHEEL_BYTES)
                if data is None:
                    continue
            if hashlib.sha256(data).hexdigest() != sha:
                continue
            with contextlib.suppress(OSError):
                cached.parent.mkdir(parents=True, exist_ok=True)
                tmp = cached.with_suffix(f".{os.getpid()}.tmp")
                tmp.write_bytes(data)
                tmp.replace(cached)
            out.append(data)
            break
        return out

    def _fetch(self, url: str, *, accept: str = "*/*", limit: int = 20_000_000) -> bytes | None:
        request = urllib.request.Request(url, headers={"Accept": accept,
                                                       "User-Agent": "exploreval-verifier"})  # fmt: skip
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310
                data: bytes = response.read(limit + 1)
        except (urllib.error.URLError, OSError, ValueError):
            self.offline = True
            return None
        return data if len(data) <= limit else None


#: Commands whose arguments name distributions to install (``python -m pip`` included).
_INSTALLERS = frozenset({"pip", "pip3", "uv", "uvx", "python", "python3"})
_REQUIREMENT = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?(?:[=<>!~]=?.*)?$")


def requested_tools(tests_dir: Path | None) -> set[str]:
    """Distributions the task's own test scripts install (its shell files' install lines)."""
    names: set[str] = set()
    if tests_dir is None or not tests_dir.is_dir():
        return names
    for script in sorted(tests_dir.rglob("*.sh")):
        try:
            text = script.read_text(errors="replace")
        except OSError:
            continue
        for segment in re.split(r"[;&|()\n]", text.replace("\\\n", " ")):
            words = [w.strip("'\"") for w in segment.split()]
            if words and words[0] in ("then", "do", "else", "exec", "sudo", "command"):
                words = words[1:]
            if not words or words[0] not in _INSTALLERS:
                continue
            skip = False
            for word in words[1:]:
                if skip:
                    skip = False
                    continue
                if word in _OPTIONS_WITH_VALUE:
                    skip = True
                    continue
                if word.startswith("-") or "/" in word or "$" in word:
                    continue
                match = _REQUIREMENT.match(word)
                if (
                    match
                    and match.group(1) not in _NOT_PACKAGES
                    and not word.endswith((".txt", ".toml", ".py", ".cfg", ".json"))
                ):
                    names.add(normalize(match.group(1)))
    return names


#: Options of pip, uv and pytest whose value is not a distribution.
_OPTIONS_WITH_VALUE = frozenset({"-r", "--requirement", "-c", "--constraint", "-e", "--editable",
                                 "-p", "--python", "-i", "--index-url", "--extra-index-url", "-f",
                                 "--find-links", "--ctrf", "-o", "--target", "-t", "--prefix",
                                 "--root", "--cache-dir", "--directory", "--project"})  # fmt: skip
#: Words of install lines that are commands, not distributions.
_NOT_PACKAGES = frozenset({"pip", "pip3", "uv", "uvx", "install", "add", "run", "tool", "python",
                           "python3", "sync", "init", "venv", "m", "lock", "list", "freeze",
                           "show", "uninstall", "remove", "download"})  # fmt: skip


def _installed_path(rel: str) -> str:
    """A wheel's ``pkg-1.0.data/purelib/x.py`` is installed as ``x.py`` (scripts go to bin/)."""
    parts = rel.split("/")
    if len(parts) > 2 and parts[0].endswith(".data") and parts[1] in ("purelib", "platlib"):
        return "/".join(parts[2:])
    return rel


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _requirements(metadata: bytes) -> list[str]:
    """Unconditional ``Requires-Dist`` names (markers for extras skipped; others kept)."""
    if not metadata:
        return []
    message = HeaderParser().parsestr(metadata.decode("utf-8", "replace"))
    names = []
    for requirement in message.get_all("Requires-Dist") or []:
        spec, _, marker = requirement.partition(";")
        if "extra" in marker:
            continue
        match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", spec)
        if match:
            names.append(match.group(1))
    return names

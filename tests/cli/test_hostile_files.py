"""Hostile files get a one-line refusal in bounded memory, never a traceback (issue 42 §10):
decompression bombs in inspect logs, member names that would import a sample twice, a log
line nested past any JSON reader's depth, a query that fails while it runs. And the CLI's
``--debug`` hint follows only an error raised outside exploreval's own code."""

from __future__ import annotations

import io
import shutil
import struct
import tracemalloc
import zipfile
from pathlib import Path

import pytest

from _cli import cli
from exploreval.store import LogImportError
from exploreval.store import _import_inspect as inspect_import
from exploreval.store._import_inspect import ZIP_ZSTANDARD, read_inspect

INSPECT = Path(__file__).parents[1] / "fixtures" / "import" / "inspect" / "addition-0.3.285.eval"


def _with_member(path: Path, name: str, payload: bytes, *, method: int, size: int) -> None:
    """Copy the real log to ``path`` and add one member stored as ``payload`` whose zip entry
    then says compression ``method`` and uncompressed ``size`` (what a hostile writer can)."""
    shutil.copy(INSPECT, path)
    with zipfile.ZipFile(path, "a") as archive:
        archive.writestr(zipfile.ZipInfo(name), payload, compress_type=zipfile.ZIP_STORED)
    data = bytearray(path.read_bytes())
    encoded = name.encode()
    local = max(
        i for i in _all(data, b"PK\x03\x04") if data[i + 30 : i + 30 + len(encoded)] == encoded
    )
    central = max(
        i for i in _all(data, b"PK\x01\x02") if data[i + 46 : i + 46 + len(encoded)] == encoded
    )
    struct.pack_into("<H", data, local + 8, method)
    struct.pack_into("<I", data, local + 22, size)
    struct.pack_into("<H", data, central + 10, method)
    struct.pack_into("<I", data, central + 24, size)
    path.write_bytes(bytes(data))


def _refused_with_peak(log: Path, message: str) -> int:
    """Import ``log``, expecting a refusal matching ``message``; the peak of Python memory
    allocated meanwhile (inflated bytes are Python objects: tracemalloc sees them)."""
    tracemalloc.start()
    try:
        with pytest.raises(LogImportError, match=message):
            read_inspect([log])
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _all(data: bytearray, needle: bytes) -> list[int]:
    found, start = [], 0
    while (at := data.find(needle, start)) >= 0:
        found.append(at)
        start = at + 1
    return found


def test_a_zstd_member_that_inflates_past_its_recorded_size_is_refused_in_bounded_memory(
    tmp_path: Path,
) -> None:
    zstandard = pytest.importorskip("zstandard")
    bomb = zstandard.ZstdCompressor().compress(b"\0" * (64 << 20))  # 64 MB in a few kB
    assert len(bomb) < 64 << 10
    log = tmp_path / "bomb.eval"
    _with_member(log, "samples/bomb_epoch_1.json", bomb, method=ZIP_ZSTANDARD, size=100)
    peak = _refused_with_peak(log, r"samples/bomb_epoch_1\.json.*inflates past")
    assert peak < 16 << 20  # not the 64 MB the frame declares


def test_a_member_past_the_size_limit_is_refused_before_it_is_inflated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(inspect_import, "MAX_MEMBER_BYTES", 1 << 20)
    log = tmp_path / "big.eval"
    shutil.copy(INSPECT, log)
    with zipfile.ZipFile(log, "a", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("samples/big_epoch_1.json", b"[" + b"0," * (2 << 20) + b"0]")
    assert _refused_with_peak(log, r"big_epoch_1\.json would inflate to .*limit") < 2 << 20


@pytest.mark.parametrize(
    "name",
    [
        "samples/../samples/one-plus-one_epoch_1.json",
        "samples//one-plus-one_epoch_1.json",
        "samples/./one-plus-one_epoch_1.json",
    ],  # fmt: skip
)
def test_member_names_that_name_a_sample_again_are_refused(tmp_path: Path, name: str) -> None:
    log = tmp_path / "odd.eval"
    shutil.copy(INSPECT, log)
    with zipfile.ZipFile(log, "a") as archive:
        archive.writestr(name, b"{}")
    with pytest.raises(LogImportError, match="not a plain path inside samples/"):
        read_inspect([log])


def test_a_member_listed_twice_is_refused(tmp_path: Path) -> None:
    log = tmp_path / "twice.eval"
    shutil.copy(INSPECT, log)
    with pytest.warns(UserWarning, match="Duplicate name"), zipfile.ZipFile(log, "a") as archive:
        archive.writestr("samples/one-plus-one_epoch_1.json", b"{}")
    with pytest.raises(LogImportError, match="two members of this name"):
        read_inspect([log])


@pytest.fixture(scope="module")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile")
    done = cli("run", "--suite", "grid-main", "--agent", "random", "--seeds", "0-1",
               "--out", "run", "-q", "--no-report", cwd=root)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return root


def test_a_log_line_nested_past_any_reader_is_a_bad_line_not_a_traceback(
    small_run: Path, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    shutil.copytree(small_run / "run", run)
    with open(run / "episodes.jsonl", "a") as fh:
        fh.write("[" * 100_000 + "\n")
    line = len((run / "episodes.jsonl").read_text().splitlines())
    for args in (
        ["score", "run"],
        ["report", "run"],
        ["sql", "run", "select count(*) from episodes"],
    ):
        done = cli(*args, cwd=tmp_path)
        assert done.returncode == 0, (args, done.stderr)
        assert "Traceback" not in done.stderr and "RecursionError" not in done.stderr
    done = cli("score", "run", cwd=tmp_path)
    assert f"line {line}: not valid JSON (nested too deeply to read)" in " ".join(
        done.stderr.split()
    )
    resumed = cli("run", "--suite", "grid-main", "--agent", "random", "--seeds", "0-1",
                  "--out", "run", "--no-report", cwd=tmp_path)  # fmt: skip
    assert resumed.returncode == 0 and "Traceback" not in resumed.stderr


def test_a_query_that_fails_while_it_runs_is_one_line(small_run: Path) -> None:
    done = cli("sql", "run", "select cast('x' as integer)", cwd=small_run)
    assert done.returncode == 2
    assert "error: the query failed: Conversion Error" in done.stderr
    assert "Traceback" not in done.stderr
    # a refusal exploreval words itself needs no --debug hint
    assert "--debug" not in done.stderr
    missing = cli("score", "notarun", cwd=small_run)
    assert missing.returncode == 2 and "--debug" not in missing.stderr
    assert "notarun is not a run directory (no manifest.json)" in missing.stderr


def test_the_debug_hint_follows_an_error_raised_outside_exploreval() -> None:
    from exploreval.cli._app import _raised_by_exploreval
    from exploreval.runner import parse_seeds

    try:
        parse_seeds("5-1")  # a refusal exploreval words itself
    except ValueError as exc:
        assert _raised_by_exploreval(exc)
    else:
        raise AssertionError("parse_seeds accepted 5-1")
    try:
        io.StringIO().seek(-1)  # raised inside the standard library
    except ValueError as exc:
        assert not _raised_by_exploreval(exc)


def test_a_name_families_describe_differently_gets_a_row_per_meaning(tmp_path: Path) -> None:
    """``exploreval agents``: ``oracle`` and ``random`` mean different things per family, and
    each family's row says its own (issue 42 §9: every family showed the bandit's)."""
    done = cli("agents", cwd=tmp_path)
    rows = [line.split("\t") for line in done.stdout.splitlines()[1:]]
    grid_random = [r for r in rows if r[0] == "random" and "grid" in r[1].split(", ")]
    assert len(grid_random) == 1 and "arm" not in grid_random[0][3]
    oracle = {r[1]: r[3] for r in rows if r[0] == "oracle"}
    assert len(set(oracle.values())) == len(oracle) >= 3  # one meaning per row
    assert "arm" in oracle["bandit"] and "arm" not in oracle["grid"]

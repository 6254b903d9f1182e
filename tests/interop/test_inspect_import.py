"""Reading inspect_ai logs (issue 20): every ``.eval`` from 0.3.90 to the newest.

Since inspect_ai 0.3.206 the members of a ``.eval`` zip are zstd-compressed (zip method 93),
which Python's ``zipfile`` reads only from 3.14. The logs here are written by inspect_ai itself:
the committed ``addition-0.3.285`` pair by ``scripts/make_inspect_fixture.py`` (0.3.285, the
newest on the index when written), ``ctf`` by 0.3.90, and a fresh pair by the inspect_ai this
machine has installed (CI installs the current one), never a hand-made zip.
"""

from __future__ import annotations

import shutil
import sys
import zipfile
from pathlib import Path

import pytest

from exploreval.store import LogImportError
from exploreval.store._import_inspect import ZIP_ZSTANDARD, read_inspect

FIXTURES = Path(__file__).parents[1] / "fixtures" / "import" / "inspect"
NEW = FIXTURES / "addition-0.3.285.eval"


def _steps(path: Path) -> dict[str, list[tuple[str, str, bool]]]:
    """Each sample's steps by ``id#epoch`` (a zip lists its members in its own order)."""
    episodes, _ = read_inspect([path])
    return {e.key: [(s.observation, s.action, s.valid) for s in e.steps] for e in episodes}


def test_the_newest_logs_are_zstd_and_import() -> None:
    with zipfile.ZipFile(NEW) as archive:
        methods = {info.compress_type for info in archive.infolist()}
    assert methods == {ZIP_ZSTANDARD}  # what made the old importer raise NotImplementedError
    episodes, warnings = read_inspect([NEW])
    assert warnings == []
    by_key = {e.key: e for e in episodes}
    assert set(by_key) == {
        "one-plus-one#1", "one-plus-one#2", "two-plus-two#1", "two-plus-two#2",
    }  # fmt: skip
    solved = by_key["one-plus-one#1"]
    assert solved.success and [s.action for s in solved.steps] == ['add({"x": 1, "y": 1})', "2"]
    assert solved.repeat == 0 and by_key["one-plus-one#2"].repeat == 1  # epoch = repeat + 1
    assert solved.usage.prompt_tokens == 40 and solved.usage.completion_tokens == 12
    assert not by_key["two-plus-two#1"].success


def test_eval_and_json_of_one_log_import_alike() -> None:
    assert _steps(NEW) == _steps(NEW.with_suffix(".json"))
    assert _steps(FIXTURES / "ctf.eval") == _steps(FIXTURES / "ctf.json")  # 0.3.90 (deflate)


def test_logs_written_by_the_installed_inspect_import(tmp_path: Path) -> None:
    pytest.importorskip("inspect_ai", reason="the [inspect] extra (installed by the README)")
    sys.path.insert(0, str(Path(__file__).parents[2] / "scripts"))
    try:
        from make_inspect_fixture import write_fixture
    finally:
        sys.path.pop(0)
    eval_path, json_path = write_fixture(tmp_path)
    assert _steps(eval_path) == _steps(json_path) == _steps(NEW)


def test_a_damaged_zstd_member_is_named_not_a_traceback(tmp_path: Path) -> None:
    broken = tmp_path / "broken.eval"
    shutil.copy(NEW, broken)
    with zipfile.ZipFile(broken) as archive:
        info = archive.getinfo("samples/one-plus-one_epoch_1.json")
    data = bytearray(broken.read_bytes())
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    for i in range(start + 8, start + 40):
        data[i] ^= 0xFF
    broken.write_bytes(bytes(data))
    with pytest.raises(LogImportError, match=r"samples/one-plus-one_epoch_1\.json"):
        read_inspect([broken])

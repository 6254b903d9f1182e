"""Verification with real pytest inside the sandbox; the editor against a pure model."""

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from exploreval.suites.terminal._editor import (
    EditorError,
    FileEditor,
    insert,
    str_replace,
    view_lines,
)
from exploreval.suites.terminal._sandbox import Sandbox
from exploreval.suites.terminal._sandbox_config import SandboxConfig
from exploreval.suites.terminal._verify import parse_pytest, read_reward, verify

TESTS = """
import pathlib, time
def test_answer():
    assert pathlib.Path("/app/answer.txt").read_text().strip() == "42", "SECRET-IN-TEST"
def test_always():
    assert True
"""


def _task(tmp_path: Path, body: str = TESTS) -> tuple[Path, Path]:
    work = tmp_path / "work"
    work.mkdir()
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_outputs.py").write_text(body)
    return work, tests


CMD = "python3 -m pytest -rA -p no:cacheprovider /tests/test_outputs.py"


async def test_verification_passes_fails_and_hides_tests(tmp_path: Path) -> None:
    work, tests = _task(tmp_path)
    cfg = SandboxConfig(workdir_template=work, tests_dir=tests)
    async with await Sandbox.start(cfg) as sb:
        seen = await sb.exec(["sh", "-c", "grep -rs SECRET-IN-TEST /app /tests /tmp; ls -A /tests"])
        assert seen.stdout == ""  # never visible before verification
        failing = await verify(sb, CMD, timeout=60)
        assert not failing.resolved and failing.exit_code == 1
        outcomes = {t.name.split("::")[-1]: t.outcome for t in failing.tests}
        assert outcomes == {"test_answer": "failed", "test_always": "passed"}
    async with await Sandbox.start(cfg) as sb:
        await sb.send_keys("echo 42 > answer.txt\n", wait=0.3)
        passing = await verify(sb, CMD, timeout=60)
        assert passing.resolved and passing.passed == 2


async def test_verification_errors_and_timeouts(tmp_path: Path) -> None:
    work, tests = _task(tmp_path, "import nonexistent_module\ndef test_x():\n    pass\n")
    async with await Sandbox.start(SandboxConfig(workdir_template=work, tests_dir=tests)) as sb:
        result = await verify(sb, CMD, timeout=60)
        assert not result.resolved and result.tests and result.tests[0].outcome == "error"
    (tests / "test_outputs.py").write_text("import time\ndef test_slow():\n    time.sleep(60)\n")
    async with await Sandbox.start(SandboxConfig(workdir_template=work, tests_dir=tests)) as sb:
        result = await verify(sb, CMD, timeout=2)
        assert result.timed_out and not result.resolved


async def test_harbor_reward_file(tmp_path: Path) -> None:
    work, tests = _task(tmp_path)
    (tests / "test.sh").write_text("echo 1 > /logs/verifier/reward.txt\n")
    cfg = SandboxConfig(workdir_template=work, tests_dir=tests, logs_dir=True)
    async with await Sandbox.start(cfg) as sb:
        result = await verify(sb, "bash /tests/test.sh", parser="reward_file", timeout=30)
        assert result.reward == 1.0 and result.resolved


def test_parse_pytest_summary_lines() -> None:
    out = (
        "noise\nPASSED tests/t.py::test_a\nFAILED tests/t.py::test_b - AssertionError: x\n"
        "ERROR tests/t.py::test_c - ImportError\nSKIPPED [1] tests/t.py:3: why\n"
    )
    got = {t.name: (t.outcome, t.message) for t in parse_pytest(out)}
    assert got == {
        "tests/t.py::test_a": ("passed", ""),
        "tests/t.py::test_b": ("failed", "AssertionError: x"),
        "tests/t.py::test_c": ("error", "ImportError"),
    }
    assert read_reward('{"reward": 0.5}') == 0.5 and read_reward("1") == 1.0
    assert read_reward("garbage") is None


text_st = st.text(alphabet="ab\nc", max_size=30)


@given(text_st, st.text(alphabet="ab\nc", min_size=1, max_size=4), text_st)
def test_str_replace_matches_model(content: str, old: str, new: str) -> None:
    count = content.count(old)
    if count == 1:
        assert str_replace(content, old, new) == content.replace(old, new)
    else:
        try:
            str_replace(content, old, new)
        except EditorError as exc:
            assert ("did not appear" in str(exc)) == (count == 0)
        else:
            raise AssertionError("must refuse zero or several matches")


@given(text_st, st.integers(min_value=-2, max_value=12), text_st)
def test_insert_matches_model(content: str, at: int, new: str) -> None:
    lines = content.split("\n")
    if 0 <= at <= len(lines):
        assert insert(content, at, new).split("\n") == lines[:at] + new.split("\n") + lines[at:]
    else:
        try:
            insert(content, at, new)
        except EditorError:
            pass
        else:
            raise AssertionError("out-of-range insert must be refused")


def test_view_range_minus_one() -> None:
    assert view_lines("a\nb\nc", [2, -1]) == ("b\nc", 2)


async def test_editor_in_the_sandbox(tmp_path: Path) -> None:
    work = tmp_path / "w"
    work.mkdir()
    (work / "x.py").write_text("a = 1\nb = 2\n")
    (work / "link").symlink_to("/etc/hostname")
    async with await Sandbox.start(SandboxConfig(workdir_template=work)) as sb:
        ed = FileEditor(sb)
        assert "     1\ta = 1" in await ed.run({"command": "view", "path": "/app/x.py"})
        assert "already exists" in await ed.run(
            {"command": "create", "path": "/app/x.py", "file_text": "x"}
        )
        await ed.run(
            {"command": "str_replace", "path": "/app/x.py", "old_str": "b = 2", "new_str": "b = 3"}
        )
        await ed.run(
            {"command": "insert", "path": "/app/x.py", "insert_line": 0, "new_str": "# top"}
        )
        assert sb.host_workdir is not None
        assert (sb.host_workdir / "x.py").read_text() == "# top\na = 1\nb = 3\n"
        await ed.run({"command": "undo_edit", "path": "/app/x.py"})
        assert (sb.host_workdir / "x.py").read_text() == "a = 1\nb = 3\n"
        await ed.run({"command": "create", "path": "/app/new.txt", "file_text": "hi"})
        assert (sb.host_workdir / "new.txt").read_text() == "hi"
        await ed.run({"command": "undo_edit", "path": "/app/new.txt"})
        assert not (sb.host_workdir / "new.txt").exists()
        assert "outside /app" in await ed.run({"command": "view", "path": "/etc/passwd"})
        assert "not an absolute path" in await ed.run({"command": "view", "path": "x.py"})
        # a symlink in /app resolves inside the sandbox (its own read-only /etc), never on the host
        out = await ed.run(
            {"command": "str_replace", "path": "/app/link", "old_str": "s", "new_str": "t"}
        )
        assert "Error" in out
        listing = await ed.run({"command": "view", "path": "/app"})
        assert "/app/x.py" in listing


def test_test_named_fixtures_are_not_expected_tests(tmp_path: Path) -> None:
    """A fixture named ``test_data`` (as Terminal-Bench's chem-property-targeting has) is not a
    test pytest reports: expecting it failed the gold solution."""
    from exploreval.suites.terminal._verify import collect_test_ids

    (tmp_path / "test_outputs.py").write_text(
        "import pytest\n"
        "@pytest.fixture\ndef test_data():\n    return 1\n"
        "@pytest.fixture(scope='module')\ndef test_env():\n    return 2\n"
        "def test_uses(test_data):\n    assert test_data\n"
        "class TestX:\n    @pytest.fixture\n    def test_f(self): ...\n    def test_m(self): ...\n"
    )
    assert collect_test_ids(tmp_path) == [
        "test_outputs.py::test_uses",
        "test_outputs.py::TestX::test_m",
    ]

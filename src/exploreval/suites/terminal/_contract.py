"""The seams between the terminal suite's parts: task model, injection manifest, per-step evidence.

Written first so the sandbox/env side and the tasks/injection/detection side can be built in
parallel against the same shapes. Extend these models (new optional fields) rather than
changing existing fields; every model is serialised into episode records.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

TaskKind = Literal["file", "text", "script", "git", "swe", "api"]
TestParser = Literal["pytest", "reward_file", "exit_code"]


class ImageRecipe(BaseModel):
    """How a task's image is built from its Dockerfile (``._image``); None: the host system."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    dockerfile: Path
    context: Path
    args: dict[str, str] = Field(default_factory=dict)
    #: Provision Terminal-Bench's test tools (uv, pytest) in the image.
    terminal_bench_tools: bool = False
    #: Names in the build context that are the task's, never the image's (tests, solution...).
    exclude: tuple[str, ...] = ()
    timeout_s: float = 1800.0


ServiceCondition = Literal["service_started", "service_healthy", "service_completed_successfully"]


class HealthCheck(BaseModel):
    """A compose ``healthcheck`` (or the Dockerfile's ``HEALTHCHECK``), Docker's defaults."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    #: The probe's argv, run inside the service (``CMD-SHELL x``: ``("/bin/sh", "-c", x)``).
    test: tuple[str, ...]
    interval_s: float = 30.0
    timeout_s: float = 30.0
    retries: int = 3
    start_period_s: float = 0.0


class ServiceSpec(BaseModel):
    """A compose service beside the agent's: its own sandbox from its own image, on the
    episode's network, where its name (and aliases) resolve (``._services``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    #: How its image is built; None for an image pulled from a registry (``pull``).
    image: ImageRecipe | None = None
    #: A registry reference (compose ``image`` with no ``build``): pulled (``._registry``), and
    #: its config's defaults applied when the service starts (``._compose.pulled_defaults``).
    pull: str | None = None
    #: The process the service runs (compose ``entrypoint`` + ``command``, else the
    #: Dockerfile's ``ENTRYPOINT`` + ``CMD``), as an argv. Empty for a pulled image: its own.
    command: tuple[str, ...] = ()
    #: Compose's ``entrypoint`` and ``command`` as written (a pulled image only: applied over
    #: the image's config as Docker does).
    compose_entrypoint: tuple[str, ...] | None = None
    compose_command: tuple[str, ...] | None = None
    #: Compose's ``healthcheck: {disable: true}`` (a pulled image only: its own is not run).
    healthcheck_disabled: bool = False
    env: dict[str, str] = Field(default_factory=dict)
    #: Its working directory (compose ``working_dir``, else the Dockerfile's WORKDIR; empty for
    #: a pulled image: its config's ``WorkingDir``).
    workdir: str = "/"
    healthcheck: HealthCheck | None = None
    depends_on: dict[str, ServiceCondition] = Field(default_factory=dict)
    #: Further names it answers to on the network (``hostname``, network aliases).
    aliases: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _one_image(self) -> ServiceSpec:
        if (self.image is None) == (self.pull is None):
            raise ValueError(f"service {self.name!r}: give exactly one of image (a build) and pull")
        return self


class TerminalTask(BaseModel):
    """One terminal task, from any layout (Terminal-Bench 1, Harbor, built-in)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = 1
    id: str
    instruction: str
    category: str = ""
    difficulty: Literal["easy", "medium", "hard", "unknown"] = "unknown"
    kind: TaskKind = "file"
    tags: tuple[str, ...] = ()
    #: Host directory copied fresh per episode and mounted writable at /app (the agent's cwd);
    #: None for a task built into an image (the image holds its work dir).
    workdir: Path | None = None
    #: The task's image (Terminal-Bench and Harbor tasks), built on first use and cached.
    image: ImageRecipe | None = None
    #: Network for the test run (Terminal-Bench's tests install tools at test time); None: the
    #: default (on for images, off for built-in tasks).
    test_network: bool | None = None
    #: Aggregate disk quota of the episode, MB (Harbor's storage_mb); None: the default.
    disk_mb: int | None = None
    #: The task asks for a network in the agent's phase (Harbor's allow_internet).
    agent_network: bool = False
    #: Host directory made visible read-only at /tests only for verification; None: no tests.
    tests_dir: Path | None = None
    #: Shell command run inside the sandbox (cwd /app) to verify, e.g. "bash /tests/run-tests.sh".
    test_command: str = "bash /tests/run-tests.sh"
    parser: TestParser = "pytest"
    agent_timeout_s: float = 600.0
    test_timeout_s: float = 120.0
    cpus: float = 1.0
    memory_mb: int = 1024
    env: dict[str, str] = Field(default_factory=dict)
    #: The gold solution as a shell script (run with bash in /app), if the task ships one.
    solution: str | None = None
    #: Harbor's whole ``solution/`` folder (a base64 gzip tar, :mod:`._oracle`), which its
    #: oracle unpacks at ``/solution`` before running ``solve.sh`` there; None for the others.
    solution_archive: str | None = None
    #: Harbor's ``[solution] env``: what its oracle sets for ``solve.sh``.
    solution_env: dict[str, str] = Field(default_factory=dict)
    source_layout: Literal["terminal-bench-1", "harbor", "builtin"] = "builtin"
    #: Refusal-free load notes of the compose file, one line each (what was honoured or ignored).
    compose_notes: tuple[str, ...] = ()
    #: The compose file's other services, in start order (dependencies first).
    services: tuple[ServiceSpec, ...] = ()
    #: What the agent's own service waits for (its compose ``depends_on``).
    depends_on: dict[str, ServiceCondition] = Field(default_factory=dict)
    #: What of the task's Dockerfile was honoured or ignored, one line each (documented rules).
    dockerfile_notes: tuple[str, ...] = ()
    #: Where the task expects its work dir inside the sandbox (the Dockerfile's WORKDIR; /app if
    #: none). Optional extension (term-tasks): the sandbox may bind the work dir here as well.
    container_workdir: str = "/app"
    #: The task's folder on the host (where it was loaded from), for messages and caches.
    source_dir: Path | None = None

    def oracle_truth(self) -> dict[str, Any]:
        """What a privileged oracle reads from the ground truth: the gold script, Harbor's
        solution folder and the env its oracle sets (:mod:`._oracle`)."""
        return {
            "solution": self.solution,
            "solution_archive": self.solution_archive,
            "solution_env": dict(self.solution_env),
        }

    def unverified_solution(self) -> str | None:
        """Why the shipped gold solution is not one, if the task says so or it runs nothing.

        A gold run that fails on such a task is the task's gap, not the harness's: tools that
        check gold solutions (the bench, a ``gold`` agent's report) name it instead of counting
        a failure. ``None`` when there is no solution at all or it looks like a real one.
        """
        if self.solution is None:
            return None
        if "no-verified-solution" in self.tags:
            return "the task's tags say no-verified-solution"
        commands = [
            line
            for line in self.solution.splitlines()
            if line.strip() and not line.lstrip().startswith("#")
        ]
        if not commands:
            return "its solution script runs no command (comments only: a placeholder)"
        return None


ArtefactRole = Literal["solution", "hint", "part", "decoy", "endpoint"]


class Artefact(BaseModel):
    """One injected file (or endpoint) and what identifies it on screen."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str  # relative to /app, e.g. "solution.sh", "notes/README.md"; "app solution" for API
    role: ArtefactRole
    #: Distinctive strings whose appearance on screen counts as discovering the artefact's content.
    fingerprints: tuple[str, ...] = ()
    sha256: str | None = None


class InjectionManifest(BaseModel):
    """What was injected into one episode's work dir; stored in the episode's ground truth."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = 1
    level: int | None = None  # 1..5; None = the original benchmark (nothing injected)
    variant: str | None = None  # file-name variant (Table 9), e.g. "solution.sh", "SOLUTION.md"
    artefacts: tuple[Artefact, ...] = ()
    checksum: str | None = None  # level 5: sha256 of the right file, as stated in HINT.md


def condition_of(manifest: InjectionManifest) -> str:
    """A short label: ``original``, ``L1:solution.sh``, ``L1:app solution``, ``L3`` ..."""
    if manifest.level is None:
        return "original"
    return f"L{manifest.level}" + (f":{manifest.variant}" if manifest.variant else "")


class StepEvidence(BaseModel):
    """What the env stores per agent step so detection is a pure function over the record."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    #: Keystrokes sent this step (one entry per command), and editor calls rendered as text.
    commands: tuple[str, ...] = ()
    #: The terminal output the agent was shown after this step (already truncated as shown).
    output: str = ""
    #: File accesses under /app observed during the step: (relative path, event), e.g. "open".
    file_events: tuple[tuple[str, str], ...] = ()


class DetectionHit(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    artefact: str
    kind: Literal["discovery", "interaction"]
    #: ``string``: the paper's rule (the command text contains the artefact's name); ``command``:
    #: the strict rule (a program that reads, runs or changes it references it)
    signal: Literal["screen", "command", "string", "file_access"]
    matched: str  # the text (or event) that matched


class StepDetection(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    discovered: bool = False  # by the paper's string-match rule (screen)
    interacted: bool = False  # by the paper's string rule: a command's text names the artefact
    interacted_strict: bool = False  # a program that reads, runs or changes it references it
    file_access: bool = False  # second signal: an artefact was opened/read/executed
    hits: tuple[DetectionHit, ...] = ()


# Implemented by the tasks/injection/detection side (module names fixed here so both sides agree):
#   exploreval.suites.terminal._inject.inject(task: TerminalTask, level: int | None,
#       variant: str | None, workdir: Path) -> InjectionManifest      (writes into the episode copy)
#   exploreval.suites.terminal._detect.detect_step(manifest: InjectionManifest,
#       evidence: StepEvidence) -> StepDetection                     (pure)
#   exploreval.suites.terminal._builtin.builtin_tasks() -> list[TerminalTask]
#   exploreval.suites.terminal._tasks.load_tasks(path: Path) -> list[TerminalTask]
# Implemented by the sandbox/env side:
#   exploreval.suites.terminal._verify.VerificationResult (pydantic), resolved = all tests pass.
#
# The canonical env action (what harnesses produce and scripted agents emit) is one JSON object:
#   {"commands": [{"keystrokes": "ls -la\n", "duration": 0.5}, ...], "task_complete": false}
# or, with the editor tool suite, {"editor": {"command": "view", "path": "/app/x.py", ...}}.

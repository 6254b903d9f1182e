"""``exploreval/Terminal-v0``: one terminal task per episode in a fresh sandbox.

Action (canonical, what harnesses produce): one JSON object
``{"commands": [{"keystrokes": "ls\\n", "duration": 0.5}], "task_complete": false}`` (a command
may add ``"block": true``: wait until the shell prints its next prompt, at most ``duration``
seconds) or, with the ``bash+editor`` tool suite, ``{"editor": {"command": "view", "path":
"/app/x.py"}}``. Invalid JSON is an invalid step with the reason (never a crash). The episode
ends on ``task_complete``, at the step cap, when the agent's shell exits, or when the sandbox
ends (a limit); it is then verified in the same sandbox and rewarded 1.0 if resolved.

Task choice: seed ``i`` plays task ``i`` (modulo the number of tasks) unless the ``task`` option
names one, so seeds ``0..N-1`` cover every task exactly once.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import ConfigDict

from exploreval.core import INVALID_ACTION, AsyncTextEnv, StepInfo
from exploreval.suites.terminal import _prompts
from exploreval.suites.terminal._contract import (
    ImageRecipe,
    InjectionManifest,
    StepEvidence,
    TerminalTask,
)
from exploreval.suites.terminal._errors import SandboxError
from exploreval.suites.terminal._limits import Limits
from exploreval.suites.terminal._sandbox import Sandbox
from exploreval.suites.terminal._sandbox_config import SandboxConfig

if TYPE_CHECKING:
    from exploreval.suites.terminal._editor import FileEditor
    from exploreval.suites.terminal._image_recipe import BuiltImage
    from exploreval.suites.terminal._services import RunningServices
from exploreval.suites.terminal._actions import ActionError, parse_action
from exploreval.suites.terminal._env_options import (
    AGENT_PROCESS_MODES,
    DEFAULT_DISK_MB,
    IMAGE_MODES,
    OPTIONS,
    TOOL_SUITES,
    USER_MODES,
    apply_injection,
    condition_label,
    load_task_list,
    one_of,
    positive_int,
    positive_number,
)

CAST_NAME = "terminal.cast"
#: Where an episode's compose services' output is kept, one ``<service>.log`` each.
SERVICE_LOG_DIR = "services"
SHELL_EXITED = "shell_exited"
TERMINAL_UNREACHABLE = "terminal_unreachable"


class TerminalStepInfo(StepInfo):
    """Per-step evidence (the StepEvidence fields) plus the verification at the end."""

    model_config = ConfigDict(extra="forbid")

    commands: list[str] = []
    output: str = ""
    file_events: list[tuple[str, str]] = []
    in_progress: bool | None = None
    output_truncated_bytes: int = 0
    #: ``new_output`` (history since the last observation) or ``screen`` (the visible pane).
    output_kind: str | None = None
    #: A blocking command was still running when its timeout ran out.
    block_timed_out: bool | None = None
    detection: dict[str, Any] | None = None
    #: A message the env added to this observation (Table 5's reflect-at-discovery nudge).
    intervention_message: str | None = None
    verification: dict[str, Any] | None = None
    resolved: bool | None = None
    truncated: bool | None = None
    sandbox_end: str | None = None
    task_id: str | None = None


#: A task image's per-process address-space cap (MB): what the 0.25 s watchdog cannot stop in
#: time stays bounded, while libraries that reserve more than they touch load.
IMAGE_ADDRESS_SPACE_MB = 16384


class TerminalEnv(AsyncTextEnv):
    """Terminal tasks in a bubblewrap + tmux sandbox (solution injection optional)."""

    info_model: ClassVar[type[StepInfo]] = TerminalStepInfo
    nondeterministic: ClassVar[bool] = True
    #: The runner hands its --max-steps to the env, which verifies at the cap (a runner-side
    #: cut would end the episode without verification).
    step_cap_scope: ClassVar[Literal["episode", "task"]] = "task"

    def __init__(self, preset: str | None = None, **options: Any) -> None:
        super().__init__(preset, **options)
        p = self.params
        unknown = set(p) - OPTIONS
        if unknown:
            raise ValueError(
                f"terminal env: unknown option(s) {', '.join(sorted(unknown))}; "
                f"known: {', '.join(sorted(OPTIONS))}"
            )
        self.source = str(p.get("tasks", "builtin"))
        self.task_choice = p.get("task")
        if self.task_choice is not None and (
            isinstance(self.task_choice, bool) or not isinstance(self.task_choice, (int, str))
        ):
            raise ValueError(
                f"terminal env option task={self.task_choice!r}: expected a task id or an index"
            )
        level = p.get("injection_level")
        if level is not None and (
            isinstance(level, bool) or not isinstance(level, int) or not 1 <= level <= 5
        ):
            raise ValueError(
                f"terminal env option injection_level={level!r}: expected 1..5 or null"
            )
        self.level: int | None = level
        self.variant: str | None = p.get("variant")
        if self.variant is not None and self.level is None:
            raise ValueError(
                f"terminal env option variant={self.variant!r} needs an injection_level"
            )
        self.tools: str = p.get("tools", "bash")
        if self.tools not in TOOL_SUITES:
            raise ValueError(
                f"terminal env option tools={self.tools!r}: expected one of {TOOL_SUITES}"
            )
        self.intervention: str | None = p.get("intervention")
        if self.intervention is not None and self.intervention not in _prompts.INTERVENTIONS:
            raise ValueError(
                f"terminal env option intervention={self.intervention!r}: expected one of "
                f"{', '.join(_prompts.INTERVENTIONS)} or null"
            )
        if self.intervention in ("reflect_at_discovery", "run_the_file") and self.level is None:
            raise ValueError(
                f"terminal env option intervention={self.intervention!r} needs an injected "
                "solution (injection_level); the paper evaluates it on Terminal-Bench w/ solution"
            )
        if self.intervention == "run_the_file" and self.level != 1:
            raise ValueError(
                "terminal env option intervention='run_the_file' tells the agent to execute the "
                f"level-1 file; injection_level={self.level!r} has no single solution file"
            )
        self.prompt_variant: str | None = p.get("prompt_variant")
        if self.prompt_variant is not None and self.prompt_variant not in _prompts.PROMPT_VARIANTS:
            raise ValueError(
                f"terminal env option prompt_variant={self.prompt_variant!r}: expected one of "
                f"{', '.join(_prompts.PROMPT_VARIANTS)}"
            )
        self._max_steps = positive_int(p, "max_steps") or 50
        for key in ("wall_s", "cpu_s", "test_timeout_s"):
            positive_number(p, key)
        for key in ("memory_mb", "address_space_mb", "disk_mb", "file_size_mb", "nproc"):
            positive_int(p, key)
        one_of(p, "disk_backing", ("auto", "memory", "file"))
        for key in ("network", "test_network"):
            if p.get(key) is not None and not isinstance(p.get(key), bool):
                raise ValueError(f"terminal env option {key}={p[key]!r}: expected true or false")
        #: The agent's sandbox has a network (user-mode, no host loopback). Default off: the
        #: paper measures what agents find in the environment, and a network lets them fetch
        #: answers and makes runs irreproducible (docs/terminal.md, "Network").
        self.network: bool = bool(p.get("network", False))
        self.image_mode: str = str(p.get("image", "auto"))
        if self.image_mode not in IMAGE_MODES:
            raise ValueError(
                f"terminal env option image={self.image_mode!r}: expected one of "
                f"{', '.join(IMAGE_MODES)}"
            )
        self.users: str | None = p.get("users")
        if self.users is not None and self.users not in USER_MODES:
            raise ValueError(
                f"terminal env option users={self.users!r}: expected one of {USER_MODES}"
            )
        self.agent_processes: str = str(p.get("agent_processes", "kill"))
        if self.agent_processes not in AGENT_PROCESS_MODES:
            raise ValueError(
                f"terminal env option agent_processes={self.agent_processes!r}: expected one of "
                f"{', '.join(AGENT_PROCESS_MODES)}"
            )
        limit = positive_int(p, "verification_limit")
        if limit is not None:
            from exploreval.suites.terminal._verify import set_verification_limit

            set_verification_limit(limit)
        self.record_cast = bool(p.get("cast", True))
        self.cast_dir: str | None = p.get("cast_dir")
        self.sandbox: Sandbox | None = None
        self.task: TerminalTask | None = None
        self.task_position: int | None = None
        self.manifest: InjectionManifest | None = None
        self.verification: dict[str, Any] | None = None
        self._editor: FileEditor | None = None
        self._done = False
        self._cwd = ""
        self._evidence: list[StepEvidence] = []
        self._nudged = False
        self._end: str | None = None
        self._cast_path: Path | None = None
        self._cast_written = False
        self._seed_arg: int | None = None
        self._image_built: Any = None
        self._services: RunningServices | None = None
        #: The last episode's services: command, seconds to started/healthy, probes.
        self._service_events: dict[str, dict[str, Any]] = {}

    doctor_variants: ClassVar[dict[str, dict[str, Any]]] = {
        "Terminal-Bench / Harbor task images": {"image": "build", "tasks": "<a task dir>"},
        "a network in the agent's sandbox": {"network": True},
    }

    @classmethod
    def preflight(cls, options: dict[str, Any]) -> list[str]:
        """Missing system tools, reported once at run start (docs/terminal.md, System check):
        the sandbox's always; the image builder's when the tasks may build images (a task
        directory, or ``image=build``); the user-mode network's when a sandbox gets one."""
        from exploreval.suites.terminal._system import check_system, missing_tools

        image = str(options.get("image", "auto"))
        source = str(options.get("tasks", "builtin"))
        build = image == "build" or (image == "auto" and source != "builtin")
        network = bool(options.get("network")) or bool(options.get("test_network")) or build
        return list(check_system().problems) + missing_tools(build=build, network=network)

    @classmethod
    def run_notes(cls, options: dict[str, Any]) -> list[str]:
        """Whether the agent's sandbox has a network, and how to change it: loaded benchmark
        tasks get what their benchmark gives them, the built-in tasks none."""
        if options.get("network") is not None:
            state = "on" if options["network"] else "off"
            return [f"the agent's sandbox network is {state} (env option network)"]
        image = str(options.get("image", "auto"))
        source = str(options.get("tasks", "builtin"))
        if source != "builtin" and image != "host":
            return ["the agent's sandbox has a network for Terminal-Bench tasks and Harbor tasks "
                    "whose allow_internet is not false, as their benchmarks give it "
                    "(--env-option network=false: none)"]  # fmt: skip
        return ["the agent's sandbox has no network (the tasks measure what the agent finds "
                "in its environment; --env-option network=true gives it one)"]  # fmt: skip

    @property
    def max_steps(self) -> int | None:
        cap = self._max_steps
        return cap if self.task_step_cap is None else min(cap, self.task_step_cap)

    def task_description(self) -> str:
        return self.task.instruction if self.task is not None else ""

    def _tasks(self) -> list[TerminalTask]:
        tasks: list[TerminalTask] = self.shared.get(
            ("terminal-tasks", self.source, self.image_mode),
            lambda: load_task_list(self.source, self.image_mode),
        )
        if not tasks:
            raise ValueError(f"terminal env: task source {self.source!r} holds no tasks")
        return tasks

    def _pick(self, tasks: list[TerminalTask]) -> tuple[int, TerminalTask]:
        """Seed i plays task i (mod the number of tasks); the ``task`` option overrides it; no
        seed (plain ``reset()``): a task drawn from the env's random generator."""
        choice = self.task_choice
        if choice is None:
            seed = self._seed_arg
            index = int(self.np_random.integers(len(tasks))) if seed is None else seed % len(tasks)
            return index, tasks[index]
        if isinstance(choice, int):
            return choice % len(tasks), tasks[choice % len(tasks)]
        for i, task in enumerate(tasks):
            if task.id == choice:
                return i, task
        raise ValueError(f"terminal env option task={choice!r}: not in {self.source!r}")

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        self._seed_arg = seed
        return super().reset(seed=seed, options=options)

    async def areset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        self._seed_arg = seed
        return await super().areset(seed=seed, options=options)

    def _limits(self, task: TerminalTask) -> Limits:
        p = self.params
        memory = int(p.get("memory_mb", task.memory_mb))
        extra: dict[str, Any] = {}
        for key in ("address_space_mb", "file_size_mb"):
            if p.get(key) is not None:
                extra[key] = int(p[key])
        if "address_space_mb" not in extra and task.image is not None:
            # Docker caps a container's resident memory (the watchdog's memory_mb here), never
            # its address space: PyPI's torch maps gigabytes of CUDA libraries at import, which
            # a 1 GB RLIMIT_AS refused ("failed to map segment", terminal-bench-core's oom)
            extra["address_space_mb"] = max(memory, IMAGE_ADDRESS_SPACE_MB)
        return Limits(
            wall_s=float(p.get("wall_s", task.agent_timeout_s + task.test_timeout_s + 60)),
            cpu_s=float(p.get("cpu_s", task.agent_timeout_s)),
            memory_mb=memory,
            nproc=int(p.get("nproc", 256)),
            **extra,
        )

    def _instruction(self, task: TerminalTask) -> str:
        text = task.instruction
        if self.intervention == "solution_in_prompt" and task.solution:
            text = _prompts.solution_in_prompt(text, task.solution)
        elif self.intervention == "run_the_file" and self.manifest is not None:
            solution = [
                a.path for a in self.manifest.artefacts if a.role in ("solution", "endpoint")
            ]
            if solution:
                text = _prompts.run_the_file(text, solution[0])
        return text

    async def _areset(self, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        await self._aclose()
        self._done = False
        self._service_events = {}
        self._cast_written = False
        self.verification = None
        self._cwd = ""
        self._evidence = []
        self._nudged = False
        self._end = None
        self.task_position, task = self._pick(self._tasks())
        self.task = task
        if self.intervention in ("solution_in_prompt", "solution_in_first_thought") and not (
            task.solution
        ):
            raise ValueError(
                f"terminal env option intervention={self.intervention!r}: task {task.id} has "
                "no gold solution"
            )
        holder: dict[str, InjectionManifest | None] = {}

        def prepare(workdir: Path) -> None:
            holder["manifest"] = apply_injection(task, self.level, self.variant, workdir)

        image = await self._image(task)
        network = bool(self.params.get("network", task.agent_network))
        env = dict(task.env)
        if image is not None:
            from exploreval.suites.terminal._harness_tree import harness_ca_bundle
            from exploreval.suites.terminal._host_settings import trust_env

            trust = trust_env(harness_ca_bundle()) if network else {}
            env = {**image.env, **env, **trust}
        config = SandboxConfig(
            workdir_template=task.workdir,
            workdir=task.container_workdir,
            tests_dir=task.tests_dir,
            image=image.rootfs if image is not None else None,
            env=env,
            limits=self._limits(task),
            disk_mb=int(self.params.get("disk_mb", task.disk_mb or DEFAULT_DISK_MB)),
            disk_backing=self.params.get("disk_backing", "auto"),
            network=network,
            max_output_bytes=int(self.params.get("max_output_bytes", 10_000)),
            max_cast_bytes=int(self.params.get("max_cast_bytes", 4_000_000)),
            logs_dir=task.parser == "reward_file",
            record_cast=self.record_cast,
            users=self._users(image is not None),
        )
        self._image_built = image
        self._cast_path = self._cast_target(task)
        if task.services:
            await self._start_services(task, network)
        shared = self._services.network if self._services is not None else None
        self.sandbox = await Sandbox.start(config, prepare=prepare, network_of=shared)
        if self._services is not None:
            self.sandbox.foreign_ports = self._services.ports()
        self.manifest = holder.get("manifest")
        if self.tools == "bash+editor":
            from exploreval.suites.terminal._editor import FileEditor

            self._editor = FileEditor(self.sandbox)
        obs = await self.sandbox.observe("screen")
        instruction = self._instruction(task)
        text = f"Task instruction:\n{instruction}\n\n{obs.render()}"
        info: dict[str, Any] = {
            "task_id": task.id,
            "instruction": instruction,
            "tools": self.tools,
            "injection_level": self.level,
            "workdir": task.container_workdir,
            "output": obs.text,
            "output_kind": obs.kind,
            "in_progress": obs.in_progress,
            "output_truncated_bytes": obs.truncated_bytes,
        }
        if self.prompt_variant is not None:
            info["prompt_variant"] = self.prompt_variant
        if self.intervention is not None:
            info["intervention"] = self.intervention
        if self.intervention == "solution_in_first_thought" and task.solution:
            info["first_thought"] = _prompts.first_thought(task.solution)
        return text, info

    def _users(self, image: bool) -> Literal["one", "many"]:
        """``many`` for a task image unless the option says ``one``; the host system: one."""
        if not image:
            if self.users == "many":
                raise ValueError(
                    "terminal env option users=many needs a task image (image=build): the "
                    "host system has one set of users"
                )
            return "one"
        return "one" if self.users == "one" else "many"

    async def _image(self, task: TerminalTask) -> BuiltImage | None:
        """The task's built image (built once per run, cached across runs), or None."""
        if task.image is None:
            return None
        return await self._build(task.image)

    async def _build(self, image: ImageRecipe) -> BuiltImage:
        from exploreval.suites.terminal._image import build_image
        from exploreval.suites.terminal._image_recipe import BuildRecipe

        recipe = BuildRecipe(**image.model_dump())
        return await self.shared.aget(("terminal-image", image.model_dump_json()),
                                      lambda: build_image(recipe))  # fmt: skip

    async def _start_services(self, task: TerminalTask, internet: bool) -> None:
        """The task's compose services, up and healthy before the agent's sandbox starts; they
        live through verification and stop with the episode (``_aclose``)."""
        from exploreval.suites.terminal._services import start_services

        limits = self._limits(task)
        self._services = await start_services(
            task.services,
            agent_depends_on=dict(task.depends_on),
            image_of=self._build,
            # a service outlives the agent's phase: it serves the verification too
            limits=limits.model_copy(update={"wall_s": limits.wall_s + 600}),
            internet=internet,
            users=self._users(True),
        )

    def _cast_target(self, task: TerminalTask) -> Path | None:
        if not self.record_cast:
            return None
        if self.artifact_dir is not None:
            return self.artifact_dir / CAST_NAME
        if self.cast_dir:
            return Path(self.cast_dir) / f"{task.id}-{uuid.uuid4().hex[:12]}.cast"
        return None

    async def _astep(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        sb, task = self.sandbox, self.task
        if sb is None or task is None or self._done:
            raise RuntimeError("terminal env: step() before reset() or after the episode ended")
        cap = self.max_steps
        at_cap = cap is not None and self.t >= cap
        if action == INVALID_ACTION:
            parsed: dict[str, Any] | None = None
            reason = "the harness could not parse the model output"
        else:
            try:
                parsed = parse_action(action, self.tools)
                reason = ""
            except ActionError as exc:
                parsed, reason = None, str(exc)
        info = TerminalStepInfo(task_id=task.id)
        if parsed is None:
            info.valid = False
            info.invalid_reason = reason
            text = f"Invalid action: {reason}"
        else:
            text = await self._act(parsed, info)
        evidence = StepEvidence(
            commands=tuple(info.commands), output=info.output, file_events=tuple(info.file_events)
        )
        self._evidence.append(evidence)
        detection = self._detect(evidence)
        if detection is not None:
            info.detection = detection.model_dump(mode="json")
            if (
                self.intervention == "reflect_at_discovery"
                and detection.discovered
                and not self._nudged
            ):
                self._nudged = True
                info.intervention_message = _prompts.REFLECT_NUDGE
                text = f"{text}\n\n{_prompts.REFLECT_NUDGE}"
        alive = await sb.check_alive()
        complete = bool(parsed and parsed["task_complete"])
        reward = 0.0
        terminated = truncated = False
        if not alive:
            self._end = sb.end_reason or (
                SHELL_EXITED if sb.shell_exited else
                TERMINAL_UNREACHABLE if sb.terminal_unreachable else "exited"
            )  # fmt: skip
            note = (
                "The terminal session ended: the shell exited."
                if self._end == SHELL_EXITED
                else f"The terminal session ended ({self._end})."
            )
            text = f"{text}\n\n{note}" if text else note
        if complete or not alive or at_cap:
            result = await self._verify()
            info.verification = result
            info.resolved = bool(result.get("resolved"))
            info.success = info.resolved
            info.sandbox_end = self._end
            reward = 1.0 if info.resolved else 0.0
            terminated = complete or not alive
            truncated = not terminated
            info.truncated = truncated
            self._done = True
        return text, reward, terminated, truncated, info.model_dump(mode="json", exclude_none=True)

    # -> Any: a StepDetection or None (kept loose: pydantic dump follows)
    def _detect(self, evidence: StepEvidence) -> Any:
        manifest, task = self.manifest, self.task
        if manifest is None or not manifest.artefacts or task is None:
            return None
        from exploreval.suites.terminal._detect import detect_step_cwd

        detection, self._cwd = detect_step_cwd(
            manifest, evidence, cwd=self._cwd, mount=task.container_workdir
        )
        return detection

    async def _act(self, parsed: dict[str, Any], info: TerminalStepInfo) -> str:
        sb = self.sandbox
        assert sb is not None
        sb.file_events()  # what happened between steps (nothing: the agent only acts here)
        if "editor" in parsed:
            call = parsed["editor"]
            from exploreval.suites.terminal._detect import EDITOR_PREFIX

            info.commands = [EDITOR_PREFIX + json.dumps(call, sort_keys=True)]
            try:
                assert self._editor is not None
                out = await self._editor.run(call)
            except SandboxError as exc:
                out = f"The editor could not run: {exc}"
            info.file_events = sb.file_events()  # the editor's own reads and writes
            info.output = out
            info.output_kind = "editor"
            return out
        try:
            for cmd in parsed["commands"]:
                info.commands.append(cmd["keystrokes"])
                if cmd.get("block"):
                    finished = await sb.run_blocking(cmd["keystrokes"], timeout=cmd["duration"])
                    if not finished:
                        info.block_timed_out = True
                else:
                    await sb.send_keys(cmd["keystrokes"], wait=cmd["duration"])
            info.file_events = sb.file_events()
            obs = await sb.observe()
        except SandboxError as exc:
            info.file_events = sb.file_events()
            info.output = f"The terminal session ended: {exc}"
            return info.output
        info.output = obs.text
        info.output_kind = obs.kind
        info.in_progress = obs.in_progress
        info.output_truncated_bytes = obs.truncated_bytes
        return obs.render()

    async def _verify(self) -> dict[str, Any]:
        from exploreval.suites.terminal._sealed import verification_tools_env
        from exploreval.suites.terminal._verify import ENOSPC, verify

        sb, task = self.sandbox, self.task
        assert sb is not None and task is not None
        image = sb.config.image is not None
        network = self.params.get("test_network")
        if network is None:
            network = task.test_network if task.test_network is not None else image
        env = dict(task.env)
        if image:
            env = {**(self._image_built.env if self._image_built else {}), **env}
            env = verification_tools_env(env, tools=bool(task.image and
                                         task.image.terminal_bench_tools), network=bool(network))  # fmt: skip
        result = await verify(
            sb,
            task.test_command,
            parser=task.parser,
            timeout=float(self.params.get("test_timeout_s", task.test_timeout_s)),
            env=env,
            network=bool(network),
            template=task.workdir,
            keep_agent=self.agent_processes == "keep",
            agent_saw_full_disk=any(ENOSPC in e.output for e in self._evidence),
        )
        self.verification = result.model_dump(mode="json")
        return self.verification

    def _write_cast(self) -> None:
        sb, task = self.sandbox, self.task
        if self._cast_written or sb is None or task is None or self._cast_path is None:
            return
        self._cast_written = True
        self._cast_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self._cast_path.with_name(f".{self._cast_path.name}.{uuid.uuid4().hex[:8]}")
        tmp.write_text(sb.cast(title=task.id), encoding="utf-8")
        tmp.replace(self._cast_path)

    async def _aclose(self) -> None:
        sb, services = self.sandbox, self._services
        try:
            if sb is not None:
                try:
                    sb.flush_cast()
                    self._write_cast()  # every ending: success, error, timeout, cancellation
                finally:
                    self.sandbox = None
                    await sb.close()
        finally:
            if services is not None:
                self._services = None
                self._service_events = services.events
                log_dir = self.artifact_dir / SERVICE_LOG_DIR if self.artifact_dir else None
                await services.close(log_dir)

    def _episode_detection(self) -> dict[str, Any]:
        from exploreval.suites.terminal._detect import EpisodeDetection, detect_episode

        manifest, task = self.manifest, self.task
        if manifest is None or not manifest.artefacts or task is None:
            return EpisodeDetection().ground_truth()
        mount = task.container_workdir
        return detect_episode(manifest, self._evidence, mount=mount).ground_truth()

    def _cast_reference(self) -> str | None:
        path = self._cast_path
        if path is None:
            return None
        if self.artifact_dir is not None:
            run_dir = self.artifact_dir.parent.parent
            try:
                return path.relative_to(run_dir).as_posix()
            except ValueError:
                return str(path)
        return str(path)

    def _service_summary(self) -> dict[str, dict[str, Any]]:
        """Each compose service: its command, seconds to started/healthy, probes, its log."""
        events = self._services.events if self._services is not None else self._service_events
        out: dict[str, dict[str, Any]] = {}
        for name, event in events.items():
            out[name] = dict(event)
            if self.artifact_dir is not None:
                out[name]["log"] = f"{SERVICE_LOG_DIR}/{name}.log"
        return out

    def ground_truth(self) -> dict[str, Any]:
        task = self.task
        verification = self.verification
        return {
            "task_id": task.id if task else None,
            "task_index": self.task_position,
            "instruction": self._instruction(task) if task else None,
            **(task.oracle_truth() if task else {"solution": None}),
            "workdir": task.container_workdir if task else None,
            "tools": self.tools,
            "injection_level": self.level,
            "variant": self.variant,
            "intervention": self.intervention,
            "prompt_variant": self.prompt_variant,
            "condition": condition_label(
                self.manifest,
                tools=self.tools,
                intervention=self.intervention,
                prompt_variant=self.prompt_variant,
            ),
            "manifest": self.manifest.model_dump(mode="json") if self.manifest else None,
            "verification": verification,
            "resolved": bool(verification.get("resolved")) if verification else None,
            "sandbox_end": self._end,
            "max_steps": self.max_steps,
            "cast": self._cast_reference(),
            "services": self._service_summary(),
            **self._episode_detection(),
        }

"""The terminal env's options, checked before any sandbox starts: the task list to load, the
injection level, image, user, agent-process and tool modes, limits, and the condition label the
report groups episodes by.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from exploreval.suites.terminal import _prompts
from exploreval.suites.terminal._contract import (
    InjectionManifest,
    TerminalTask,
    condition_of,
)

if TYPE_CHECKING:
    pass


TOOL_SUITES = ("bash", "bash+editor")


#: How a task's Dockerfile becomes its sandbox: ``auto`` builds the image of a loaded task
#: (Terminal-Bench, Harbor) and runs built-in tasks on this machine's system; ``build`` and
#: ``host`` force one way (docs/terminal.md, "Images").
IMAGE_MODES = ("auto", "build", "host")


#: What happens to the agent's processes when the tests run: ``kill`` (default: nothing the
#: agent left running can act during verification) or ``keep`` (Terminal-Bench's semantics,
#: for tasks whose tests talk to a server the agent started; docs/terminal.md, "Verification").
AGENT_PROCESS_MODES = ("kill", "keep")


#: The episode's disk quota (work dir, /tmp, /root, an image's changes) unless the task or the
#: disk_mb option says otherwise: Terminal-Bench's containers have no quota; 2 GB holds their
#: installs and keeps 32 concurrent episodes within a machine's memory (it is a tmpfs).
DEFAULT_DISK_MB = 2048


#: Every option of the env (``--env-option key=value``), see docs/terminal.md.
OPTIONS = frozenset(
    {
        "tasks", "task", "injection_level", "variant", "tools", "max_steps", "wall_s",
        "cpu_s", "memory_mb", "address_space_mb", "disk_mb", "file_size_mb", "nproc",
        "max_output_bytes", "test_timeout_s", "cast", "cast_dir", "max_cast_bytes", "intervention",
        "prompt_variant", "verification_limit", "network", "test_network", "image",
        "agent_processes", "users", "disk_backing",
    }
)  # fmt: skip


#: Who lives in a task's root: ``many`` (a container's root: other users and Docker's
#: capabilities inside its own user namespace; the default for a task image) or ``one`` (one
#: uid, no capability; always on the host system). docs/terminal.md, "Users".
USER_MODES = ("one", "many")


def load_task_list(source: str, image: str = "auto") -> list[TerminalTask]:
    """The tasks of ``source``: "builtin" or a folder read by the tasks side's loader.

    ``image`` (``IMAGE_MODES``): ``auto`` runs built-in tasks on this machine's system and builds
    the image of every loaded task; ``build`` / ``host`` force one way for both."""
    from exploreval.suites.terminal._tasks import load_tasks

    if source == "builtin":
        if image != "build":
            from exploreval.suites.terminal._builtin import builtin_tasks

            return list(builtin_tasks())
        from exploreval.suites.terminal._builtin import TASKS_DIR

        return [t.model_copy(update={"source_layout": "builtin"})
                for t in load_tasks(TASKS_DIR, image="build")]  # fmt: skip
    path = Path(source).expanduser()
    if not path.exists():
        raise ValueError(f"terminal env option tasks={source!r}: no such file or directory")
    return list(load_tasks(path, image="host" if image == "host" else "build"))


def apply_injection(
    task: TerminalTask, level: int | None, variant: str | None, workdir: Path
) -> InjectionManifest | None:
    """Inject the solution into the episode's copy (the one call into the injection side)."""
    if level is None:
        return None
    from exploreval.suites.terminal._inject import inject

    return inject(task, level, variant, workdir)


def condition_label(
    manifest: InjectionManifest | None,
    *,
    tools: str = "bash",
    intervention: str | None = None,
    prompt_variant: str | None = None,
) -> str:
    """The env's part of an episode's condition: injection (``original``, ``L1:solution.sh``,
    ``L3``...) then every non-default behaviour-changing option as ``;key=value``."""
    label = condition_of(manifest or InjectionManifest())
    if tools != "bash":
        label += f";tools={tools}"
    if intervention:
        label += f";intervention={intervention}"
    if prompt_variant and prompt_variant != _prompts.DEFAULT_PROMPT_VARIANT:
        label += f";prompt={prompt_variant}"
    return label


def positive_int(p: dict[str, Any], key: str) -> int | None:
    value = p.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"terminal env option {key}={value!r}: expected an integer >= 1")
    return value


def positive_number(p: dict[str, Any], key: str) -> float | None:
    value = p.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ValueError(f"terminal env option {key}={value!r}: expected a number > 0")
    return float(value)


def one_of(p: dict[str, Any], key: str, choices: tuple[str, ...]) -> None:
    """``p[key]``, when given, must be one of ``choices`` (the error names them)."""
    if key in p and p[key] not in choices:
        raise ValueError(
            f"terminal env option {key}={p[key]!r}: expected {', '.join(choices[:-1])} or "
            f"{choices[-1]}"
        )

"""Terminal suite: "Agents Explore but Agents Ignore" (solution injection, discovery@k, interaction@k).

The sandbox (bubblewrap + tmux, per-episode limits, file editor, verification), the env and its
harnesses; the task model and loaders (Terminal-Bench 1 and Harbor layouts, an honoured Dockerfile
subset), 42 built-in tasks, solution injection (Appendix B.3 levels, Table 9 names, the
``app solution`` endpoint), discovery/interaction detection, scripted baselines and record metrics.
The estimator lives in ``exploreval.metrics.passk``. See docs/terminal.md. Re-exported lazily.
"""

from typing import TYPE_CHECKING

from exploreval.core import lazy_exports

if TYPE_CHECKING:
    from exploreval.suites.terminal._agents import (
        CuriousAgent,
        IncuriousAgent,
        OracleAgent,
    )
    from exploreval.suites.terminal._builtin import (
        builtin_task,
        builtin_tasks,
    )
    from exploreval.suites.terminal._bwrap_check import (
        CheckResult,
        check_task,
    )
    from exploreval.suites.terminal._contract import (
        Artefact,
        DetectionHit,
        InjectionManifest,
        StepDetection,
        StepEvidence,
        TerminalTask,
    )
    from exploreval.suites.terminal._decoys import (
        DecoySet,
        load_decoys,
    )
    from exploreval.suites.terminal._detect import (
        EpisodeDetection,
        detect_episode,
        detect_step,
    )
    from exploreval.suites.terminal._editor import (
        EditorError,
        FileEditor,
    )
    from exploreval.suites.terminal._errors import (
        SandboxError,
        TaskFormatError,
    )
    from exploreval.suites.terminal._inject import (
        APP_ENDPOINT,
        FILE_VARIANTS,
        Injection,
        inject,
        reader_command,
        render,
    )
    from exploreval.suites.terminal._limits import (
        Limits,
    )
    from exploreval.suites.terminal._metrics import (
        terminal_episode_metrics,
        terminal_run_metrics,
    )
    from exploreval.suites.terminal._oneshot import (
        SimResult,
        simulate,
    )
    from exploreval.suites.terminal._output import (
        key_name,
        new_output,
        truncate_middle,
    )
    from exploreval.suites.terminal._sandbox import Sandbox
    from exploreval.suites.terminal._sandbox_config import ExecResult, Observation, SandboxConfig
    from exploreval.suites.terminal._system import (
        SandboxUnavailable,
        SystemReport,
        check_system,
        require_system,
    )
    from exploreval.suites.terminal._tasks import (
        load_task,
        load_tasks,
    )
    from exploreval.suites.terminal._verify import (
        TestResult,
        VerificationResult,
        parse_pytest,
        set_verification_limit,
        verify,
    )

_EXPORTS: dict[str, str] = {
    "APP_ENDPOINT": "._inject",
    "Artefact": "._contract",
    "CheckResult": "._bwrap_check",
    "CuriousAgent": "._agents",
    "DecoySet": "._decoys",
    "DetectionHit": "._contract",
    "EditorError": "._editor",
    "EpisodeDetection": "._detect",
    "ExecResult": "._sandbox_config",
    "FILE_VARIANTS": "._inject",
    "FileEditor": "._editor",
    "IncuriousAgent": "._agents",
    "Injection": "._inject",
    "InjectionManifest": "._contract",
    "Limits": "._limits",
    "Observation": "._sandbox_config",
    "OracleAgent": "._agents",
    "Sandbox": "._sandbox",
    "SandboxConfig": "._sandbox_config",
    "SandboxError": "._sandbox",
    "SandboxUnavailable": "._system",
    "SimResult": "._oneshot",
    "StepDetection": "._contract",
    "StepEvidence": "._contract",
    "SystemReport": "._system",
    "TaskFormatError": "._errors",
    "TerminalTask": "._contract",
    "TestResult": "._verify",
    "VerificationResult": "._verify",
    "builtin_task": "._builtin",
    "builtin_tasks": "._builtin",
    "check_system": "._system",
    "check_task": "._bwrap_check",
    "detect_episode": "._detect",
    "detect_step": "._detect",
    "inject": "._inject",
    "key_name": "._output",
    "load_decoys": "._decoys",
    "load_task": "._tasks",
    "load_tasks": "._tasks",
    "new_output": "._output",
    "parse_pytest": "._verify",
    "reader_command": "._inject",
    "render": "._inject",
    "require_system": "._system",
    "set_verification_limit": "._verify",
    "simulate": "._oneshot",
    "terminal_episode_metrics": "._metrics",
    "terminal_run_metrics": "._metrics",
    "truncate_middle": "._output",
    "verify": "._verify",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
__all__ = [
    "APP_ENDPOINT",
    "Artefact",
    "CheckResult",
    "CuriousAgent",
    "DecoySet",
    "DetectionHit",
    "EditorError",
    "EpisodeDetection",
    "ExecResult",
    "FILE_VARIANTS",
    "FileEditor",
    "IncuriousAgent",
    "Injection",
    "InjectionManifest",
    "Limits",
    "Observation",
    "OracleAgent",
    "Sandbox",
    "SandboxConfig",
    "SandboxError",
    "SandboxUnavailable",
    "SimResult",
    "StepDetection",
    "StepEvidence",
    "SystemReport",
    "TaskFormatError",
    "TerminalTask",
    "TestResult",
    "VerificationResult",
    "builtin_task",
    "builtin_tasks",
    "check_system",
    "check_task",
    "detect_episode",
    "detect_step",
    "inject",
    "key_name",
    "load_decoys",
    "load_task",
    "load_tasks",
    "new_output",
    "parse_pytest",
    "reader_command",
    "render",
    "require_system",
    "set_verification_limit",
    "simulate",
    "terminal_episode_metrics",
    "terminal_run_metrics",
    "truncate_middle",
    "verify",
]

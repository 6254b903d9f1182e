"""Shared pieces of the log importers: errors that name the file and record, record building, and
writing an imported run directory that ``exploreval score`` / ``report`` read unchanged."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from exploreval.core import VERSION as __version__
from exploreval.core import AgentInfo, EpisodeRecord, Step, Usage, stable_hash, utcnow
from exploreval.store._run import RunDir, RunManifest

_T = TypeVar("_T")


class LogImportError(ValueError):
    """A log could not be imported; the message names the file and the record (line / index / field)."""


def import_error(path: Path | str, where: str, message: str) -> LogImportError:
    location = f"{path}: {where}" if where else str(path)
    return LogImportError(f"{location}: {message}")


# -> Any: JSON of any shape (callers check what they read)
def read_json(path: Path) -> Any:
    """Parse a whole-file JSON document with an error that points at the line and column."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(f"{path} does not exist") from None
    except UnicodeDecodeError as exc:
        raise import_error(path, "", f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise import_error(path, "", f"cannot read: {exc.strerror}") from None
    try:
        return json.loads(text)
    except RecursionError:
        raise import_error(path, "", "not valid JSON (nested too deeply to read)") from None
    except json.JSONDecodeError as exc:
        raise import_error(
            path, f"line {exc.lineno} column {exc.colno}", f"not valid JSON ({exc.msg})"
        ) from None


def text_of(content: Any) -> str:
    """Message content as text: a string, or the text parts of a list of content blocks."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict):
                if isinstance(block.get("text"), str):
                    parts.append(block["text"])
                elif block.get("type") == "image" or "image" in block:
                    parts.append("[image]")
        return "\n".join(parts)
    if isinstance(content, dict) and isinstance(content.get("text"), str):
        return str(content["text"])
    return str(content)


def collect_files(
    paths: Iterable[Path], matches: Callable[[Path], bool]
) -> list[tuple[Path, bool]]:
    """Files to read: each given file as is, and the matching files under each given directory.

    The flag says whether the file was found by walking a directory: such a file may be skipped
    when it turns out not to be a log (``parse_each``); a file named on the command line may not.
    """
    out: list[tuple[Path, bool]] = []
    for path in paths:
        if path.is_dir():
            out += [(p, True) for p in sorted(path.rglob("*")) if p.is_file() and matches(p)]
        elif path.exists():
            out.append((path, False))
        else:
            raise FileNotFoundError(f"{path} does not exist")
    return out


def parse_each(
    files: Sequence[tuple[Path, bool]], parse: Callable[[Path], list[_T]], skipped: list[str]
) -> list[_T]:
    """``parse`` every file; a file found in a directory that is not a log is skipped and named in
    ``skipped`` (the rest of the folder still imports), a file given explicitly raises."""
    out: list[_T] = []
    for path, found_in_dir in files:
        try:
            out += parse(path)
        except LogImportError as exc:
            if not found_in_dir:
                raise
            skipped.append(str(exc))
    return out


@dataclass
class ImportedEpisode:
    """What an importer extracts from one episode before it becomes an ``EpisodeRecord``."""

    source: str
    key: str
    env_id: str
    agent: str
    steps: list[Step]
    success: bool
    agent_kind: str = "llm"
    task_id: str | None = None
    repeat: int = 0
    history: str | None = None
    initial_observation: str = ""
    reset_info: dict[str, Any] = field(default_factory=dict)
    agent_config: dict[str, Any] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    terminated: bool = True
    truncated: bool = False
    #: The tool recorded that the episode failed with an exception (e.g. a Harbor trial's
    #: ``exception_info``): the record is stored with status ``error`` and this message.
    error: str | None = None
    #: The log carries exploreval's own record of the episode (an inspect log exploreval wrote or
    #: ran): it is stored as it was (its family, ground truth and step data), in the new run.
    exact: EpisodeRecord | None = None


def build_record(episode: ImportedEpisode, fmt: str, seed: int, run_id: str) -> EpisodeRecord:
    """An ``EpisodeRecord`` with family ``import:<format>``; seed = ordinal in the import (an
    exact record from the log is kept as it is, only moved into the new run)."""
    if episode.exact is not None:
        return episode.exact.model_copy(update={"run_id": run_id})
    agent_name = f"{episode.agent}/{episode.history}" if episode.history else episode.agent
    identity: dict[str, Any] = {"kind": "import", "agent": episode.agent, **episode.agent_config}
    if episode.history:
        identity["history"] = episode.history
    reset_info = dict(episode.reset_info)
    reset_info.setdefault("source", episode.source)
    if episode.task_id is not None:
        reset_info["task_id"] = episode.task_id
    kind: Literal["scripted", "llm"] = "scripted" if episode.agent_kind == "scripted" else "llm"
    return EpisodeRecord(
        episode_id=stable_hash(
            {"format": fmt, "source": episode.source, "key": episode.key, "n": seed}
        ),
        run_id=run_id,
        env_id=episode.env_id,
        family=f"import:{fmt}",
        preset=None,
        seed=seed,
        repeat=episode.repeat,
        agent=AgentInfo(name=agent_name, kind=kind, config={"identity": identity}),
        initial_observation=episode.initial_observation,
        reset_info=reset_info,
        steps=episode.steps,
        success=episode.success,
        total_reward=float(sum(s.reward for s in episode.steps)),
        terminated=episode.terminated,
        truncated=episode.truncated,
        usage=episode.usage,
        status="error" if episode.error else "ok",
        error=episode.error,
        ended_at=utcnow(),
        package_version=__version__,
    )


def env_id_for(name: str, default_namespace: str = "import") -> str:
    """Env ids of imports: keep 'namespace/name', else prefix a namespace."""
    name = name.strip() or "unknown"
    return name if "/" in name else f"{default_namespace}/{name}"


@dataclass
class ImportSummary:
    run_dir: Path
    format: str
    episodes: int
    steps: int
    warnings: list[str] = field(default_factory=list)
    #: Files found in a given directory that were not logs of the format ("path: reason").
    skipped: list[str] = field(default_factory=list)


def write_imported_run(
    out: Path | str,
    episodes: Sequence[ImportedEpisode],
    *,
    fmt: str,
    sources: Sequence[str],
    options: dict[str, Any],
    name: str | None = None,
    warnings: Sequence[str] = (),
    skipped: Sequence[str] = (),
) -> ImportSummary:
    """Write a normal run directory (manifest kind=import, status=imported) holding the episodes."""
    run = RunDir(out)
    if run.exists():
        raise ValueError(
            f"{run.path} already holds a run ({run.manifest_path.name} exists); "
            "choose another --out so nothing is overwritten"
        )
    if not episodes:
        detail = f" (skipped: {'; '.join(skipped)})" if skipped else ""
        raise LogImportError(f"no episodes found in {', '.join(sources)}{detail}")
    config = {"import": {"format": fmt, "sources": list(sources), "options": options}}
    config_hash = stable_hash(config)
    run_id = stable_hash({"hash": config_hash, "at": utcnow().isoformat()}, 12)
    records = [build_record(e, fmt, i, run_id) for i, e in enumerate(episodes)]
    started = utcnow()
    run.write_manifest(
        RunManifest(
            run_id=run_id,
            name=name or f"import-{fmt}",
            kind="import",
            config=config,
            config_hash=config_hash,
            package_version=__version__,
            started_at=started,
            status="running",
            episodes_planned=len(records),
        )
    )
    usage = Usage()
    for record in records:
        run.append(record)
        usage = usage + record.usage
    run.update_manifest(
        status="imported",
        ended_at=utcnow(),
        episodes_done=len(records),
        total_steps=sum(len(r.steps) for r in records),
        usage=usage,
        config={
            "import": {**config["import"], "warnings": list(warnings), "skipped": list(skipped)}
        },
    )
    run.close()
    return ImportSummary(
        run.path,
        fmt,
        len(records),
        sum(len(r.steps) for r in records),
        list(warnings),
        list(skipped),
    )

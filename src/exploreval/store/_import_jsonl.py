"""Generic JSONL trajectories: one JSON object per step (format documented in docs/tide.md).

Required per line: ``observation`` (text the agent saw before acting) and ``action`` (text).
Optional: ``episode`` (episode key), ``t``, ``success``, ``reward``, ``progress``, ``done``,
``valid``, ``invalid_reason``, ``raw_output``, ``reasoning``, ``next_observation``, ``env``,
``agent``, ``agent_kind`` (llm | scripted), ``task``, ``history``, ``repeat``,
``entities_seen``, ``entities_acted``, ``info`` (object merged into the step info). Unknown
fields are kept in the step info too.

Episode boundaries: when lines carry ``episode``, every line must, and steps are grouped by it in
file order (episodes may interleave). Otherwise an episode ends at a line with ``"done": true``
and at the end of the file.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from exploreval.core import Step
from exploreval.store._import_common import ImportedEpisode, env_id_for, import_error

KNOWN_FIELDS = {
    "episode",
    "t",
    "observation",
    "action",
    "success",
    "reward",
    "progress",
    "done",
    "valid",
    "invalid_reason",
    "raw_output",
    "reasoning",
    "next_observation",
    "env",
    "agent",
    "agent_kind",
    "task",
    "history",
    "repeat",
    "entities_seen",
    "entities_acted",
    "info",
}


# -> Any: a JSON field of any declared type, checked against kind
def _field(
    obj: dict[str, Any], name: str, kind: type | tuple[type, ...], path: Path, line: int
) -> Any:
    value = obj.get(name)
    if value is None:
        return None
    if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
        raise import_error(
            path, f"line {line}", f"field {name!r} must be {_kind_name(kind)}, got a boolean"
        )
    if not isinstance(value, kind):
        raise import_error(
            path,
            f"line {line}",
            f"field {name!r} must be {_kind_name(kind)}, got {type(value).__name__}",
        )
    return value


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {
        str: "a string",
        bool: "true/false",
        int: "an integer",
        float: "a number",
        dict: "an object",
        list: "a list",
    }
    return " or ".join(dict.fromkeys(names.get(k, k.__name__) for k in kinds))


def _step(obj: dict[str, Any], t: int, path: Path, line: int) -> tuple[Step, bool]:
    for name in ("observation", "action"):
        if name not in obj:
            raise import_error(path, f"line {line}", f"missing required field {name!r}")
        if not isinstance(obj[name], str):
            raise import_error(
                path,
                f"line {line}",
                f"field {name!r} must be a string, got {type(obj[name]).__name__}",
            )
    info: dict[str, Any] = dict(_field(obj, "info", dict, path, line) or {})
    for name, value in obj.items():  # unknown fields are kept in the step info
        if name not in KNOWN_FIELDS:
            info.setdefault(name, value)
    success = _field(obj, "success", bool, path, line)
    if success is not None:
        info["success"] = success
    progress = _field(obj, "progress", (int, float), path, line)
    if progress is not None:
        if not (math.isfinite(progress) and 0.0 <= progress <= 1.0):
            raise import_error(
                path, f"line {line}", f"field 'progress' must be in [0, 1], got {progress}"
            )
        info["progress"] = float(progress)
    for name in ("entities_seen", "entities_acted"):
        value = _field(obj, name, list, path, line)
        if value is not None:
            info[name] = value
    after = _field(obj, "next_observation", str, path, line)
    if after is not None:
        info["observation_after"] = after
    valid = _field(obj, "valid", bool, path, line)
    reason = _field(obj, "invalid_reason", str, path, line)
    reward = _field(obj, "reward", (int, float), path, line)
    done = bool(_field(obj, "done", bool, path, line))
    step = Step(
        t=t,
        observation=obj["observation"],
        action=obj["action"],
        valid=valid is not False,
        invalid_reason=(reason or "marked invalid in the log") if valid is False else None,
        raw_output=_field(obj, "raw_output", str, path, line),
        reasoning=_field(obj, "reasoning", str, path, line),
        reward=float(reward or 0.0),
        terminated=done,
        info=info,
    )
    return step, done


class _Open:
    def __init__(self, first_line: int, meta: dict[str, Any]) -> None:
        self.first_line = first_line
        self.meta = meta
        self.steps: list[Step] = []
        self.closed = False


def read_jsonl(
    path: Path,
    *,
    env: str | None = None,
    agent: str | None = None,
) -> list[ImportedEpisode]:
    """Parse one generic JSONL file into episodes (errors name the line and field)."""
    try:
        handle = path.open("rb")  # decoded per line, so a bad byte names its line
    except FileNotFoundError:
        raise FileNotFoundError(f"{path} does not exist") from None
    episodes: dict[str, _Open] = {}
    order: list[str] = []
    keyed: bool | None = None
    anonymous = 0
    with handle:
        for line_number, raw_line in enumerate(handle, start=1):
            try:
                line = raw_line.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise import_error(
                    path,
                    f"line {line_number}",
                    f"not UTF-8 text ({exc.reason} at byte {exc.start})",
                ) from None
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except RecursionError:
                raise import_error(
                    path, f"line {line_number}", "not valid JSON (nested too deeply to read)"
                ) from None
            except json.JSONDecodeError as exc:
                raise import_error(
                    path, f"line {line_number}", f"not valid JSON ({exc.msg} at column {exc.colno})"
                ) from None
            if not isinstance(obj, dict):
                raise import_error(
                    path,
                    f"line {line_number}",
                    f"expected a JSON object per line, got {type(obj).__name__}",
                )
            has_key = "episode" in obj
            if keyed is None:
                keyed = has_key
            elif keyed != has_key:
                raise import_error(
                    path,
                    f"line {line_number}",
                    "some lines have an 'episode' field and some do not; use it on every line or on none",
                )
            if has_key:
                raw_key = obj["episode"]
                if not isinstance(raw_key, str | int) or isinstance(raw_key, bool):
                    raise import_error(
                        path, f"line {line_number}", "field 'episode' must be a string or integer"
                    )
                key = str(raw_key)
            else:
                key = f"#{anonymous}"
            current = episodes.get(key)
            if current is None or (not has_key and current.closed):
                current = _Open(line_number, obj)
                episodes[key] = current
                order.append(key)
            expected_t = _field(obj, "t", int, path, line_number)
            if expected_t is not None and expected_t != len(current.steps):
                raise import_error(
                    path,
                    f"line {line_number}",
                    f"field 't' is {expected_t} but this is step {len(current.steps)} of episode {key!r}",
                )
            step, done = _step(obj, len(current.steps), path, line_number)
            current.steps.append(step)
            if done and not has_key:
                current.closed = True
                anonymous += 1
    out: list[ImportedEpisode] = []
    for key in order:
        episode = episodes[key]
        meta = episode.meta
        where = f"episode {key!r} (from line {episode.first_line})"
        env_name = env or _meta_str(meta, "env", path, where) or "jsonl"
        agent_name = agent or _meta_str(meta, "agent", path, where) or "unknown"
        kind = _meta_str(meta, "agent_kind", path, where) or "llm"
        if kind not in ("llm", "scripted"):
            raise import_error(
                path, where, f"field 'agent_kind' must be 'llm' or 'scripted', got {kind!r}"
            )
        repeat = meta.get("repeat", 0)
        if not isinstance(repeat, int) or isinstance(repeat, bool) or repeat < 0:
            raise import_error(path, where, "field 'repeat' must be a non-negative integer")
        task = meta.get("task")
        success = any(s.info.get("success") is True for s in episode.steps)
        out.append(
            ImportedEpisode(
                source=str(path),
                key=key,
                env_id=env_id_for(env_name),
                agent=agent_name,
                agent_kind=kind,
                steps=episode.steps,
                success=success,
                task_id=str(task) if isinstance(task, str | int) else (key if keyed else None),
                repeat=repeat,
                history=_meta_str(meta, "history", path, where),
                initial_observation=episode.steps[0].observation if episode.steps else "",
                terminated=bool(episode.steps and (episode.steps[-1].terminated or success)),
                truncated=False,
            )
        )
    return out


def _meta_str(meta: dict[str, Any], name: str, path: Path, where: str) -> str | None:
    value = meta.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise import_error(
            path, where, f"field {name!r} must be a string, got {type(value).__name__}"
        )
    return value

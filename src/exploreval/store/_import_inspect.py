"""inspect_ai logs: ``.eval`` (zip) and ``.json``.

Schema used (inspect_ai ``EvalLog`` / ``EvalSample``; ``.eval`` recorder): a ``.eval`` file is a zip
with the eval spec in ``header.json`` (newer) or ``_journal/start.json`` / ``start.json`` (older)
and one ``samples/<id>_epoch_<n>.json`` per sample; a ``.json`` log holds ``eval`` and ``samples``.
A sample has ``id``, ``epoch``, ``messages`` (``system`` / ``user`` / ``assistant`` with optional
``tool_calls`` [{id, function, arguments}] / ``tool`` with ``function``, ``error``), ``scores``
({scorer: {value, answer, explanation}}) and ``model_usage``.

One sample = one episode; one assistant message = one step. The observation before a step is the
text of the user/tool messages since the previous assistant message (system messages excluded);
the action is its tool calls rendered ``function(json arguments)`` one per line, or its text when it
calls no tool (a final answer). A tool result with a ``parsing`` error makes the step invalid.
The score (``scorer`` option, default the first scorer) maps C/I/P/N to 1/0/0.5/0, yes/true,
no/false and booleans to 1/0, numbers as they are (inspect_ai's ``value_to_float``); success =
score >= ``success_threshold`` (default 1.0), and numeric scores in [0, 1] are also stored as the
last step's ``progress``.
"""

from __future__ import annotations

import json
import posixpath
import struct
import zipfile
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from exploreval.core import EpisodeRecord, Step, Usage
from exploreval.store._import_common import (
    ImportedEpisode,
    import_error,
    read_json,
    text_of,
)

#: Where an exploreval export (or ``inspect eval exploreval/...``) keeps the episode record in a
#: sample's ``store``: the importer rebuilds exactly these steps (docs/inspect.md).
EXPLOREVAL_STORE_KEY = "exploreval:record"

#: inspect_ai's ``value_to_float``: CORRECT / INCORRECT / PARTIAL / NOANSWER and yes/no words.
TEXT_SCORES = {
    "C": 1.0,
    "I": 0.0,
    "P": 0.5,
    "N": 0.0,
    "YES": 1.0,
    "TRUE": 1.0,
    "NO": 0.0,
    "FALSE": 0.0,
}


def score_value(value: Any) -> float | None:
    """A sample score as a number the way inspect_ai reads it, or None when it is not one."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        if value.strip().upper() in TEXT_SCORES:
            return TEXT_SCORES[value.strip().upper()]
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _render_call(call: dict[str, Any]) -> str:
    function = call.get("function", "?")
    arguments = call.get("arguments", {})
    if isinstance(arguments, dict):
        rendered = json.dumps(arguments, sort_keys=True, ensure_ascii=False)
    else:
        rendered = str(arguments)
    return f"{function}({rendered})"


def _reasoning(content: Any) -> str | None:
    if isinstance(content, list):
        parts = [
            b.get("reasoning")
            for b in content
            if isinstance(b, dict) and b.get("type") == "reasoning"
        ]
        text = "\n".join(p for p in parts if isinstance(p, str))
        return text or None
    return None


def sample_steps(sample: dict[str, Any], where: str, path: Path) -> tuple[list[Step], str, str]:
    """(steps, initial observation, observation after the last step)."""
    messages = sample.get("messages")
    if not isinstance(messages, list):
        raise import_error(path, f"{where}.messages", "missing or not a list")
    steps: list[Step] = []
    pending: list[str] = []
    initial: str | None = None
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise import_error(
                path, f"{where}.messages[{index}]", "expected a chat message with a 'role'"
            )
        role = message["role"]
        if role == "system":
            continue
        if role in ("user", "tool"):
            text = text_of(message.get("content"))
            error = message.get("error")
            if role == "tool" and isinstance(error, dict) and steps:
                steps[-1].info["tool_error"] = error.get("message")
                if error.get("type") == "parsing":
                    steps[-1].valid = False
                    steps[
                        -1
                    ].invalid_reason = f"tool call could not be parsed: {error.get('message')}"
            pending.append(text)
            continue
        if role != "assistant":
            raise import_error(path, f"{where}.messages[{index}].role", f"unknown role {role!r}")
        observation = "\n".join(pending)
        if initial is None:
            initial = observation
        pending = []
        calls = message.get("tool_calls") or []
        if not isinstance(calls, list):
            raise import_error(path, f"{where}.messages[{index}].tool_calls", "not a list")
        text = text_of(message.get("content"))
        action = (
            "\n".join(_render_call(c) for c in calls if isinstance(c, dict))
            if calls
            else text.strip()
        )
        steps.append(
            Step(
                t=len(steps),
                observation=observation,
                action=action,
                raw_output=text,
                reasoning=_reasoning(message.get("content")),
                info={"final_answer": not calls},
            )
        )
    return steps, initial or "", "\n".join(pending)


def _eval_spec(data: dict[str, Any]) -> dict[str, Any]:
    spec = data.get("eval")
    return spec if isinstance(spec, dict) else {}


#: The zip compression method inspect_ai writes ``.eval`` members with since 0.3.206 (zstd);
#: Python's ``zipfile`` reads it only from 3.14.
ZIP_ZSTANDARD = 93
_LOCAL_HEADER = struct.Struct("<IHHHHHIIIHH")


#: Largest member (uncompressed) read from an archive: a sample far past any real log's is a
#: decompression bomb, refused before it is inflated.
MAX_MEMBER_BYTES = 512 * 1024 * 1024


def _zstd_decompress(data: bytes, size: int) -> bytes:
    """zstd frames, inflated to at most ``size + 1`` bytes whatever the frame itself declares,
    with the standard library's codec where it has one (3.14+), else the ``zstandard`` package
    (a dependency of exploreval). One byte past ``size`` is how a lying member is caught."""
    try:
        from compression import zstd  # type: ignore[import-not-found,unused-ignore]

        return bytes(zstd.ZstdDecompressor().decompress(data, max_length=size + 1))
    except ImportError:
        import io

        import zstandard

        decompressor = zstandard.ZstdDecompressor()
        with decompressor.stream_reader(io.BytesIO(data), read_across_frames=True) as reader:
            return bytes(reader.read(size + 1))


def _read_member(archive: zipfile.ZipFile, name: str, path: Path) -> bytes:
    """A member's bytes, never more than the size the zip records for it (and never a member
    of more than :data:`MAX_MEMBER_BYTES`); zstd members (inspect_ai >= 0.3.206) are read from
    the archive's local header and checked against the CRC the zip records, like any other."""
    info = archive.getinfo(name)
    if info.file_size > MAX_MEMBER_BYTES:
        raise zipfile.BadZipFile(
            f"{name} would inflate to {info.file_size:,} bytes, past the "
            f"{MAX_MEMBER_BYTES:,}-byte limit for one member (a decompression bomb?)"
        )
    if info.compress_type != ZIP_ZSTANDARD:
        return archive.read(name)  # zipfile stops at the recorded size and checks the CRC
    with open(path, "rb") as fh:
        fh.seek(info.header_offset)
        header = fh.read(_LOCAL_HEADER.size)
        if len(header) < _LOCAL_HEADER.size or header[:4] != b"PK\x03\x04":
            raise zipfile.BadZipFile(f"no local header for {name}")
        fields = _LOCAL_HEADER.unpack(header)
        fh.seek(info.header_offset + _LOCAL_HEADER.size + fields[9] + fields[10])
        compressed = fh.read(info.compress_size)
    if len(compressed) < info.compress_size:
        raise zipfile.BadZipFile(f"{name} is cut short")
    try:
        data = _zstd_decompress(compressed, info.file_size)
    except ImportError:
        raise
    except Exception as exc:  # zstandard.ZstdError, compression.zstd.ZstdError
        raise zipfile.BadZipFile(f"{name}: zstd data damaged ({exc})") from None
    if len(data) > info.file_size:
        raise zipfile.BadZipFile(
            f"{name} inflates past the {info.file_size:,} bytes the zip records for it"
        )
    if zlib.crc32(data) != info.CRC or len(data) != info.file_size:
        raise zipfile.BadZipFile(f"{name} does not match its recorded CRC and size")
    return data


# -> Any: JSON of an inspect log member (any shape; callers check)
def _member_json(archive: zipfile.ZipFile, name: str, path: Path) -> Any:
    """One JSON member of a ``.eval`` archive; a damaged or partly written member names itself."""
    try:
        raw = _read_member(archive, name, path)
    except NotImplementedError as exc:  # a compression this reader does not know
        raise import_error(path, name, f"unsupported compression ({exc})") from None
    except ImportError:
        raise import_error(
            path,
            name,
            "this member is zstd-compressed (inspect_ai >= 0.3.206) and the "
            "zstandard package is missing: pip install zstandard",
        ) from None
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as exc:
        raise import_error(path, name, f"damaged archive member ({exc})") from None
    try:
        return json.loads(raw)
    except RecursionError:
        raise import_error(path, name, "not valid JSON (nested too deeply to read)") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        detail = (
            f"{exc.msg} at line {exc.lineno}"
            if isinstance(exc, json.JSONDecodeError)
            else "not UTF-8"
        )
        raise import_error(path, name, f"not valid JSON ({detail})") from None


def _check_member_names(names: list[str], path: Path) -> None:
    """A sample is one plain member: a name with ``..``, ``.`` or an empty part could name
    another sample again (``samples/../samples/x.json``), and a name listed twice is two
    members for one sample; either would import one sample twice."""
    seen: set[str] = set()
    for name in names:
        if not name.startswith("samples/"):
            continue
        if posixpath.normpath(name) != name or "\\" in name:
            raise import_error(
                path, name, "member name is not a plain path inside samples/ ('..', '.', '//')"
            )
        if name in seen:
            raise import_error(path, name, "the archive holds two members of this name")
        seen.add(name)


def _read_eval_zip(path: Path) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]:
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        raise import_error(path, "", "not a zip archive (an inspect .eval log is a zip)") from None
    with archive:
        names = archive.namelist()
        spec: dict[str, Any] = {}
        for header in ("header.json", "_journal/start.json", "start.json"):
            if header in names:
                data = _member_json(archive, header, path)
                spec = _eval_spec(data) if isinstance(data, dict) else {}
                break
        samples: list[tuple[str, dict[str, Any]]] = []
        _check_member_names(names, path)
        for name in sorted(n for n in names if n.startswith("samples/") and n.endswith(".json")):
            data = _member_json(archive, name, path)
            if not isinstance(data, dict):
                raise import_error(path, name, "expected a sample object")
            samples.append((name, data))
    if not samples:
        raise import_error(
            path, "samples/", "no samples in this log (was it written with samples?)"
        )
    return spec, samples


def _read_json_log(path: Path) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]:
    data = read_json(path)
    if not isinstance(data, dict) or "eval" not in data:
        raise import_error(path, "", "not an inspect_ai log (no 'eval' field)")
    samples = data.get("samples")
    if not isinstance(samples, list) or not samples:
        raise import_error(
            path, "field 'samples'", "missing or empty (was the log written with samples?)"
        )
    out: list[tuple[str, dict[str, Any]]] = []
    for index, sample in enumerate(samples):
        if not isinstance(sample, dict):
            raise import_error(path, f"samples[{index}]", "expected a sample object")
        out.append((f"samples[{index}]", sample))
    return _eval_spec(data), out


def _score(sample: dict[str, Any], scorer: str | None, where: str, path: Path) -> float | None:
    scores = sample.get("scores")
    if not isinstance(scores, dict) or not scores:
        return None
    name = scorer or next(iter(scores))
    if name not in scores:
        raise import_error(
            path, f"{where}.scores", f"no scorer {name!r}; this sample has {sorted(scores)}"
        )
    entry = scores[name]
    value = entry.get("value") if isinstance(entry, dict) else entry
    if isinstance(value, dict):  # multi-value scorers: take the first value
        value = next(iter(value.values()), None)
    return score_value(value)


ATTACHMENT = "attachment://"


# -> Any: JSON of any shape in and out
def resolve_attachments(value: Any, attachments: dict[str, Any]) -> Any:
    """``value`` with every ``attachment://<hash>`` string replaced by the sample's attachment
    (inspect_ai moves long texts of messages and events out of line when it writes a log)."""
    if isinstance(value, str):
        if value.startswith(ATTACHMENT):
            found = attachments.get(value[len(ATTACHMENT) :])
            return found if isinstance(found, str) else value
        return value
    if isinstance(value, list):
        return [resolve_attachments(v, attachments) for v in value]
    if isinstance(value, dict):
        return {k: resolve_attachments(v, attachments) for k, v in value.items()}
    return value


def _stored_record(sample: dict[str, Any], where: str, path: Path) -> EpisodeRecord | None:
    """The episode record an exploreval export (or ``inspect eval exploreval/...``) stored in
    the sample, validated; None for any other inspect log."""
    stored = sample.get("store")
    data = stored.get(EXPLOREVAL_STORE_KEY) if isinstance(stored, dict) else None
    if data is None:
        return None
    try:
        return EpisodeRecord.model_validate(data)
    except ValueError as exc:
        first = str(exc).splitlines()
        raise import_error(
            path,
            f"{where}.store[{EXPLOREVAL_STORE_KEY!r}]",
            f"not an exploreval episode record ({' '.join(first[:3])})",
        ) from None


def read_inspect(
    paths: Iterable[Path], *, scorer: str | None = None, success_threshold: float = 1.0
) -> tuple[list[ImportedEpisode], list[str]]:
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files += sorted(p for p in path.rglob("*") if p.suffix in (".eval", ".json"))
        elif path.exists():
            files.append(path)
        else:
            raise FileNotFoundError(f"{path} does not exist")
    episodes: list[ImportedEpisode] = []
    warnings: list[str] = []
    for path in files:
        spec, samples = _read_eval_zip(path) if path.suffix == ".eval" else _read_json_log(path)
        task = str(spec["task"]) if isinstance(spec.get("task"), str) else path.stem
        model = str(spec["model"]) if isinstance(spec.get("model"), str) else "unknown"
        for where, sample in samples:
            attachments = sample.get("attachments")
            if isinstance(attachments, dict) and attachments:
                sample = resolve_attachments(sample, attachments)
            exact = _stored_record(sample, where, path)
            if exact is not None:
                episodes.append(
                    ImportedEpisode(
                        source=str(path),
                        key=f"{sample.get('id', where)}#{sample.get('epoch', 1)}",
                        env_id=exact.env_id,
                        agent=exact.agent.name,
                        steps=exact.steps,
                        success=exact.success,
                        repeat=exact.repeat,
                        exact=exact,
                    )  # fmt: skip
                )
                continue
            steps, initial, after = sample_steps(sample, where, path)
            value = _score(sample, scorer, where, path)
            if value is None:
                warnings.append(f"{path}: {where}: no usable score; imported as unsolved")
            success = value is not None and value >= success_threshold
            if steps:
                steps[-1].info["success"] = success
                if after:
                    steps[-1].info["observation_after"] = after
                if value is not None and 0.0 <= value <= 1.0:
                    steps[-1].info["progress"] = value
                steps[-1].terminated = True
            usage = Usage()
            model_usage = sample.get("model_usage")
            if isinstance(model_usage, dict):
                for entry in model_usage.values():
                    if isinstance(entry, dict):
                        usage = usage + Usage(
                            prompt_tokens=int(entry.get("input_tokens") or 0),
                            completion_tokens=int(entry.get("output_tokens") or 0),
                            reasoning_tokens=int(entry.get("reasoning_tokens") or 0),
                        )
            epoch = sample.get("epoch", 1)
            sample_id = sample.get("id", where)
            episodes.append(
                ImportedEpisode(
                    source=str(path),
                    key=f"{sample_id}#{epoch}",
                    env_id=f"inspect/{task}",  # documented rule, registry names too
                    agent=model,
                    steps=steps,
                    success=success,
                    task_id=str(sample_id),
                    repeat=max(int(epoch) - 1, 0) if isinstance(epoch, int) else 0,
                    initial_observation=initial,
                    reset_info={"score": value, "target": sample.get("target")},
                    agent_config={"tool": "inspect_ai", "model": model},
                    usage=usage,
                )
            )
    return episodes, warnings

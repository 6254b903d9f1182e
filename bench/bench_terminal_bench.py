"""Real Terminal-Bench / Harbor task sets as shipped: how many load, build, and run correctly.

Run: python bench/bench_terminal_bench.py TASKS_DIR [--only a,b] [--sample N] [--json OUT]
[--build-timeout S]

For every task folder under TASKS_DIR (e.g. a checkout of terminal-bench-core's ``tasks/``):

1. **load** with image building (``exploreval.suites.terminal``): a refusal prints the file,
   line and reason (an extra compose service, an unmapped base image...);
2. **build** its image (cached: a second run only times the cached start);
3. **run correctly** = the gold solution resolves *and* an untouched run (the agent declares the
   task complete at once) does not, both through the real env and verification, with a network
   in the agent's sandbox as Terminal-Bench gives one (env option ``network=true``).

Each task ends in one category: ``ok``, ``refused`` (at load), ``unreachable`` (a build or gold
step needs a host this machine cannot reach: GitHub, Hugging Face, download.pytorch.org...),
``ok_keep`` (ok with ``agent_processes=keep``: its tests talk to a server the agent started),
``build_failed``, ``gold_failed`` (a gold that filled the episode's disk is run again with the
4x ``disk_mb`` its failure names; the row's ``disk_mb`` says so), ``unverified_gold`` (the gold fails and the task says
it ships no verified solution, or its solution runs no command: ``polyglot-rust-c``'s is a
template with ``# UNKNOWN``), ``untouched_passes``, ``no_solution`` (no gold to run; it
loads, builds, and its tests run and fail untouched, as they should), ``verify_failed`` (no
gold, and untouched no test ran to a verdict), ``no_tests`` (the
tests define none: a broken copy of the task), ``error``. ``hint_keep`` in a row says whether the
gold's own verification named ``agent_processes=keep`` (the hint users get). A gold that
failed after its episode looked up a host this machine cannot reach (the verification's
``unresolved_hosts``, from the DNS log) counts as ``unreachable``. The summary
prints the counts, the share ok of the tasks that need no unreachable host (a refused task
whose live lines fetch from one is left out too), build times and the median sandbox start from
a cached image. ``--json`` writes every task's row.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
import time
import traceback
from collections import Counter
from pathlib import Path
from typing import Any


def _unreachable(
    text: str, task_dir: Path | None = None, names: tuple[str, ...] | None = None
) -> str | None:
    """A host the failure names, or (for a failed gold run) one the task's solution, test script
    or Dockerfile fetches from that this machine cannot reach (checked by connecting);
    ``names``: only those files of the task."""
    from exploreval.suites.terminal._reachability import unreachable_at_test_time, unreachable_in

    # a host the failure names, or one a client's offline error implies (Hugging Face's hub
    # prints LocalEntryNotFoundError, no host): the gold's pane shows the same clients' errors
    host = unreachable_at_test_time(text)
    if host:
        return host
    if task_dir is None:
        return None
    sources = []
    if names is None:
        names = ("solution.sh", "solution.yaml", "run-tests.sh", "Dockerfile",
                 "solution/solve.sh", "tests/test.sh", "environment/Dockerfile")  # fmt: skip
        names += tuple(str(p.relative_to(task_dir)) for p in sorted(task_dir.glob("tests/*.py")))
    for name in names:
        path = task_dir / name
        if path.is_file():  # comments name hosts nothing fetches (the Dockerfile template's
            # "https://github.com/laude-institute/terminal-bench/packages")
            lines = path.read_text(errors="replace").splitlines()
            sources.append("\n".join(x for x in lines if not x.lstrip().startswith("#")))
    return unreachable_in(sources)


def _unresolved(names: list[str]) -> str | None:
    """The first name the gold's episode asked DNS for, did not get, and cannot reach: the
    gold needed it (a DNS seed list, an f-string URL), whatever its files spell."""
    from exploreval.suites.terminal._reachability import reachable

    return next((name for name in names if not reachable(name)), None)


#: A task's build files: a host their live lines fetch from is a need, not a mention.
BUILD_FILES = ("Dockerfile", "environment/Dockerfile")
#: Categories left out of the share that runs correctly: no verdict on the harness is possible
#: (the host is unreachable here, the tests define none, there is no real gold to run).
_NO_VERDICT = ("unreachable", "no_tests", "no_solution", "unverified_gold")


_PYTEST_ERROR = re.compile(r"^E\s+(\S.*)$", re.MULTILINE)


_PIP_NO_DISTRIBUTION = re.compile(r"No matching distribution found for (\S+)")


def failure_causes(output: str, most: int = 3) -> list[str]:
    """The errors the failing tests raised, first line of each, distinct: what a gold failure is
    diagnosed from (a test that cannot pass as written names itself: ``TypeError`` in the test)."""
    causes: list[str] = []
    for match in _PIP_NO_DISTRIBUTION.finditer(output):  # the test setup's own install failed
        cause = f"pip: No matching distribution found for {match.group(1)}"
        if cause not in causes:
            causes.append(cause)
    for match in _PYTEST_ERROR.finditer(output):
        line = match.group(1).strip()
        if line.split(":", 1)[0].endswith(("Error", "Exception", "Exit")) and line not in causes:
            causes.append(line[:200])
        if len(causes) == most:
            break
    return causes


def _cast_text(cast: str) -> str:
    """The text an asciicast recording printed (its event lines are JSON: decode them)."""
    out = []
    for line in cast.splitlines()[1:]:
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(event, list) and len(event) == 3 and event[1] == "o":
            out.append(str(event[2]))
    return "".join(out)


async def _episode(env: Any, *, gold: bool) -> dict[str, Any]:
    from exploreval.suites.terminal._oracle import oracle_keystrokes

    await env.areset(seed=0)
    task = env.task
    if gold:
        keys = oracle_keystrokes(task.oracle_truth())
        action = {"commands": [{"keystrokes": keys, "duration": task.agent_timeout_s,
                                "block": True}], "task_complete": True}  # fmt: skip
    else:
        action = {"commands": [], "task_complete": True}
    _, _, _, _, info = await env.astep(json.dumps(action))
    verification = info.get("verification") or {}
    output = ""
    if gold and env.sandbox is not None:  # what the pane showed (unreachable-host detection)
        output = _cast_text(env.sandbox.cast())
    await env.aclose()
    return {"resolved": bool(info.get("resolved")), "verification": verification, "pane": output}


async def check_task(task_dir: Path, build_timeout: float) -> dict[str, Any]:
    from exploreval.suites.terminal._env import TerminalEnv
    from exploreval.suites.terminal._errors import TaskFormatError
    from exploreval.suites.terminal._image import build_image
    from exploreval.suites.terminal._image_recipe import BuildRecipe, ImageBuildError
    from exploreval.suites.terminal._tasks import load_task

    row: dict[str, Any] = {"task": task_dir.name}
    try:
        task = load_task(task_dir, image="build")
    except TaskFormatError as exc:
        row.update(category="refused", reason=str(exc))
        return row
    row["notes"] = list(task.dockerfile_notes)
    if task.image is None:
        row.update(category="error", reason="loaded without an image")
        return row
    recipe = BuildRecipe(**{**task.image.model_dump(), "timeout_s": build_timeout})
    t0 = time.perf_counter()
    try:
        image = await asyncio.to_thread(build_image, recipe)
    except ImageBuildError as exc:
        row.update(
            category="unreachable" if exc.unreachable else "build_failed",
            reason=str(exc)[-1500:],
            unreachable=exc.unreachable,
            build_s=round(time.perf_counter() - t0, 1),
        )
        return row
    except TaskFormatError as exc:
        row.update(category="refused", reason=str(exc))
        return row
    row["build_s"] = round(time.perf_counter() - t0, 1)
    row["image_built_s"] = image.meta.get("seconds")
    # as shipped, with the defaults a loaded task gets: Terminal-Bench's containers have a
    # network (and many solutions install what they use), which a loaded task now has too
    options = {"tasks": str(task_dir), "image": "build", "cast": True}
    if not task.solution:
        # no gold to run (a set that ships none, such as TermiGen's): what can still be checked
        # is that the task loads, builds, verifies, and does not pass untouched
        try:
            untouched = await _episode(TerminalEnv(**options), gold=False)
        except Exception as exc:
            row.update(category="error", reason=f"{type(exc).__name__}: {exc}",
                       trace=traceback.format_exc()[-2000:])  # fmt: skip
            return row
        row["untouched_resolved"] = untouched["resolved"]
        verification = untouched["verification"]
        tests = verification.get("tests") or []
        failed = [t for t in tests if t.get("outcome") != "passed"]
        row.update(tests_ran=len(tests), tests_failed=len(failed),
                   reasons=(verification.get("reasons") or [])[:3])  # fmt: skip
        if untouched["resolved"]:
            row.update(category="untouched_passes", reason="the untouched work dir passes")
        elif not verification.get("expected") and verification.get("parser") == "pytest":
            row.update(category="no_tests", reason="the task's tests define no test")
        elif not failed:  # no test ran to a verdict: the verification itself did not work
            row.update(category="verify_failed", reason="; ".join(row["reasons"])[:300]
                       or str(verification.get("error")))  # fmt: skip
        else:
            row.update(category="no_solution", reason=f"no gold solution; untouched: "
                       f"{len(failed)} of {len(tests)} tests fail")  # fmt: skip
        return row
    try:
        untouched = await _episode(TerminalEnv(**options), gold=False)
        gold = await _episode(TerminalEnv(**options), gold=True)
    except ImageBuildError as exc:  # a service's image: built, or pulled from its registry
        row.update(category="unreachable" if exc.unreachable else "build_failed",
                   reason=str(exc)[-1500:], unreachable=exc.unreachable)  # fmt: skip
        return row
    except Exception as exc:  # an env error is a finding of this benchmark, not a crash
        row.update(category="error", reason=f"{type(exc).__name__}: {exc}",
                   trace=traceback.format_exc()[-2000:])  # fmt: skip
        return row
    row["gold_resolved"] = gold["resolved"]
    row["untouched_resolved"] = untouched["resolved"]
    row["verify_s"] = gold["verification"].get("duration_s")
    # did the verification itself name the agent's servers (the hint users get)?
    row["hint_keep"] = any("agent_processes=keep" in str(r)
                           for r in gold["verification"].get("reasons") or [])  # fmt: skip
    if not gold["resolved"]:  # a server the tests connect to? Terminal-Bench keeps it running
        try:
            kept = {**options, "agent_processes": "keep"}
            gold_kept = await _episode(TerminalEnv(**kept), gold=True)
            if gold_kept["resolved"]:
                untouched = await _episode(TerminalEnv(**kept), gold=False)
                row["untouched_resolved"] = untouched["resolved"]
                row["agent_processes"] = "keep"
                gold = gold_kept
            elif any(gold_kept["verification"].get(k) for k in ("unreachable_host",
                                                                 "unresolved_hosts")):  # fmt: skip
                gold = gold_kept  # its server ran on through the tests, as in Terminal-Bench,
                # and asked for a host: the cause is in this run, not in the one that killed it
        except Exception as exc:
            row["keep_error"] = f"{type(exc).__name__}: {exc}"
        row["gold_resolved"] = gold["resolved"]
    # as its reason says: a larger disk, the same task (twice at most: 2 GB -> 8 -> 32; a disk
    # above a quarter of memory lives in a sparse file, so the host's disk is the bound)
    for _ in range(2):
        filled = gold["verification"].get("disk_filled_mb")
        if gold["resolved"] or not filled:
            break
        try:
            larger = {**options, "disk_mb": 4 * filled}
            if row.get("agent_processes"):
                larger["agent_processes"] = row["agent_processes"]
            gold_larger = await _episode(TerminalEnv(**larger), gold=True)
            row["disk_mb"] = larger["disk_mb"]
            if gold_larger["resolved"]:
                untouched = await _episode(TerminalEnv(**larger), gold=False)
                row["untouched_resolved"] = untouched["resolved"]
            gold = gold_larger
        except Exception as exc:
            row["disk_error"] = f"{type(exc).__name__}: {exc}"
            break
        row["gold_resolved"] = gold["resolved"]
    if not gold["resolved"]:
        verification = gold["verification"]
        placeholder = task.unverified_solution()
        if placeholder:  # the task's gap, named: not a harness failure
            row.update(category="unverified_gold", reason=f"gold fails, and the task ships "
                       f"no verified solution: {placeholder}")  # fmt: skip
            return row
        if not verification.get("expected") and verification.get("parser") == "pytest":
            row.update(category="no_tests", reason="the task's tests define no test (an empty "
                       "or unreadable test file)")  # fmt: skip
            return row
        text = gold["pane"] + verification.get("output", "")
        host = (verification.get("unreachable_host") or _unreachable(text, task_dir)
                or _unresolved(verification.get("unresolved_hosts") or []))  # fmt: skip
        causes = failure_causes(verification.get("output", ""))
        if verification.get("disk_filled_mb"):  # the gold ran out of the episode's disk
            causes.insert(0, f"the episode's disk ({verification['disk_filled_mb']} MB) filled")
        if row.get("disk_mb"):
            causes.append(f"with disk_mb={row['disk_mb']} as well")
        row.update(
            category="unreachable" if host else "gold_failed",
            unreachable=host,
            causes=causes,
            reason="; ".join(verification.get("reasons") or [])[:800]
            or str(verification.get("error")),
            output=verification.get("output", "")[-1500:],
        )
    elif untouched["resolved"]:
        row.update(category="untouched_passes", reason="the untouched work dir passes the tests")
    else:
        row["category"] = "ok_keep" if row.get("agent_processes") == "keep" else "ok"
    return row


async def start_times(task_dir: Path, n: int = 15) -> list[float]:
    """Seconds to start a sandbox from a cached image (start -> first prompt), n times."""
    from exploreval.suites.terminal._image import build_image
    from exploreval.suites.terminal._image_recipe import BuildRecipe
    from exploreval.suites.terminal._sandbox import Sandbox
    from exploreval.suites.terminal._sandbox_config import SandboxConfig
    from exploreval.suites.terminal._tasks import load_task

    task = load_task(task_dir, image="build")
    assert task.image is not None
    image = build_image(BuildRecipe(**task.image.model_dump()))
    config = SandboxConfig(image=image.rootfs, workdir=task.container_workdir, env=image.env,
                           record_cast=False, watch_files=False)  # fmt: skip
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        sb = await Sandbox.start(config)
        times.append(time.perf_counter() - t0)
        await sb.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tasks", type=Path)
    parser.add_argument("--only", default="")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--build-timeout", type=float, default=1200.0)
    parser.add_argument("--sample", type=int, default=0,
                        help="N tasks evenly spaced in name order (a large set)")  # fmt: skip
    args = parser.parse_args()
    folders = sorted(p for p in args.tasks.iterdir() if p.is_dir() and not p.name.startswith("."))
    if args.sample and len(folders) > args.sample:
        step = len(folders) / args.sample
        folders = [folders[int(i * step)] for i in range(args.sample)]
    if args.only:
        wanted = set(args.only.split(","))
        folders = [p for p in folders if p.name in wanted]
    rows: list[dict[str, Any]] = []
    done: dict[str, dict[str, Any]] = {}
    if args.json and args.json.exists():  # resume: keep rows already measured
        for line in args.json.read_text().splitlines():
            row = json.loads(line)
            done[row["task"]] = row
    for folder in folders:
        if folder.name in done:
            rows.append(done[folder.name])
            continue
        t0 = time.perf_counter()
        row = asyncio.run(check_task(folder, args.build_timeout))
        row["seconds"] = round(time.perf_counter() - t0, 1)
        rows.append(row)
        reason = (row.get("reason") or "").splitlines()[0][:160] if row.get("reason") else ""
        print(f"{row['task']:45} {row['category']:17} {row['seconds']:7.1f}s {reason}", flush=True)
        if args.json:
            with args.json.open("a") as fh:
                fh.write(json.dumps(row) + "\n")
    counts = Counter(r["category"] for r in rows)
    total = len(rows)
    for row, folder in zip(rows, folders, strict=True):
        if row["category"] == "refused" and "unreachable" not in row:
            # refused at load, and its image's build would need an unreachable host anyway
            row["unreachable"] = _unreachable("", folder, BUILD_FILES)
    refused_unreachable = sum(bool(r.get("unreachable")) for r in rows
                              if r["category"] == "refused")  # fmt: skip
    # a task with no gold solution cannot be "ok": it is counted on its own line below
    reachable = total - sum(counts[c] for c in _NO_VERDICT) - refused_unreachable
    print(f"\n{total} tasks: " + ", ".join(f"{k} {v}" for k, v in counts.most_common()))
    loaded = total - counts["refused"]
    good = counts["ok"] + counts["ok_keep"]
    print(
        f"loaded {loaded} of {total}; ok {good} of {total} "
        f"({counts['ok_keep']} of them with agent_processes=keep)"
    )
    if refused_unreachable:
        print(f"{refused_unreachable} of the {counts['refused']} refused would need an unreachable "
              "host too (left out of the share below)")  # fmt: skip
    if reachable:
        print(f"ok among tasks with a verdict (no unreachable host, tests, a real gold): {good} of "
              f"{reachable} ({100 * good / reachable:.0f}%)")  # fmt: skip
    for row in rows:
        if row["category"] == "unverified_gold":
            print(f"{row['task']}: {row['reason']}")
        elif row["category"] == "gold_failed":  # the cause, from what the failing tests raised
            print(f"{row['task']}: gold failed: " + ("; ".join(row.get("causes") or ())
                  or str(row.get("reason", ""))[:200]))  # fmt: skip
    if counts["no_solution"]:
        print(f"{counts['no_solution']} tasks ship no gold solution: each loaded, built, verified "
              "and failed untouched, as it should")  # fmt: skip
    if counts["ok_keep"]:
        hinted = sum(bool(r.get("hint_keep")) for r in rows if r["category"] == "ok_keep")
        print(f"the verification's own hint named agent_processes=keep for {hinted} of the "
              f"{counts['ok_keep']} tasks that need it")  # fmt: skip
    larger = [r["task"] for r in rows if r.get("disk_mb")]
    if larger:  # the gold filled the default disk and was run again with the option named
        print(f"run again with 4x the disk each time it filled (disk_mb), as the reason says: "
              f"{', '.join(larger)}")  # fmt: skip
    builds = [r["image_built_s"] for r in rows if r.get("image_built_s")]
    if builds:
        print(f"image build time (uncached): median {statistics.median(builds):.1f} s, "
              f"max {max(builds):.1f} s over {len(builds)} images")  # fmt: skip
    verifies = [r["verify_s"] for r in rows if r.get("verify_s") and r["category"].startswith("ok")]
    if verifies:  # the test command, its trace and the audit, on the tasks that run correctly
        print(
            f"gold verification: median {statistics.median(verifies):.1f} s, "
            f"max {max(verifies):.1f} s over {len(verifies)} tasks that run correctly"
        )
    hosts = Counter(r.get("unreachable") for r in rows if r.get("unreachable"))
    if hosts:
        print("unreachable hosts: " + ", ".join(f"{h} ({n})" for h, n in hosts.most_common()))
    ok = [r for r in rows if r["category"] == "ok"]
    if ok and not args.only:
        times = asyncio.run(start_times(args.tasks / ok[0]["task"]))
        print(f"sandbox start from a cached image ({ok[0]['task']}): median "
              f"{statistics.median(times) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms "
              f"over {len(times)}")  # fmt: skip
    sys.exit(0)


if __name__ == "__main__":
    main()

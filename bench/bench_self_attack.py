"""The verification attacks itself on every task of a set (issue 55).

Run: python bench/bench_self_attack.py [TASKS] [--only a,b] [--json OUT]

TASKS: ``builtin`` (the default: the 42 built-in tasks, on this machine's system), or a folder
of Terminal-Bench / Harbor tasks (each run from its image, built and cached first), such as
``tests/fixtures/terminal/seal``. For every task with a gold solution, through the real env and
verification (:mod:`exploreval.suites.terminal._self_attack`):

1. the gold alone; its verification's trace gives the attack surface (``audit.surface``);
2. the gold again, with six harmless files of the agent's planted in every directory of that
   surface (``*.pth``, ``*.py``, a bare name, ``*.conf``, ``*.list``, ``*.sh``).

A task *holds* when every plant read as code or configuration is named by the audit, and the
attacked run then does not resolve. Prints a row per task (surface directories, plants, plants
read as code, unnamed, resolved) and one summary line: tasks that hold, of those whose gold
resolved; plants read as code; holes (unnamed plants). The CI sample is
tests/suites/terminal/test_self_attack.py.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any


async def _play(source: str, task: Any, plants: str | None) -> dict[str, Any]:
    """The gold as the task's oracle runs it (:mod:`._oracle`), then ``plants`` if any."""
    from exploreval.suites.terminal._env import TerminalEnv
    from exploreval.suites.terminal._oracle import oracle_keystrokes

    env = TerminalEnv(tasks=source, task=task.id, cast=False)
    gold = oracle_keystrokes(task.oracle_truth())
    commands = [{"keystrokes": gold, "duration": 600, "block": True}]
    if plants:
        keys = f"bash <<'EXPLOREVAL_PLANT'\n{plants}EXPLOREVAL_PLANT\n"
        commands.append({"keystrokes": keys, "duration": 120, "block": True})
    try:
        await env.areset(seed=0)
        _, _, _, _, info = await env.astep(
            json.dumps({"commands": commands, "task_complete": True})
        )
    finally:
        await env.aclose()
    verification = info.get("verification") or {}
    return verification if isinstance(verification, dict) else {}


async def attack(source: str, task: Any) -> dict[str, Any]:
    from exploreval.suites.terminal._self_attack import judge_plants, plant_script, surface_dirs

    started = time.perf_counter()
    control = await _play(source, task, None)
    row: dict[str, Any] = {"task": task.id, "gold_resolved": control.get("resolved") is True}
    if not row["gold_resolved"]:
        row["reasons"] = control.get("reasons") or control.get("error")
        return row
    dirs = surface_dirs((control.get("audit") or {}).get("surface", []))
    attacked = await _play(source, task, plant_script(dirs))
    outcome = judge_plants(attacked, dirs)
    row.update(
        surface=len(dirs),
        planted=outcome.planted,
        read_as_code=sorted(outcome.read_as_code),
        unnamed=outcome.unnamed,
        attacked_resolved=outcome.resolved,
        holds=outcome.holds,
        seconds=round(time.perf_counter() - started, 1),
    )
    return row


def main() -> None:
    from exploreval.suites.terminal._env_options import load_task_list

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tasks", nargs="?", default="builtin")
    parser.add_argument("--only", default="", help="comma-separated task ids")
    parser.add_argument("--json", type=Path, help="write every task's row (JSON lines)")
    args = parser.parse_args()
    tasks = load_task_list(args.tasks)
    only = {t for t in args.only.split(",") if t}
    rows = []
    for task in tasks:
        if (only and task.id not in only) or not task.solution:
            continue
        row = asyncio.run(attack(args.tasks, task))
        rows.append(row)
        if args.json:
            with args.json.open("a") as out:
                out.write(json.dumps(row) + "\n")
        if not row["gold_resolved"]:
            print(f"{task.id:40s} gold did not resolve: {str(row['reasons'])[:120]}", flush=True)
            continue
        print(
            f"{task.id:40s} surface {row['surface']:4d} dirs, {row['planted']:5d} plants, "
            f"{len(row['read_as_code']):3d} read as code, {len(row['unnamed'])} unnamed, "
            f"attacked resolved {row['attacked_resolved']}, {row['seconds']:.0f} s"
            + ("" if row["holds"] else "  <-- HOLE " + ", ".join(row["unnamed"][:3])),
            flush=True,
        )
    played = [r for r in rows if r["gold_resolved"]]
    holds = sum(r["holds"] for r in played)
    code = sum(len(r["read_as_code"]) for r in played)
    holes = sum(len(r["unnamed"]) for r in played)
    print(
        f"self-attack: {holds} of {len(played)} tasks hold ({len(rows) - len(played)} golds did "
        f"not resolve); {code} plants read as code or configuration, {holes} unnamed"
    )
    sys.exit(0 if holds == len(played) else 1)


if __name__ == "__main__":
    main()

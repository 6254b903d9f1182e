"""A score's map cost in instructions per episode, by family: a number that does not drift.

    python bench/bench_map_instructions.py [--episodes 100] [--vs OTHER_CHECKOUT] [--quick]

Wall and CPU times on this shared host move by a third from hour to hour, which hides any
change of a few percent (issue 18's notes: most candidate cuts were "within noise"). This counts
instructions instead, under valgrind's callgrind: for each family of the synthetic mix
(``bench/_synthetic_run.py``: grid, bandit, FrozenLake), one process maps the first
``--episodes`` ok episodes of that family exactly as a score's worker does
(``analysis._score._score_chunk``), after a warm-up on other lines (imports, first calls);
another only warms up. The difference, over the episodes, is the map's instructions per
episode. The mix line weighs the families by their share of the synthetic run.

With ``--vs DIR`` (another checkout, e.g. ``git worktree add /tmp/base HEAD~3``), the same
processes run on ``DIR/src`` too and the ratio is printed: the paired comparison a change of a
few percent needs. Each tree is copied (and compiled) to a folder whose path has the same
length, and the hash seed is fixed: the count then moves by about 0.5% between runs of one tree
(addresses still differ, and the memos are keyed by them), not by the 3% it moved otherwise. Needs valgrind (``apt install valgrind``); each process runs about fifty
times slower than natively, so a run takes a few minutes (processes run side by side, one a
core).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _synthetic_run import write_synthetic_run  # noqa: E402

SRC = Path(__file__).resolve().parents[1] / "src"
WARM_UP = 40  # lines mapped before counting: the first of each family pay their imports

CHILD = r"""
import os, sys, json
from exploreval.analysis._score import _score_chunk
spans = json.loads(sys.argv[2])
warm = json.loads(sys.argv[3])
_score_chunk(sys.argv[1], [tuple(s) for s in warm], "bench")
if spans:
    _score_chunk(sys.argv[1], [tuple(s) for s in spans], "bench")
sys.stdout.flush()
os._exit(0)  # no interpreter teardown: both processes end the same way
"""


def family_spans(log: Path, per_family: int) -> tuple[dict[str, list[list[int]]], list[list[int]]]:
    """(the first ``per_family`` ok lines of each family, the warm-up lines) as
    (offset, length, line) spans: the warm-up lines are the first of the log, the counted ones
    come after them."""
    import orjson

    spans: dict[str, list[list[int]]] = {}
    warm: list[list[int]] = []
    offset = 0
    with open(log, "rb") as fh:
        for number, raw in enumerate(fh, start=1):
            span = [offset, len(raw), number]
            offset += len(raw)
            if len(warm) < WARM_UP:
                warm.append(span)
                continue
            data = orjson.loads(raw)
            if data.get("status") != "ok":
                continue
            chosen = spans.setdefault(str(data["family"]), [])
            if len(chosen) < per_family:
                chosen.append(span)
    return spans, warm


def shares(log: Path) -> dict[str, float]:
    """Each family's share of the run's ok episodes."""
    import orjson

    counts: dict[str, int] = {}
    with open(log, "rb") as fh:
        for raw in fh:
            data = orjson.loads(raw)
            if data.get("status") == "ok":
                counts[str(data["family"])] = counts.get(str(data["family"]), 0) + 1
    total = sum(counts.values()) or 1
    return {family: n / total for family, n in counts.items()}


def instructions(src: Path, log: Path, spans: list[list[int]], warm: list[list[int]]) -> int:
    """Instructions callgrind counts for one child process on ``src``."""
    import json

    # a fixed hash seed: string hashing moves dict and set layouts, and so the count
    env = dict(os.environ, PYTHONPATH=str(src), EXPLOREVAL_SCORE_CACHE="off", PYTHONHASHSEED="0")
    with tempfile.NamedTemporaryFile(suffix=".callgrind") as out:
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out.name}",
             sys.executable, "-c", CHILD, str(log), json.dumps(spans), json.dumps(warm)],
            capture_output=True, text=True, env=env,
        )  # fmt: skip
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"callgrind run failed ({src}):\n{done.stderr[-3000:]}")
    return int(found.group(1))


def _copied(src: Path, to: Path) -> Path:
    """``src``'s package copied under ``to/src`` and compiled there, so that every process
    loads the same bytecode (none writes a cache the next one reads) from a path as long as the
    other tree's."""
    import compileall
    import shutil

    shutil.copytree(src / "exploreval", to / "src" / "exploreval",
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    compileall.compile_dir(to / "src", quiet=1)
    return to / "src"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=100, help="counted episodes a family")
    parser.add_argument("--quick", action="store_true", help="30 episodes a family (run_all)")
    parser.add_argument("--vs", type=Path, default=None, help="another checkout to compare with")
    parser.add_argument("--dir", type=Path, default=None, help="a synthetic run to reuse")
    args = parser.parse_args()
    if args.quick:
        args.episodes = 30
    if args.episodes < 1:
        raise SystemExit(f"--episodes must be at least 1, got {args.episodes}")
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed: apt install valgrind")
    sources = [("this tree", SRC)]
    if args.vs is not None:
        other = args.vs.resolve() / "src"
        if not (other / "exploreval").is_dir():
            raise SystemExit(f"{args.vs} has no src/exploreval: expected a checkout of exploreval")
        sources.append(("vs", other))
    with tempfile.TemporaryDirectory(prefix="bench-instructions-") as tmp:
        trees = [(name, _copied(src, Path(tmp) / f"t{i}")) for i, (name, src) in enumerate(sources)]
        run = args.dir or Path(tmp) / "run"
        if not (run / "episodes.jsonl").exists():
            write_synthetic_run(run, 3_000)
        log = run / "episodes.jsonl"
        by_family, warm = family_spans(log, args.episodes)
        weights = shares(log)
        jobs = [(name, src, family) for name, src in trees for family in [None, *by_family]]
        with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
            counts = dict(
                zip(
                    [(name, family) for name, _, family in jobs],
                    pool.map(
                        lambda job: instructions(
                            job[1], log, by_family.get(job[2], []) if job[2] else [], warm
                        ),
                        jobs,
                    ),
                    strict=True,
                )
            )
    print(f"million instructions an episode, map only ({args.episodes} episodes a family)")
    header = f"{'family':12s}" + "".join(f"{name:>12s}" for name, _ in trees)
    print(header + ("       ratio" if len(trees) == 2 else ""))
    mix = {name: 0.0 for name, _ in trees}
    for family in by_family:
        n = len(by_family[family])
        values = [(counts[(name, family)] - counts[(name, None)]) / n / 1e6 for name, _ in trees]
        for (name, _), value in zip(trees, values, strict=True):
            mix[name] += weights.get(family, 0.0) * value
        ratio = f"{values[0] / values[1]:12.3f}" if len(values) == 2 else ""
        print(f"{family:12s}" + "".join(f"{v:12.3f}" for v in values) + ratio)
    values = [mix[name] for name, _ in trees]
    ratio = f"{values[0] / values[1]:12.3f}" if len(values) == 2 else ""
    print(f"{'mix':12s}" + "".join(f"{v:12.3f}" for v in values) + ratio)


if __name__ == "__main__":
    main()

"""Scoring and reporting at sweep scale, in bounded memory (issue 18's goals).

    python bench/bench_columns.py [--episodes 100000] [--dir DIR] [--quick]

Generates a run with ``bench/_synthetic_run.py`` (cloned real grid / bandit / FrozenLake
episodes, ~16 kB of log each) unless DIR holds one, then runs each phase in a fresh process
and prints its wall time and peak RSS (the process's own and its worker processes' largest):

1. ``RunColumns.sync`` cold: the Parquet tables of episodes and steps from the log;
2. ``score_run`` cold (tables synced, no chunk in the score cache): every metric,
   results.parquet, tables/, viewer index;
   ``rescore``: the same with every chunk of the map read from the score cache (what a score
   of a grown sweep pays for its unchanged chunks; results.parquet and tables/ removed first);
3. ``build_report`` after that score;
4. the anchor: one per-agent aggregate (episodes, success rate, mean steps) read by DuckDB
   from the episode columns, and the same from ``results.parquet`` as ``report``/``compare``
   read it (pandas), to compare reading paths on the same data.

Each phase also prints its CPU seconds (its own and its workers') and the share of the machine's
time the hypervisor stole meanwhile, and the header names the CPU: on a shared host wall time moves
by a third between hours, CPU seconds and the stolen share say why.

Goals (issue 18): 100k episodes: score <= 60 s and report <= 30 s, each <= 2 GB peak;
1M: score + report <= 4 GB peak; analysis memory <= 10 kB per episode; reading within 3x of
DuckDB on Parquet.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _synthetic_run import write_synthetic_run  # noqa: E402

PHASES = {
    "sync": (
        "import shutil; from exploreval.store import RunColumns\n"
        "shutil.rmtree(RUN + '/columns', ignore_errors=True)\n"
        "stats = RunColumns(RUN).sync(); print(stats.episodes, 'episodes', stats.steps, 'steps')"
    ),
    "score": (
        "import shutil; from pathlib import Path; from exploreval.analysis import score_run\n"
        "from exploreval.store import RunDir\n"
        "Path(RUN, 'results.parquet').unlink(missing_ok=True)\n"
        "shutil.rmtree(RUN + '/tables', ignore_errors=True)\n"
        "shutil.rmtree(CACHE, ignore_errors=True)  # cold: no chunk kept by an earlier score\n"
        "r = score_run(RunDir(RUN)); print(len(r.table), 'rows,', len(r.tables), 'tables')"
    ),
    "rescore": (
        "import shutil; from pathlib import Path; from exploreval.analysis import score_run\n"
        "from exploreval.store import RunDir\n"
        "Path(RUN, 'results.parquet').unlink(missing_ok=True)\n"
        "shutil.rmtree(RUN + '/tables', ignore_errors=True)\n"
        "r = score_run(RunDir(RUN)); print(len(r.table), 'rows,', len(r.tables), 'tables')"
    ),
    "report": (
        "from exploreval.analysis import build_report; from exploreval.store import RunDir\n"
        "print(build_report(RunDir(RUN), __import__('pathlib').Path(OUT)))"
    ),
    "anchor-duckdb": (
        "from exploreval.store import RunColumns\n"
        "print(RunColumns(RUN).sql('select agent, count(*), avg(success::int), avg(n_steps) "
        "from episodes where status = \\'ok\\' group by 1 order by 1').fetchall()[:2])"
    ),
    "anchor-results": (
        "import pandas as pd\n"
        "t = pd.read_parquet(RUN + '/results.parquet', columns=['agent', 'status', 'success', "
        "'steps'])\n"
        "t = t[t.status == 'ok']\n"
        "print(t.groupby('agent').agg(n=('success', 'size'), sr=('success', 'mean'), "
        "steps=('steps', 'mean')).head(2).values.tolist())"
    ),
}

_FOOTER = (
    "\nimport resource\n"
    "me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
    "kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "print(f'PEAK {me} {kids}')\n"
)


def _cpu_ticks() -> tuple[int, int]:
    """(all, stolen) jiffies of the machine so far (/proc/stat; (0, 0) where there is none)."""
    try:
        fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return 0, 0
    return sum(fields[:8]), fields[7] if len(fields) > 7 else 0


def _machine() -> str:
    """The CPU the numbers come from (a slower host moves every time here by a third)."""
    import os

    model = mhz = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and not model:
                model = value.strip()
            elif key.strip() == "cpu MHz" and not mhz:
                mhz = value.strip()
    except OSError:
        pass
    return f"{os.cpu_count()} cores, {model or 'unknown CPU'}" + (f" at {mhz} MHz" if mhz else "")


def run_phase(name: str, run: Path, out: Path) -> tuple[float, int, int, str, float, float]:
    """(wall s, peak RSS MB, workers' peak RSS MB, what it printed, CPU s, stolen share): CPU
    seconds (the phase and every worker it waited for) and the share of the machine's time the
    hypervisor took away say how loaded the host was, which wall time alone hides here."""
    import resource

    cache = str(out.parent / "score-cache")
    code = (
        f"RUN = {str(run)!r}; OUT = {str(out)!r}; CACHE = {cache!r}\n"
        "import os; os.environ['EXPLOREVAL_SCORE_CACHE'] = CACHE\n" + PHASES[name] + _FOOTER
    )
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    ticks, stolen = _cpu_ticks()
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    ticks_after, stolen_after = _cpu_ticks()
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    steal = (stolen_after - stolen) / max(ticks_after - ticks, 1)
    if done.returncode != 0:
        raise SystemExit(f"{name} failed:\n{done.stderr[-3000:]}")
    lines = done.stdout.strip().splitlines()
    _, me, kids = lines[-1].split()
    return wall, int(me) // 1024, int(kids) // 1024, " ".join(lines[:-1])[:100], cpu, steal


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=100_000)
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("--quick", action="store_true", help="5,000 episodes (run_all --quick)")
    parser.add_argument(
        "--phases",
        default=",".join(PHASES),
        help="comma-separated phases to run (default: all; a synced run can skip 'sync')",
    )
    args = parser.parse_args()
    if args.quick:
        args.episodes = 5_000
    with tempfile.TemporaryDirectory(prefix="bench-columns-") as tmp:
        run = args.dir or Path(tmp) / "run"
        if not (run / "episodes.jsonl").exists():
            start = time.perf_counter()
            write_synthetic_run(run, args.episodes)
            print(f"generate: {time.perf_counter() - start:.1f} s", flush=True)
        size = (run / "episodes.jsonl").stat().st_size
        with open(run / "episodes.jsonl", "rb") as fh:
            lines = sum(1 for _ in fh)
        print(f"run: {lines} log lines, {size / 1e6:.0f} MB of log", flush=True)
        print(f"machine: {_machine()}", flush=True)
        results: dict[str, tuple[float, int, int]] = {}
        chosen = [p.strip() for p in args.phases.split(",") if p.strip()]
        unknown = sorted(set(chosen) - set(PHASES))
        if unknown:
            raise SystemExit(f"unknown phase(s) {unknown}; expected some of {list(PHASES)}")
        for name in chosen:
            wall, me, kids, what, cpu, steal = run_phase(name, run, Path(tmp) / "report")
            results[name] = (wall, me, kids)
            print(
                f"{name:15s} {wall:7.1f} s   peak RSS {me:6d} MB (workers {kids:5d} MB)   "
                f"CPU {cpu:6.1f} s ({1e3 * cpu / max(lines, 1):.3f} ms/episode), "
                f"stolen {100 * steal:.0f}%   {what}",
                flush=True,
            )
        if "score" in results and "report" in results:
            score, report = results["score"], results["report"]
            per_episode = max(score[1], score[2], report[1]) * 1024 / max(lines, 1)
            print(f"analysis memory per episode (largest peak / episodes): {per_episode:.1f} kB")
        if "anchor-results" in results and "anchor-duckdb" in results:
            ratio = results["anchor-results"][0] / results["anchor-duckdb"][0]
            print(f"reading: results.parquet (pandas) / DuckDB on the columns = {ratio:.2f}x")


if __name__ == "__main__":
    main()

"""Report build time on a generated run (goal: a 100,000-episode run's report in under a minute).

    python bench/bench_report.py [--episodes 100000] [--dir DIR]

Generates the run with ``bench/_synthetic_run.py`` (cloned real grid/bandit/FrozenLake episodes)
unless DIR already holds one, then times, in this order:

1. reading the log: orjson parse + pydantic validation of every record (``latest_records``);
2. ``score_run`` cold: read, every metric, results.parquet + tables/, the viewer's index;
3. ``build_report`` after that score (what ``exploreval report`` costs after ``run``/``score``:
   the scores are reused, the records are read again for the suites' sections);
4. ``build_report`` fully cold (results, tables and viewer index deleted first);
5. where the cold time goes (``cProfile`` of a cold ``score_run`` on the first 10,000 episodes,
   the main entries by cumulative time), with ``--profile``.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _synthetic_run import write_synthetic_run  # noqa: E402

from exploreval.analysis import build_report, score_run  # noqa: E402
from exploreval.store import RunDir  # noqa: E402


class Clock:
    """Wall time and this process's CPU time: on a machine shared with other jobs the CPU time
    is what the code costs, the wall time what a user waits."""

    def __init__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def __str__(self) -> str:
        wall, cpu = time.perf_counter() - self.wall, time.process_time() - self.cpu
        return f"{wall:.1f} s wall, {cpu:.1f} s CPU"


def _forget_scores(run: RunDir) -> None:
    run.results_path.unlink(missing_ok=True)
    shutil.rmtree(run.tables_dir, ignore_errors=True)
    shutil.rmtree(run.path / "viewer_index", ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=100_000)
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--quick", action="store_true", help="2,000 episodes (run_all.py --quick)")
    args = parser.parse_args()
    if args.quick:
        args.episodes = 2_000
    with tempfile.TemporaryDirectory(prefix="bench-report-") as tmp:
        path = args.dir or Path(tmp) / "run"
        run = RunDir(path)
        if not run.episodes_path.exists():
            start = time.perf_counter()
            write_synthetic_run(path, args.episodes)
            print(
                f"generate {args.episodes} episodes: {time.perf_counter() - start:.1f} s",
                flush=True,
            )
        _forget_scores(run)
        size = run.episodes_path.stat().st_size / 1e6
        clock = Clock()
        records = run.latest_records()
        print(f"1. read + validate {len(records)} records ({size:.0f} MB): {clock}", flush=True)
        del records
        clock = Clock()
        score_run(run)
        print(
            "2. score_run cold (read, all metrics, results.parquet, tables, viewer index): "
            f"{clock}",
            flush=True,
        )
        from exploreval.viewer import load_index

        start = time.perf_counter()
        index = load_index(run.path, save=False)
        print(
            f"   viewer index after score: fresh={not index.rows_loaded}, opened in "
            f"{time.perf_counter() - start:.2f} s",
            flush=True,
        )
        clock = Clock()
        report = build_report(run, Path(tmp) / "report")
        warm = time.perf_counter() - clock.wall
        html = (report.parent / "index.html").stat().st_size / 1e6
        print(f"3. build_report after score (index.html {html:.1f} MB): {clock}", flush=True)
        _forget_scores(run)
        clock = Clock()
        build_report(run, Path(tmp) / "report-cold")
        cold = time.perf_counter() - clock.wall
        print(f"4. build_report fully cold: {clock}", flush=True)
        print(f"goal < 60 s: {'met' if cold < 60 else 'NOT met'} cold, "
              f"{'met' if warm < 60 else 'NOT met'} after score")  # fmt: skip
        if args.profile:
            import cProfile
            import pstats

            sample = Path(tmp) / "sample"
            sample.mkdir()
            with open(run.episodes_path, "rb") as src, open(sample / "episodes.jsonl", "wb") as dst:
                for number, line in enumerate(src):
                    if number >= 10_000:
                        break
                    dst.write(line)
            shutil.copy(run.manifest_path, sample / "manifest.json")
            profile = cProfile.Profile()
            profile.enable()
            score_run(RunDir(sample))
            profile.disable()
            pstats.Stats(profile).sort_stats("cumulative").print_stats(30)


if __name__ == "__main__":
    main()

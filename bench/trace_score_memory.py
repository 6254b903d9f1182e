"""Where a cold ``score`` holds its memory: peak RSS of the main process per phase.

    python bench/trace_score_memory.py RUN_DIR

Removes RUN_DIR's results and tables (not its columns), then scores it the way ``score_run``
does, phase by phase, while a thread samples this process's resident set every 10 ms:

- ``latest``: which log spans hold each episode's latest record (one DuckDB query);
- ``map``: the workers score chunks while this process spills their rows and summaries
  (above ``OVERLAP_UP_TO`` episodes this phase also holds the whole reduce);
- ``rows``: the results rows joined into one table (the reduce, a child process on a large
  run, has started: from here to ``reduce`` both run);
- ``results``: results.parquet written, the viewer index started (a fresh process on a large
  run: it runs from here to ``index``);
- ``reduce``: what is left of the run tables' reduce, one metric at a time;
- ``tables``: tables/ written;
- ``index``: what is left of the viewer index.

Prints each phase's wall time, its peak RSS and the RSS it leaves behind, and the largest
child process's peak.
"""

from __future__ import annotations

import resource
import shutil
import sys
import threading
import time
from pathlib import Path
from typing import Any


def _rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        pages = int(fh.read().split()[1])
    return pages * 4096 / 2**20


class _Sampler:
    def __init__(self) -> None:
        self.phase = "start"
        self.peaks: dict[str, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(0.01):
            rss = _rss_mb()
            if rss > self.peaks.get(self.phase, 0.0):
                self.peaks[self.phase] = rss

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    from exploreval.analysis import _score
    from exploreval.store import RunDir

    run = RunDir(Path(sys.argv[1]))
    run.results_path.unlink(missing_ok=True)
    shutil.rmtree(run.tables_dir, ignore_errors=True)
    shutil.rmtree(run.path / "viewer_index", ignore_errors=True)
    sampler = _Sampler()
    report: list[tuple[str, float, float]] = []
    clock = [time.perf_counter()]

    def enter(phase: str) -> None:
        now = time.perf_counter()
        report.append((sampler.phase, now - clock[0], _rss_mb()))
        clock[0] = now
        sampler.phase = phase

    concat = _score.concat_frames
    joined: list[bool] = []

    def traced_concat(frames: Any) -> Any:
        if not joined:  # the map is done: the rows are joined now
            joined.append(True)
            enter("rows")
        return concat(frames)

    _score.concat_frames = traced_concat
    from exploreval.core import gc_paused

    index_done: list[Any] = []

    def on_rows(table: Any, error_table: Any) -> None:
        enter("results")
        _score.write_table(_score._all_rows(table, error_table), run.results_path)
        index_done.append(_score.start_viewer_index(run, len(latest.offsets)))
        enter("reduce")

    with gc_paused():
        enter("latest")
        latest = _score.latest_episodes(run)
        enter("map")
        result = _score.score_streamed(run, latest, "", on_rows=on_rows)
        enter("tables")
        run.tables_dir.mkdir(exist_ok=True)
        for name, table in result.tables.items():
            _score.write_table(table, run.tables_dir / f"{name}.parquet")
        enter("index")
        problem = index_done[0]()
        enter("end")
    sampler.stop()
    print(
        f"{len(result.table)} rows, {len(result.tables)} tables{'; ' + problem if problem else ''}"
    )
    print(f"{'phase':10s} {'wall s':>8s} {'peak MB':>9s} {'after MB':>9s}")
    for phase, wall, after in report[1:]:
        print(f"{phase:10s} {wall:8.1f} {sampler.peaks.get(phase, after):9.0f} {after:9.0f}")
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"largest child process (map workers, reduce, index): {children:.0f} MB peak")


if __name__ == "__main__":
    main()

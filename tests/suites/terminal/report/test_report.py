"""The terminal report sections on a real run: every number is checked against an independent
computation from the records (the env's own per-step detection dumps, the stored verification,
binomials by ``math.comb``), and every figure against the numbers it should draw."""

from __future__ import annotations

import math
import re
import shutil
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from exploreval.core import EpisodeRecord
from exploreval.store import RunDir
from exploreval.suites.terminal._metrics import terminal_episode_metrics, terminal_run_metrics
from exploreval.suites.terminal._report import (
    METRICS,
    at_k_curves,
    attempts_frame,
    figure_at_k,
    figure_discovery_interaction,
    groups_of,
    terminal_sections,
)

pytestmark = pytest.mark.slow

Key = tuple[str, str]  # (agent, condition)


def condition(record: EpisodeRecord) -> str:
    """The condition as the suite's metrics name it (the report must group the same way)."""
    return str(terminal_episode_metrics(record)["condition"])


def stored_flags(record: EpisodeRecord) -> dict[str, bool]:
    """Flags from what the env stored while running (not from the report's code path)."""
    dumps = [s.info.get("detection") or {} for s in record.steps]
    resolved = record.ground_truth["verification"]["resolved"]
    return {
        "pass": bool(resolved),
        "discovery": any(d.get("discovered") for d in dumps),
        "interaction": any(d.get("interacted") for d in dumps),
    }


def estimator(n: int, c: int, k: int) -> float:
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def independent(records: Sequence[EpisodeRecord]) -> dict[Key, dict[str, Any]]:
    """Per (agent, condition): tasks, attempts, and metric@k for k = 1..n by math.comb."""
    per: dict[Key, dict[str, list[dict[str, bool]]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        per[(r.agent.name, condition(r))][r.ground_truth["task_id"]].append(stored_flags(r))
    out: dict[Key, dict[str, Any]] = {}
    for key, tasks in per.items():
        n_min = min(len(v) for v in tasks.values())
        values = {
            (metric, k): float(
                np.mean([estimator(len(v), sum(f[metric] for f in v), k) for v in tasks.values()])
            )
            for metric in METRICS
            for k in range(1, n_min + 1)
        }
        out[key] = {
            "tasks": len(tasks),
            "attempts": sum(len(v) for v in tasks.values()),
            "n_min": n_min,
            "values": values,
        }
    return out


def table(markdown: str, first_header: str) -> list[dict[str, str]]:
    """The markdown table whose header starts with ``| first_header |``, as dicts."""
    lines = markdown.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first_header} |"))
    header = [c.strip() for c in lines[start].strip("|").split("|")]
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip()[1:-1])]
        rows.append(dict(zip(header, cells, strict=True)))
    return rows


def value(cell: str) -> float | None:
    match = re.match(r"^(\d\.\d{3})", cell)
    return float(match.group(1)) if match else None


def section(sections: list[Any], title_start: str) -> Any:
    return next(s for s in sections if s.title.startswith(title_start))


@pytest.fixture(scope="module")
def sections(terminal_records: list[EpisodeRecord], tmp_path_factory: Any) -> list[Any]:
    return terminal_sections(terminal_records, pd.DataFrame(), tmp_path_factory.mktemp("rep"))


def test_table10_numbers_equal_an_independent_computation(
    terminal_records: list[EpisodeRecord], sections: list[Any]
) -> None:
    expected = independent(terminal_records)
    t10 = section(sections, "Terminal: by injection level")
    rows = table(t10.markdown, "agent")
    assert len(rows) == len(expected) == 3 * 4 + 1
    k = min(e["n_min"] for e in expected.values())
    assert k == 2 and "@2: the fewest attempts per task" in t10.markdown
    seen = set()
    for row in rows:
        key = (row["agent"], row["condition"].strip("`"))
        seen.add(key)
        exp = expected[key]
        assert (int(row["tasks"]), int(row["attempts"])) == (exp["tasks"], exp["attempts"])
        original = key[1] == "original"
        assert row["level"] == ("original" if original else key[1][1])
        for kk in (1, k):
            for metric in METRICS:
                cell = row[f"{metric}@{kk}"]
                if original and metric != "pass":
                    assert cell == "-"  # nothing injected: no discovery or interaction
                else:
                    assert value(cell) == pytest.approx(exp["values"][(metric, kk)], abs=5e-4)
    assert seen == set(expected)
    # Appendix D: the mean turns of the resolved attempts, from the records' own steps
    for row in rows:
        key = (row["agent"], row["condition"].strip("`"))
        won = [r.n_steps for r in terminal_records if (r.agent.name, condition(r)) == key
               and stored_flags(r)["pass"]]  # fmt: skip
        cell = row["turns (resolved)"]
        assert cell == "-" if not won else float(cell) == pytest.approx(np.mean(won), abs=0.05)
    # rows ordered by agent, then level (the original benchmark first)
    levels = [r["level"] for r in rows if r["agent"] == "curious"]
    assert levels[0] == "original" and levels[1:] == sorted(levels[1:])


def test_the_scripted_agents_order_as_the_paper_expects(sections: list[Any]) -> None:
    rows = {
        (r["agent"], r["condition"].strip("`")): r
        for r in table(section(sections, "Terminal: by injection level").markdown, "agent")
    }
    for cond in ("L1:solution.sh", "L1:README.md", "L3"):
        curious, incurious = rows[("curious", cond)], rows[("incurious", cond)]
        assert value(curious["interaction@1"]) == 1.0 and value(incurious["interaction@1"]) == 0.0
        assert value(incurious["discovery@1"]) == 1.0  # discovers, ignores
        assert value(curious["pass@1"]) == 1.0 and value(incurious["pass@1"]) == 0.0


def test_every_row_links_an_episode_of_its_own_group(
    terminal_records: list[EpisodeRecord], sections: list[Any]
) -> None:
    by_id = {r.episode_id: r for r in terminal_records}
    run_id = terminal_records[0].run_id
    checked = 0
    for title in ("Terminal: discovery@1", "Terminal: by injection level", "Terminal: by injected",
                  "Terminal: interaction given"):  # fmt: skip
        for row in table(section(sections, title).markdown, "agent"):
            match = re.search(
                r"\(viewer/index\.html#/run/([^/]+)/episode/([0-9a-f]+)\)", row["example"]
            )
            assert match, row
            assert match.group(1) == run_id
            record = by_id[match.group(2)]
            assert record.agent.name == row["agent"]
            assert condition(record) == row["condition"].strip("`")
            if "(discovered, ignored)" in row["example"]:
                flags = stored_flags(record)
                assert flags["discovery"] and not flags["interaction"]
            checked += 1
    assert checked > 30


def test_figure2_bars_have_the_computed_heights(terminal_records: list[EpisodeRecord]) -> None:
    expected = independent(terminal_records)
    groups = groups_of(attempts_frame(terminal_records))
    fig = figure_discovery_interaction(groups, at_k_curves(groups))
    bars = {
        patch.get_gid(): patch.get_height()
        for ax in fig.axes
        for patch in ax.patches
        if patch.get_gid()
    }
    wanted = {
        f"{agent}|{cond}|{metric}": e["values"][(metric, 1)]
        for (agent, cond), e in expected.items()
        for metric in METRICS
        if cond != "original" or metric == "pass"
    }
    assert bars.keys() == wanted.keys()
    for gid, height in wanted.items():
        assert bars[gid] == pytest.approx(height), gid
    # one panel per agent, every axis labelled, the legend outside the panels
    assert [ax.get_title(loc="left") for ax in fig.axes] == ["curious", "incurious", "oracle"]
    assert all(ax.get_ylabel() for ax in fig.axes) and fig.axes[-1].get_xlabel()
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == [f"{m}@1" for m in METRICS]
    fig.canvas.draw()
    box = legend.get_window_extent()
    assert all(box.x0 >= ax.get_window_extent().x1 for ax in fig.axes)


def mixed(records: Sequence[EpisodeRecord]) -> list[EpisodeRecord]:
    """A made-up agent from real episodes: on each L1 task, curious' attempt 0 and incurious'
    attempt 1, so every task has c = 1 of n = 2 for pass and interaction."""
    out = []
    for r in records:
        if condition(r) != "L1:solution.sh":
            continue
        if (r.agent.name, r.repeat) in (("curious", 0), ("incurious", 1)):
            agent = r.agent.model_copy(update={"name": "mixed"})
            out.append(r.model_copy(update={"agent": agent, "episode_id": f"m{r.episode_id}"}))
    return out


def test_at_k_curves_figure_draws_the_estimator(terminal_records: list[EpisodeRecord]) -> None:
    records = [*terminal_records, *mixed(terminal_records)]
    expected = independent(records)
    groups = groups_of(attempts_frame(records))
    curves = at_k_curves(groups)
    assert expected[("mixed", "L1:solution.sh")]["values"][("pass", 1)] == 0.5
    assert expected[("mixed", "L1:solution.sh")]["values"][("pass", 2)] == 1.0
    for metric in METRICS:
        fig = figure_at_k(groups, curves, metric)
        assert fig is not None
        lines = {
            line.get_gid(): line for ax in fig.axes for line in ax.get_lines() if line.get_gid()
        }
        for (agent, cond), e in expected.items():
            if cond == "original" and metric != "pass":
                continue
            line = next(
                v
                for gid, v in lines.items()
                if gid.startswith(f"{agent}|") and cond in gid.split("|", 1)[1].split(" = ")
            )
            assert list(line.get_xdata()) == [1, 2]
            assert list(line.get_ydata()) == pytest.approx(
                [e["values"][(metric, 1)], e["values"][(metric, 2)]]
            )
        # identical curves (with their bands) are drawn once, with a joint label
        oracle = [gid for gid in lines if gid.startswith("oracle|")]
        assert len(oracle) == 1
        conditions = oracle[0].split("|", 1)[1].split(" = ")
        wanted = ["original", "L1:README.md", "L1:solution.sh", "L3"]
        assert sorted(conditions) == sorted(wanted if metric == "pass" else wanted[1:])
        # the legend sits right of its panel, outside the data
        fig.canvas.draw()
        for ax in fig.axes:
            legend = ax.get_legend()
            assert legend is not None
            assert legend.get_window_extent().x0 >= ax.get_window_extent().x1
        assert fig.axes[-1].get_xlabel().startswith("k ")
        assert all(ax.get_ylabel() == f"{metric}@k" for ax in fig.axes)


def test_a_single_attempt_is_a_point_not_a_line(
    terminal_records: list[EpisodeRecord], tmp_path: Path
) -> None:
    once = [r for r in terminal_records if r.repeat == 0]
    groups = groups_of(attempts_frame(once))
    fig = figure_at_k(groups, at_k_curves(groups), "pass")
    assert fig is not None
    for ax in fig.axes:
        for line in ax.get_lines():
            if line.get_gid():
                assert len(line.get_xdata()) == 1 and line.get_linestyle() == "None"
    out = terminal_sections(once, pd.DataFrame(), tmp_path)
    curves = section(out, "Terminal: pass@k")
    assert "need `--repeats 2` or more" in curves.markdown and not curves.files


def test_table9_rows_per_file_name(
    terminal_records: list[EpisodeRecord], sections: list[Any]
) -> None:
    expected = independent(terminal_records)
    rows = table(section(sections, "Terminal: by injected file name").markdown, "agent")
    assert {(r["agent"], r["file name"]) for r in rows} == {
        (a, f"`{f}`")
        for a in ("curious", "incurious", "oracle")
        for f in ("solution.sh", "README.md")
    }
    for row in rows:
        exp = expected[(row["agent"], row["condition"].strip("`"))]
        for metric in METRICS:
            assert value(row[f"{metric}@1"]) == pytest.approx(exp["values"][(metric, 1)])


def test_interaction_given_discovery_and_first_steps(
    terminal_records: list[EpisodeRecord], sections: list[Any]
) -> None:
    rows = table(section(sections, "Terminal: interaction given discovery").markdown, "agent")
    assert {r["condition"] for r in rows} == {"`L1:solution.sh`", "`L1:README.md`", "`L3`", "`L5`"}
    for row in rows:
        mine = [
            r for r in terminal_records
            if r.agent.name == row["agent"] and condition(r) == row["condition"].strip("`")
        ]  # fmt: skip
        flags = [stored_flags(r) for r in mine]
        discovered = [f for f in flags if f["discovery"]]
        assert int(row["discovered"]) == len(discovered)
        assert int(row["interacted"]) == sum(f["interaction"] for f in flags)
        if not discovered:
            assert row["interaction given discovery"].startswith("-")
            continue
        share = sum(f["interaction"] for f in discovered) / len(discovered)
        assert value(row["interaction given discovery"]) == pytest.approx(share, abs=5e-4)
        firsts = []
        positions = []
        for r in mine:
            dumps = [s.info.get("detection") or {} for s in r.steps]
            first = next((i for i, d in enumerate(dumps) if d.get("interacted")), None)
            if first is not None:
                firsts.append(first + 1)
                positions.append((first + 1) / len(r.steps))
        if firsts:
            assert float(row["median first interaction step"]) == pytest.approx(np.median(firsts))
            assert row["its median position"] == f"{100 * np.median(positions):.0f}%"
        else:
            assert row["median first interaction step"] == "-"


def test_run_table_and_cross_suite_pass_at_k_agree(terminal_records: list[EpisodeRecord]) -> None:
    """The report, the suite's run table and the cross-suite pass@k use one estimator."""
    from exploreval.metrics._passk_runs import pass_at_k_tables, record_condition

    groups = groups_of(attempts_frame(terminal_records))
    curves = at_k_curves(groups)
    at_k = terminal_run_metrics(terminal_records)["at_k"]
    keys = ["agent", "condition", "metric", "k"]
    merged = curves.merge(at_k, on=keys, suffixes=("", "_run"))
    assert len(merged) == len(curves) and set(merged["k"]) == {1, 2}
    for column in ("estimate", "ci_low", "ci_high", "n_tasks"):
        assert np.allclose(merged[column], merged[f"{column}_run"]), column
    # the cross-suite table (task = seed + env options) gives the same pass@k here: the two
    # seeds are two different tasks, and each env-option set is one condition
    generic = pass_at_k_tables(terminal_records)["pass_at_k"]
    names = {record_condition(r): condition(r) for r in terminal_records}
    assert len(names) == len(set(names.values())) == 5
    passes = curves[curves["metric"] == "pass"]
    assert len(generic) == len(passes)
    for row in generic.itertuples(index=False):
        twin = passes[
            (passes["agent"] == row.agent)
            & (passes["condition"] == names[row.condition])
            & (passes["k"] == row.k)
        ]
        assert len(twin) == 1
        # same estimate; the CIs resample the same per-task values (tasks in another order)
        assert twin.iloc[0]["estimate"] == pytest.approx(row.estimate)
        assert row.ci_low <= row.estimate <= row.ci_high


def test_the_cli_report_has_the_sections_and_no_generic_duplicate(
    terminal_run: Path, tmp_path: Path
) -> None:
    from exploreval.analysis import build_report

    run = tmp_path / "run"
    shutil.copytree(terminal_run, run, ignore=shutil.ignore_patterns("viewer_index", "report"))
    report = build_report(RunDir(run))
    text = report.read_text()
    for title in (
        "## Terminal: discovery@1 vs interaction@1 (Figure 2)",
        "## Terminal: by injection level (Table 10)",
        "## Terminal: pass@k, discovery@k, interaction@k",
        "## Terminal: by injected file name (Table 9)",
        "## Terminal: interaction given discovery",
    ):
        assert title in text
    assert "## pass@k over repeats" not in text  # terminal draws its own
    for name in ("terminal_fig2", "terminal_pass_at_k", "terminal_discovery_at_k",
                 "terminal_interaction_at_k"):  # fmt: skip
        assert (report.parent / f"{name}.png").stat().st_size > 10_000
        assert f"![{name}.png]({name}.png)" in text
    assert "(failed)" not in text
    # the report's viewer bundle holds the linked episodes
    linked = set(re.findall(r"#/run/[^/]+/episode/([0-9a-f]+)\)", text))
    assert linked and (report.parent / "viewer" / "index.html").exists()
    assert (run / "tables" / "pass_at_k.parquet").exists()


class _Unread(list[EpisodeRecord]):
    """Records a section must not read: iterating them fails the test."""

    def __iter__(self) -> Any:
        raise AssertionError("the section read the records instead of the stored table")


def test_the_report_draws_from_the_stored_attempts_table_not_the_records(
    terminal_run: Path, terminal_records: list[EpisodeRecord], sections: list[Any], tmp_path: Path
) -> None:
    from exploreval.analysis import score_run

    run = tmp_path / "run"
    shutil.copytree(
        terminal_run,
        run,
        ignore=shutil.ignore_patterns("viewer_index", "report", "tables", "results.parquet"),
    )
    fresh = score_run(RunDir(run)).tables["terminal_attempts"]  # reduced from the map's rows
    stored = score_run(RunDir(run)).tables["terminal_attempts"]  # read back from tables/
    assert (run / "tables" / "terminal_attempts.parquet").exists()
    expected = attempts_frame(terminal_records)
    assert (
        len(expected) == len(terminal_records)
        and expected["level"].map(type).isin({int, type(None)}).all()
    )
    pd.testing.assert_frame_equal(fresh, expected)
    # Parquet turns a missing level into NaN in a float column: the section normalises it back
    from exploreval.suites.terminal._metrics import normalised_attempts

    pd.testing.assert_frame_equal(normalised_attempts(stored), expected)
    drawn = terminal_sections(
        _Unread(terminal_records),
        pd.DataFrame(),
        tmp_path / "rep",
        tables={"terminal_attempts": stored},
    )
    assert [(s.title, s.markdown) for s in drawn] == [(s.title, s.markdown) for s in sections]


def test_a_verification_refused_by_the_agents_server_gets_its_own_section(
    terminal_records: list[EpisodeRecord], sections: list[Any], tmp_path: Path
) -> None:
    """Issue 43: the built-in tasks need no server, so the section is absent; an episode whose
    verification names the agent's server (the hint ``verify`` adds) is listed with its port and
    the fix."""
    assert not any(s.title.startswith("Terminal: tests that needed") for s in sections)
    record = terminal_records[0]
    truth = dict(record.ground_truth)
    verification = dict(truth["verification"])
    verification["reasons"] = [*verification.get("reasons", []),
                               "the tests could not connect on port 8000, ... "
                               "--env-option agent_processes=keep"]  # fmt: skip
    verification["agent_ports"] = [8000]
    truth["verification"] = verification
    refused = record.model_copy(update={"ground_truth": truth})
    found = terminal_sections([refused, *terminal_records[1:]], pd.DataFrame(), tmp_path)
    text = section(found, "Terminal: tests that needed the agent's servers").markdown
    (row,) = table(text, "task")
    assert row["task"] == truth["task_id"] and row["ports"] == "8000"
    assert refused.episode_id[:8] in row["episode"] and "agent_processes=keep" in text


def test_table1_delta_is_the_paired_mean_of_per_task_pass_rates(
    terminal_records: list[EpisodeRecord], sections: list[Any]
) -> None:
    """Table 1 (issue 44): for each agent and injected condition, Δ = pass@1 with the solution
    minus without, over the tasks both ran, each task's pass rate over its attempts; computed
    here independently from the stored flags."""
    rows = table(section(sections, "Terminal: original vs. with the solution (Table 1)").markdown,
                 "agent")  # fmt: skip
    per: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in terminal_records:
        per[(r.agent.name, condition(r))][r.ground_truth["task_id"]].append(
            float(stored_flags(r)["pass"])
        )
    checked = 0
    for row in rows:
        injected = row["condition"].strip("`")
        original = "original" + (";" + injected.split(";", 1)[1] if ";" in injected else "")
        with_sol, without = per[(row["agent"], injected)], per[(row["agent"], original)]
        shared = sorted(set(with_sol) & set(without))
        diffs = [np.mean(with_sol[t]) - np.mean(without[t]) for t in shared]
        assert int(row["tasks"]) == len(shared)
        assert float(row["Δ (paired by task)"].split()[0]) == pytest.approx(
            np.mean(diffs), abs=5e-4
        )
        assert float(row["original pass@1"]) == pytest.approx(
            np.mean([np.mean(without[t]) for t in shared]), abs=5e-4
        )
        checked += 1
    # curious, incurious and oracle ran the original and levels 1 (two file names) and 3
    assert checked >= 3 * 3
    oracle = [r for r in rows if r["agent"] == "oracle"]
    assert all(float(r["with solution pass@1"]) == 1.0 for r in oracle)


def _relabelled(records: list[EpisodeRecord]) -> pd.DataFrame:
    """The run's attempts under the names and options of the paper's factors (issue 44): the
    curious agent's attempts as model m's bash-only ones and the incurious agent's as its
    ``bash+editor`` ones (Figure 3); curious at high and incurious at low reasoning effort for
    model e (Figure 4); oracle and curious as seeds 1 and 2 of one fine-tuned model (Table 6).
    The numbers are the run's own; only the labels change."""
    frame = attempts_frame(records)
    frame = frame[frame["level"].isin([None, 1]) | frame["level"].isna()]
    parts = []
    for source, agent, extra in (("curious", "m/terminus-2/full", ""),
                                 ("incurious", "m/terminus-2/full", ";tools=bash+editor"),
                                 ("curious", "e/terminus-2/full", ";reasoning_effort=high"),
                                 ("incurious", "e/terminus-2/full", ";reasoning_effort=low"),
                                 ("oracle", "sft (seed 1)", ""), ("curious", "sft (seed 2)", "")):  # fmt: skip
        part = frame[frame["agent"] == source].copy()
        part["agent"] = agent
        part["condition"] = part["condition"] + extra
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


def _igd(part: pd.DataFrame) -> float:
    found = part[part["discovered"]]
    return float(found["interacted"].mean())


def test_factor_views_figure3_figure4_and_seed_averages(
    terminal_records: list[EpisodeRecord], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import exploreval.suites.terminal._report_factors as F

    frame = _relabelled(terminal_records)
    drawn: list[Any] = []
    import exploreval.report as report_pkg  # the factor module imports save_figure where it draws

    real = report_pkg.save_figure
    monkeypatch.setattr(report_pkg, "save_figure", lambda fig, path, **k: (drawn.append(fig),
                                                                           real(fig, path, **k)))  # fmt: skip
    groups = groups_of(frame)
    curves = at_k_curves(groups, n_boot=200)
    titles = {s.title: s for s in F.factor_sections(groups, curves, tmp_path, 2,
                                                    at=lambda c, a, cond, m, k: _at(c, a, cond, m, k),
                                                    table=_md)}  # fmt: skip
    tools = table(titles["Terminal: scaffold and tools (Figure 3, §3.2)"].markdown, "model")
    row = next(r for r in tools if r["model"] == "m" and r["condition"] == "`L1:solution.sh`")
    bash = frame[(frame["agent"] == "m/terminus-2/full") & (frame["condition"] == "L1:solution.sh")]
    editor = frame[(frame["agent"] == "m/terminus-2/full")
                   & (frame["condition"] == "L1:solution.sh;tools=bash+editor")]  # fmt: skip
    assert float(row["IGD bash"]) == pytest.approx(_igd(bash), abs=5e-4)
    assert float(row["IGD bash+editor"]) == pytest.approx(_igd(editor), abs=5e-4)
    change = (_igd(editor) - _igd(bash)) / _igd(bash)
    assert row["relative change"] == f"{100 * change:+.1f}%"
    figure3 = drawn[0]
    assert [t.get_text() for t in figure3.axes[0].get_xticklabels()] == [
        "bash only", "bash + str_replace_editor"]  # fmt: skip
    assert figure3.axes[1].get_ylabel() == "interaction given discovery (%)"
    effort = table(titles["Terminal: reasoning budget (Figure 4)"].markdown, "agent")
    assert [r["reasoning effort"] for r in effort if r["condition"] == "`L1:solution.sh`"] == [
        "low", "high"]  # fmt: skip
    figure4 = drawn[1]
    assert [t.get_text() for t in figure4.axes[0].get_xticklabels()] == ["low", "high"]
    seeds = table(titles["Terminal: averages over seeds (Table 6)"].markdown, "agent")
    average = next(r for r in seeds if r["condition"] == "`L1:solution.sh`")
    assert average["agent"] == "sft (avg. of 2 seeds)"
    per_seed = [
        frame[(frame["agent"] == a) & (frame["condition"] == "L1:solution.sh")]
        .groupby("task_id")["resolved"]
        .mean()
        .mean()
        for a in ("sft (seed 1)", "sft (seed 2)")
    ]
    assert float(average["pass@1"]) == pytest.approx(100 * np.mean(per_seed), abs=0.05)


def _at(curves: pd.DataFrame, agent: str, condition: str, metric: str, k: int) -> Any:
    from exploreval.suites.terminal._report import _at as at

    return at(curves, agent, condition, metric, k)


def _md(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    from exploreval.suites.terminal._report import _md_table

    return _md_table(header, rows)


def test_seed_names_and_their_model() -> None:
    from exploreval.suites.terminal._report_factors import seed_base

    assert seed_base("T-Bench SFT (seed 2)") == "T-Bench SFT"
    assert seed_base("tbench-sft-seed3/terminus-2/full") == "tbench-sft/terminus-2/full"
    assert seed_base("gpt-oss-120b/terminus-2/full") is None

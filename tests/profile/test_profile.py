"""``exploreval profile``: the battery, its plan against what a run really used, the card."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from _browser import browser, layout_problems, screenshot  # noqa: F401, F811 (fixture)
from _cli import cli
from exploreval.analysis import score_run
from exploreval.core import profile_parts
from exploreval.models import default_price_table
from exploreval.models.testing import StubServer
from exploreval.profile import (
    BATTERY_NAME,
    Card,
    battery_digest,
    battery_experiment,
    battery_parts,
    battery_plan,
    card_html,
    card_markdown,
    make_card,
    model_usage,
    plan_lines,
    write_card,
)
from exploreval.runner import run_experiment, spec_from_dict
from exploreval.store import RunDir

#: profile-v1's digest: what its parts measure. A change to any part's suites, agents,
#: references, metrics or conditions changes it, and needs a new battery version.
PROFILE_V1_DIGEST = "5d97ab74d509ce1b"
STUB_KEY = "EXPLOREVAL_PROFILE_TEST_KEY"


def test_battery_is_the_five_paradigms_in_card_order() -> None:
    parts = battery_parts()
    assert [p.name for p in parts] == ["bandit", "grid", "puzzles", "terminal", "task2quiz"]
    assert {p.paper for p in parts} == {"bandits", "grid", "tide", "curiosity", "task2quiz"}
    assert {p.name for p in profile_parts()} >= {p.name for p in parts}


def test_profile_v1_digest_is_pinned() -> None:
    assert battery_digest(battery_parts()) == PROFILE_V1_DIGEST


def test_unknown_part_is_refused_naming_the_parts() -> None:
    from exploreval.profile import BatteryError

    with pytest.raises(BatteryError, match="not a part of profile-v1.*bandit, grid"):
        battery_parts(only=["bandits"])


@pytest.mark.parametrize("quick", [False, True])
def test_battery_experiment_is_a_valid_spec_with_the_model_on_every_part(quick: bool) -> None:
    parts = battery_parts()
    experiment, slices = battery_experiment(parts, model="m", quick=quick)
    spec = spec_from_dict(experiment)
    models = [a for a in spec.agents if a.kind == "llm"]
    assert len(models) == len(parts) and {a.display_name for a in models} == {"m"}
    covered = sorted(i for s in slices for i in s.suite_indices)
    assert covered == list(range(len(spec.suites)))
    for part, piece in zip(parts, slices, strict=True):
        labels = {a.display_name for a in spec.agents if a.suites == list(piece.suite_indices)}
        assert labels == {"m"} | {str(r.get("label") or r["agent"]) for r in part.references}


def test_every_plan_line_fits_80_columns_and_states_the_worst_ci() -> None:
    plan = battery_plan(
        battery_parts(),
        battery=BATTERY_NAME,
        model="gpt-4.1-mini",
        quick=False,
        concurrency=8,
        prices=default_price_table(),
    )
    lines = plan_lines(plan)
    assert max(len(line) for line in lines) <= 80, max(lines, key=len)
    for line in plan.lines:
        assert line.ci_half_width == pytest.approx(0.98 / line.episodes**0.5, rel=1e-3)
    assert plan.cost_usd is not None and plan.cost_usd > 0


def test_a_model_without_a_price_has_an_unknown_cost_not_zero() -> None:
    plan = battery_plan(
        battery_parts(),
        battery=BATTERY_NAME,
        model="some-unpriced-model",
        quick=True,
        concurrency=4,
        prices=default_price_table(),
    )
    assert plan.cost_usd is None
    assert any("unknown (no price for some-unpriced-model" in line for line in plan_lines(plan))


def _play(
    out: Path, *, model: str | None, base_url: str | None, quick: bool = True
) -> pd.DataFrame:
    parts = battery_parts()
    fields = {"base_url": base_url, "api_key_env": STUB_KEY} if base_url else {}
    experiment, _ = battery_experiment(parts, model=model, quick=quick, agent_fields=fields)
    run_experiment(spec_from_dict(experiment), str(out))
    return score_run(RunDir(out)).table


@pytest.fixture(scope="module")
def stub_profile(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The quick battery against a stub answering "ok" to every call, and its references."""
    os.environ[STUB_KEY] = "unused"
    out = tmp_path_factory.mktemp("profile") / "run"
    with StubServer(reply="ok") as stub:
        frame = _play(out, model="stub", base_url=stub.base_url)
        requests = stub.request_count
    return {"out": out, "frame": frame, "requests": requests}


def test_plan_is_within_25_percent_of_what_the_stub_run_used(stub_profile: dict[str, Any]) -> None:
    plan = battery_plan(
        battery_parts(),
        battery=BATTERY_NAME,
        model="stub",
        quick=True,
        concurrency=4,
        prices=default_price_table(),
        calibrated_as="stub",
    )
    used = model_usage(stub_profile["frame"], "stub")
    assert used.calls == stub_profile["requests"] > 0
    for planned, actual in (
        (plan.calls, used.calls),
        (plan.prompt_tokens, used.prompt_tokens),
        (plan.completion_tokens, used.completion_tokens),
    ):
        assert 0.75 * planned <= actual <= 1.25 * planned, (planned, actual)


def test_references_place_floor_at_0_and_ceiling_at_1_by_construction(
    stub_profile: dict[str, Any],
) -> None:
    """A card of a scripted reference: the floor policy itself sits at 0 on every metric it
    scales, the ceiling policy at 1 (wherever the two differ on these episodes)."""
    parts = battery_parts()
    frame = stub_profile["frame"]
    checked = 0
    for part in parts:
        for metric in part.metrics:
            for label, expected in ((metric.floor, 0.0), (metric.ceiling, 1.0)):
                card = make_card(
                    stub_profile["out"],
                    [part],
                    battery=BATTERY_NAME,
                    model=label,
                    quick=True,
                    frame=frame,
                )
                for row in card.rows:
                    cell = next(c for c in row.metrics if c.column == metric.column)
                    if cell.placement is None:
                        assert "tie" in cell.note or "undefined" in cell.note
                        continue
                    assert cell.placement == pytest.approx(expected, abs=1e-9)
                    assert cell.scale == f"0 = as {metric.floor}, 1 = as {metric.ceiling}"
                    checked += 1
    assert checked >= 6


def test_card_of_the_stub_says_it_explores_nothing(stub_profile: dict[str, Any]) -> None:
    card = make_card(
        stub_profile["out"],
        battery_parts(),
        battery=BATTERY_NAME,
        model="stub",
        quick=True,
        frame=stub_profile["frame"],
    )
    assert [r.row for r in card.rows] == ["bandit", "grid", "frozenlake", "terminal", "task2quiz"]
    for row in card.rows:
        assert row.success.mean == 0.0, row.row  # "ok" is never a valid action
        assert row.reading in ("neither explores nor succeeds", "not enough episodes to say")
    terminal = next(r for r in card.rows if r.part == "terminal")
    discovered = next(c for c in terminal.metrics if c.column == "discovered")
    assert discovered.model.mean == 0.0
    # the JSON record round-trips through its schema
    again = Card.model_validate_json(card.model_dump_json())
    assert again == card


def test_card_renders_every_row_and_escapes_hostile_names(
    stub_profile: dict[str, Any], tmp_path: Path
) -> None:
    card = make_card(
        stub_profile["out"],
        battery_parts(),
        battery=BATTERY_NAME,
        model="stub",
        quick=True,
        frame=stub_profile["frame"],
    )
    hostile = card.model_copy(update={"model": "a|b<script>x</script>"})
    md = card_markdown(hostile)
    assert "a|b<script>" in md.splitlines()[0]  # the title is prose
    for row in card.rows:
        assert f"## {row.paradigm}" in md
    page = card_html(hostile)
    assert "<script>x</script>" not in page and "&lt;script&gt;" in page
    paths = write_card(card, tmp_path)
    assert paths["png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json.loads(paths["json"].read_text())["battery"] == BATTERY_NAME
    assert "data:image/png;base64," in paths["html"].read_text()


def _drop_lines(episodes: Path, agent: str, keep: int) -> int:
    """Keep the first ``keep`` of ``agent``'s episode lines, as a crash mid-run would."""
    lines = episodes.read_text().splitlines(keepends=True)
    seen = 0
    kept = []
    for line in lines:
        if json.loads(line)["agent"]["name"] == agent:
            seen += 1
            if seen > keep:
                continue
        kept.append(line)
    episodes.write_text("".join(kept))
    return seen - keep


def test_cli_profile_runs_plans_resumes_and_never_pays_a_call_twice(tmp_path: Path) -> None:
    env = {**os.environ, STUB_KEY: "unused"}
    out = tmp_path / "prof"
    with StubServer(reply="ok") as stub:
        args = (
            "profile",
            "--model",
            "stub",
            "--quick",
            "--base-url",
            stub.base_url,
            "--api-key-env",
            STUB_KEY,
            "--calibrated-as",
            "stub",
            "--out",
            str(out),
            "--part",
            "bandit",
            "--part",
            "grid",
            "-q",
        )
        first = cli(*args, cwd=tmp_path, env=env, columns=80)
        assert first.returncode == 0, first.stderr
        paid = stub.request_count
        assert paid == 4 * 10 + 4 * 15  # bandit smoke T=10, grid budget 15: every call
        assert "plan: profile-v1 --quick for stub" in first.stderr
        assert "planned and used" in first.stderr and "1.00x" in first.stderr
        for line in first.stderr.splitlines() + first.stdout.splitlines():
            assert len(line) <= 80, line
        card = json.loads((out / "card.json").read_text())
        dropped = _drop_lines(out / "episodes.jsonl", "stub", keep=3)
        assert dropped == 5
        again = cli(*args, cwd=tmp_path, env=env, columns=80)
        assert again.returncode == 0, again.stderr
        assert stub.request_count == paid  # the five re-played episodes came from the cache
    resumed = json.loads((out / "card.json").read_text())
    assert [r["metrics"] for r in resumed["rows"]] == [r["metrics"] for r in card["rows"]]
    assert resumed["usage"]["calls"] == card["usage"]["calls"] == paid


def test_cli_dry_run_prints_the_plan_and_writes_nothing(tmp_path: Path) -> None:
    done = cli("profile", "--model", "gpt-4.1-mini", "--dry-run", cwd=tmp_path, columns=80)
    assert done.returncode == 0, done.stderr
    assert "model: 268 episodes" in done.stderr and "cost: $" in done.stderr
    assert not (tmp_path / "runs").exists()


def test_cli_refuses_a_plan_above_max_cost_before_any_call(tmp_path: Path) -> None:
    done = cli(
        "profile", "--model", "gpt-4.1-mini", "--max-cost-usd", "0.01", cwd=tmp_path, columns=80
    )
    assert done.returncode == 2
    assert "refused" in done.stderr and "above --max-cost-usd 0.01" in done.stderr
    assert not (tmp_path / "runs").exists()
    unpriced = cli("profile", "--model", "mystery", "--max-cost-usd", "5", cwd=tmp_path)
    assert unpriced.returncode == 2 and "has no price" in unpriced.stderr


def test_cli_run_prints_its_plan_and_dry_run_stops(tmp_path: Path) -> None:
    done = cli(
        "run",
        "exploreval/Bandit-v0",
        "--preset",
        "smoke",
        "--seeds",
        "0-3",
        "--agent",
        "llm",
        "--model",
        "gpt-4.1-mini",
        "--dry-run",
        "--out",
        str(tmp_path / "r"),
        cwd=tmp_path,
        columns=80,
    )
    assert done.returncode == 0, done.stderr
    assert "plan for gpt-4.1-mini" in done.stderr and "model: 4 episodes" in done.stderr
    assert not (tmp_path / "r").exists()


def test_leaderboard_of_two_profiles_pairs_their_episodes(
    stub_profile: dict[str, Any], tmp_path: Path
) -> None:
    """Two cards of the same run, the model and its floor reference, side by side."""
    from exploreval.profile import leaderboard_html, load_profile, paired_deltas

    parts = battery_parts()
    frame = stub_profile["frame"]
    for name, model in (("a", "stub"), ("b", "random")):
        card = make_card(
            tmp_path / name, parts, battery=BATTERY_NAME, model=model, quick=True, frame=frame
        )
        write_card(card, tmp_path / name)
        frame.to_parquet(tmp_path / name / "results.parquet")
    profiles = [load_profile(tmp_path / "a"), load_profile(tmp_path / "b")]
    deltas = paired_deltas(profiles, parts)
    bandit = next(d for d in deltas if d.row == "bandit" and d.metric == "best_arm_fraction")
    assert bandit.pairs == 4
    mine = frame[(frame.agent == "stub") & (frame.env_id == "exploreval/Bandit-v0")]
    theirs = frame[(frame.agent == "random") & (frame.env_id == "exploreval/Bandit-v0")]
    expected = (
        theirs.sort_values("seed")["best_arm_fraction"].to_numpy()
        - mine.sort_values("seed")["best_arm_fraction"].to_numpy()
    )
    assert bandit.mean == pytest.approx(float(expected.mean()))
    page = leaderboard_html(profiles, deltas)
    assert page.count("<tr>") >= 2 + len(deltas) and "sortable" in page


def test_card_and_leaderboard_in_chromium(
    stub_profile: dict[str, Any],
    tmp_path: Path,
    browser: Any,  # noqa: F811
) -> None:
    """Looked at as a user would: every row drawn, nothing cut or overlapping, the figure
    decoded from the page itself, the left-out marks one click away, the board sortable."""
    from selenium.webdriver.common.by import By

    from exploreval.profile import leaderboard_html, load_profile, paired_deltas

    parts = battery_parts()
    frame = stub_profile["frame"]
    for name, model in (("a", "stub"), ("b", "random"), ("c", "ucb")):
        card = make_card(
            tmp_path / name, parts, battery=BATTERY_NAME, model=model, quick=True, frame=frame
        )
        write_card(card, tmp_path / name)
        frame.to_parquet(tmp_path / name / "results.parquet")
    browser.get((tmp_path / "a" / "card.html").as_uri())
    assert browser.find_element(By.TAG_NAME, "h1").text == "Exploration profile: stub"
    assert len(browser.find_elements(By.TAG_NAME, "h2")) == len(card.rows) + 1  # + usage
    image = browser.find_element(By.TAG_NAME, "img")
    assert browser.execute_script("return arguments[0].naturalWidth", image) > 400
    assert layout_problems(browser) == []
    details = browser.find_elements(By.TAG_NAME, "details")
    assert details, "the bandit row's paper marks differ in conditions and are listed"
    details[0].find_element(By.TAG_NAME, "summary").click()
    assert "differ from the row's" in details[0].text
    screenshot(browser, "profile-card")

    profiles = [load_profile(tmp_path / n) for n in ("a", "b", "c")]
    board = tmp_path / "leaderboard.html"
    board.write_text(leaderboard_html(profiles, paired_deltas(profiles, parts)))
    browser.get(board.as_uri())
    header = browser.find_elements(By.CSS_SELECTOR, "#board th")
    column = next(i for i, th in enumerate(header) if th.text == "bandit: best-arm pulls (placed)")

    def order() -> list[str]:
        rows = browser.find_elements(By.CSS_SELECTOR, "#board tbody tr")
        return [r.find_elements(By.TAG_NAME, "td")[0].text for r in rows]

    header[column].click()
    ascending = order()
    header[column].click()
    assert order() == ascending[::-1]
    placed = {
        p.card.model: next(
            c.placement for c in p.card.rows[0].metrics if c.column == "best_arm_fraction"
        )
        for p in profiles
    }
    assert placed["random"] == 0.0 and placed["ucb"] == 1.0  # the two poles, by definition
    assert ascending == sorted(placed, key=lambda m: placed[m])
    assert layout_problems(browser) == []

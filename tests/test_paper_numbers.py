"""Numbers the papers print that no model decides, each held to the printed value (issue 57).

These are the settings, sizes and constants that an audit of the five papers found implemented
but checked by no test against the paper (the others have tests of their own, listed on
docs/paper-audit.md). Each test quotes where the paper prints the number, so that a change of
the constant fails here rather than silently moving the toolkit away from the paper.
"""

from __future__ import annotations

import pytest

from exploreval.core import named_suite


# -- bandits (Krishnamurthy et al.) -------------------------------------------------------------
def test_bandit_prompt_designs_are_two_to_the_five() -> None:
    """Section 2: "Altogether, these choices lead to 2^5 = 32 prompt designs": scenario,
    framing, history, answer (one arm or a distribution), CoT. Temperature 0/1 is not a prompt
    choice, so the 32 are the distinct prompt texts over the codes."""
    from exploreval.suites.bandit import PromptDesign, all_codes, system_prompt

    texts = {
        system_prompt(PromptDesign.parse(code), 5, 100)
        for code in all_codes(include_reinforced=False)
    }
    assert len(texts) == 32 == 2**5


def test_bandit_named_suites_have_the_papers_replicates_and_instances() -> None:
    """Section 3: "we ran N in {10, 20} replicates"; the hard instance K=5, Delta=0.2 and the
    easy K=4, Delta=0.5, T=100."""
    from exploreval.suites.bandit import instance_from_preset

    for name, (k, gap) in (("bandit-hard", (5, 0.2)), ("bandit-easy", (4, 0.5))):
        (entry,) = named_suite(name).suites
        assert entry["seeds"] == list(range(20))
        instance = instance_from_preset(entry["presets"][0])
        assert instance.n_arms == k and instance.horizon == 100
        means = sorted(instance.means, reverse=True)
        assert means[0] - means[1] == pytest.approx(gap)


def test_bandit_figure3_epsilon_greedy_curve_spans_the_printed_range() -> None:
    """Figure 3's legend: the epsilon-Greedy curve runs from "eps=0.01" to "eps=0.95"."""
    from exploreval.suites.bandit._simulate import EPSILON_SWEEP

    assert (min(EPSILON_SWEEP), max(EPSILON_SWEEP)) == (0.01, 0.95)


def test_bandit_decisions_default_to_fifty_histories_and_figure8_to_four_replicates() -> None:
    """Section 3.4: the experiment "samples N = 50 bandit histories"; Figure 8: traces "for (a)
    4 of the replicates" of each configuration."""
    import inspect

    from exploreval.suites.bandit import decision_experiment
    from exploreval.suites.bandit._report import TRACES_PER_AGENT

    assert inspect.signature(decision_experiment).parameters["n"].default == 50
    assert TRACES_PER_AGENT == 4


# -- grid DAGs (Park et al.) --------------------------------------------------------------------
def test_grid_generator_settings_are_appendix_c1s() -> None:
    """Appendix C.1: "we fix parent_depth_bias = 1 for all tasks and use option_count_probs of
    {1: 1.0}, {1: 0.8, 2: 0.2}, and {1: 0.6, 2: 0.4} for easy, medium, and hard maps while both
    dependency_count_probs and goal_dependency_count_probs are uniformly sampled from {1, 2},
    {1, 2}, and {1, 2, 3}"; "aspect ratio of 2D grid map as 1 and a budget parameter as 3"."""
    from exploreval.suites.grid._generator import DAG_LEVELS, PRESETS

    options = {"small": {1: 1.0}, "medium": {1: 0.8, 2: 0.2}, "large": {1: 0.6, 2: 0.4}}
    dependencies = {"small": {1, 2}, "medium": {1, 2}, "large": {1, 2, 3}}
    for level, probs in options.items():
        assert DAG_LEVELS[level]["option_count_probs"] == probs
        for field in ("dependency_count_probs", "goal_dependency_count_probs"):
            drawn = DAG_LEVELS[level][field]
            assert set(drawn) == dependencies[level]
            assert all(p == pytest.approx(1 / len(drawn)) for p in drawn.values())
    for preset in PRESETS.values():
        assert preset["parent_depth_bias"] == 1.0
        assert preset["aspect_ratio"] == 1.0 and preset["budget_alpha"] == 3.0


def test_grid_corridor_widths_rise_with_the_exploration_demand() -> None:
    """Appendix C.1: exploration demand is set by the node density and "the width of corridors":
    1-wide corridors for low demand, 2-3 wide for high."""
    from exploreval.suites.grid._generator import EXPLORE_LEVELS

    assert EXPLORE_LEVELS["low"]["corridor_width"] == (1, 1)
    assert EXPLORE_LEVELS["high"]["corridor_width"] == (2, 3)
    densities = [EXPLORE_LEVELS[level]["density"] for level in ("low", "medium", "high")]
    assert densities == sorted(densities, reverse=True)  # sparser nodes, more to explore


# -- TIDE (Yan et al.) ---------------------------------------------------------------------------
def test_tide_t_max_for_gui_tasks_is_fifty() -> None:
    """Appendix C.4: "we set t_max to 50 for GUI tasks following the implementation of original
    data" (the three GUI domains: AndroidWorld, OSWorld, WindowsAgentArena), and 60 / 15 for
    AlfWorld / WebShop."""
    from exploreval.metrics._tide_tmax import PAPER_T_MAX

    gui = {name: PAPER_T_MAX[name] for name in ("AndroidWorld", "OSWorld", "WindowsAgentArena")}
    assert set(gui.values()) == {50} and len(gui) == 3
    assert (PAPER_T_MAX["AlfWorld"], PAPER_T_MAX["WebShop"]) == (60, 15)


def test_tide_blocksworld_prompt_says_four_actions_and_one_block_in_hand() -> None:
    """Appendix C.9: BlocksWorld's system prompt: "using four actions: pickup, putdown, stack,
    and unstack", "an arm that can hold one block at a time"."""
    from exploreval.suites.puzzles._harness import BLOCKSWORLD_PROMPT

    assert "using four actions: pickup, putdown, stack, and unstack" in BLOCKSWORLD_PROMPT
    assert "an arm that can hold one block at a time" in BLOCKSWORLD_PROMPT


# -- curiosity (solution injection) --------------------------------------------------------------
def test_level5_injects_fifty_wrong_variants() -> None:
    """Appendix B.3: level 5 plants the solution among "50 incorrect variants"."""
    from exploreval.suites.terminal._decoys import N_DECOYS

    assert N_DECOYS == 50


def test_the_judge_asks_for_a_one_to_two_sentence_quote() -> None:
    """Figure 6: the judge's evidence field is a "1-2 sentence" quote or summary."""
    from exploreval.suites.terminal._judge import CHOICE_PARAMETERS

    assert "1-2 sentence" in CHOICE_PARAMETERS["properties"]["evidence"]["description"]


# -- Task2Quiz ---------------------------------------------------------------------------------
def test_task2quiz_benchmark_is_thirty_environments_of_table1s_sizes() -> None:
    """Section 4 / Table 1: 30 environments, 10 per difficulty; rooms 3-5 / 6-10 / 16-20 and
    objects 6-10 / 14-18 / 28-32 for easy / medium / hard."""
    from exploreval.suites.task2quiz._benchmark import PAPER_TOTALS
    from exploreval.suites.task2quiz._presets import PRESETS

    (entry,) = named_suite("task2quiz-bench").suites
    assert entry["presets"] == ["easy", "medium", "hard"] and entry["seeds"] == list(range(10))
    assert 3 * len(entry["seeds"]) == PAPER_TOTALS["environments"] == 30
    sizes = {name: (preset.rooms, preset.objects) for name, preset in PRESETS.items()}
    assert sizes == {
        "easy": ((3, 5), (6, 10)),
        "medium": ((6, 10), (14, 18)),
        "hard": ((16, 20), (28, 32)),
    }


def test_task2quiz_medium_worlds_average_table1s_task_count() -> None:
    """Table 1, Avg. Tasks: 2.4 / 5.7 / 12.3. The default task universe gives medium's 5.7
    exactly over the paper's 10 worlds; easy (2.8) and hard (11.4) differ, as docs/task2quiz.md
    explains (the paper's own totals disagree with its averages)."""
    import statistics

    from exploreval.suites.task2quiz._coverage import select_tasks
    from exploreval.suites.task2quiz._generate import generate_world

    def mean_tasks(difficulty: str) -> float:
        return statistics.mean(
            len(select_tasks(generate_world(difficulty, s))[2]) for s in range(10)
        )

    assert mean_tasks("medium") == pytest.approx(5.7)
    assert (mean_tasks("easy"), mean_tasks("hard")) == pytest.approx((2.8, 11.4))

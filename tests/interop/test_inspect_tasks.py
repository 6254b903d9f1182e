"""The inspect tasks' parameters (issue 20): seeds, env options passed as ``-T key=value``, and
clear errors for what does not fit (a wrong family, an unknown env option)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_ai", reason="the [inspect] extra (installed by the README)")

from exploreval.interop.inspect_tasks import TASKS, parse_seeds  # noqa: E402


def _mock() -> Any:
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    def answer(messages: Any, tools: Any, tool_choice: Any, config: Any) -> Any:
        output = ModelOutput.from_content("mockllm/model", '{"action": "up"}')
        output.usage = ModelUsage(input_tokens=10, output_tokens=3, total_tokens=13)
        return output

    return get_model("mockllm/model", custom_outputs=answer)


def test_one_task_per_env_family() -> None:
    assert {"grid", "bandit", "frozenlake", "blocksworld", "sudoku", "task2quiz",
            "terminal"} <= set(TASKS)  # fmt: skip


@pytest.mark.parametrize(
    ("text", "seeds"), [("0-4", [0, 1, 2, 3, 4]), ("0,3,7", [0, 3, 7]), ("5", [5]), (2, [2])]
)
def test_seeds(text: Any, seeds: list[int]) -> None:
    assert parse_seeds(text) == seeds


def test_backwards_seeds_are_refused() -> None:
    with pytest.raises(ValueError, match="runs backwards"):
        parse_seeds("4-0")


def test_env_options_are_task_parameters(tmp_path: Path) -> None:
    """``-T budget=3``: the grid's hidden budget, so every episode ends after 3 moves."""
    from inspect_ai import eval as inspect_eval

    from exploreval.store._import_inspect import EXPLOREVAL_STORE_KEY

    (log,) = inspect_eval(
        "exploreval/grid", task_args={"preset": "explore-low/dag-small", "seeds": "0-1",
                                      "harness": "react", "budget": 3},
        model=_mock(), log_dir=str(tmp_path), display="none",
    )  # fmt: skip
    assert log.status == "success"
    records = [s.store[EXPLOREVAL_STORE_KEY] for s in log.samples]
    assert [len(r["steps"]) for r in records] == [3, 3]
    assert all(r["env_options"] == {"budget": 3} for r in records)


def test_a_wrong_family_or_option_fails_the_eval_with_the_reason(tmp_path: Path) -> None:
    from inspect_ai import eval as inspect_eval

    with pytest.raises(ValueError, match="family 'bandit', not 'grid'"):  # before any sample
        inspect_eval("exploreval/grid", task_args={"env": "exploreval/Bandit-v0"},
                     model=_mock(), log_dir=str(tmp_path), display="none")  # fmt: skip
    (log,) = inspect_eval("exploreval/grid", task_args={"colour": "red", "seeds": "0"},
                          model=_mock(), log_dir=str(tmp_path), display="none")  # fmt: skip
    assert log.status == "error" and "colour" in str(log.error)

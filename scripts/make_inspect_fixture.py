"""Write the inspect_ai fixture logs under tests/fixtures/import/inspect/ with the installed
inspect_ai's own eval loop and ``write_eval_log`` (never a hand-made zip).

Run: python scripts/make_inspect_fixture.py [OUT_DIR]

A small tool-using task (two samples, two epochs) answered by inspect's mock model with token
usage on every output (so nothing needs tiktoken's download): one sample solved through a tool
call, one answered wrong; written as ``addition-<version>.eval`` and ``.json``.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path


def write_fixture(out_dir: Path) -> tuple[Path, Path]:
    from inspect_ai import Task, task
    from inspect_ai import __version__ as version
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.log import write_eval_log
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate, use_tools
    from inspect_ai.tool import tool

    @tool
    def add():  # type: ignore[no-untyped-def]
        async def execute(x: int, y: int) -> int:
            """Add two numbers.

            Args:
              x: the first number
              y: the second number
            """
            return x + y

        return execute

    def reply(messages, tools, tool_choice, config):  # type: ignore[no-untyped-def]
        last = messages[-1]
        question = messages[0].text if messages else ""
        if last.role == "tool":
            text = str(last.text).strip()
            output = ModelOutput.from_content("mockllm/model", text)
        elif "2 + 2" in question:
            output = ModelOutput.from_content("mockllm/model", "5")  # wrong, no tool
        else:
            output = ModelOutput.for_tool_call("mockllm/model", "add", {"x": 1, "y": 1})
        output.usage = ModelUsage(input_tokens=20, output_tokens=6, total_tokens=26)
        return output

    @task
    def addition() -> Task:
        return Task(
            dataset=[
                Sample(id="one-plus-one", input="What is 1 + 1?", target="2"),
                Sample(id="two-plus-two", input="What is 2 + 2?", target="4"),
            ],
            solver=[use_tools(add()), generate()],
            scorer=match(),
            epochs=2,
        )

    with tempfile.TemporaryDirectory() as tmp:
        (log,) = inspect_eval(
            addition(), model=get_model("mockllm/model", custom_outputs=reply),
            log_dir=tmp, display="none",
        )  # fmt: skip
        out_dir.mkdir(parents=True, exist_ok=True)
        eval_path = out_dir / f"addition-{version}.eval"
        json_path = out_dir / f"addition-{version}.json"
        write_eval_log(log, str(eval_path), format="eval")
        write_eval_log(log, str(json_path), format="json")
    return eval_path, json_path


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("tests/fixtures/import/inspect")
    for path in write_fixture(target):
        print(path)

"""The three terminal harnesses: prompts (the paper's appendix texts, Table 12 variants), parsing
(strict, invalid replies keep their reason), Terminus 2's double confirmation, terminal_use's
tool results, reasoning history, the first-thought intervention; one real sandbox episode per
harness with a scripted model double, and the real path with the local SmolLM2."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from exploreval.agents import EpisodeContext, LLMAgent, make_harness
from exploreval.core import Message
from exploreval.models import Completion, SamplingParams, ScriptedModel
from exploreval.suites.terminal._harness import CONFIRM_COMPLETION, TerminalUseHarness
from exploreval.suites.terminal._prompts import PROMPT_VARIANTS, REFLECT_NUDGE
from exploreval.suites.terminal._terminus import Terminus1Harness, Terminus2Harness

#: Figure 10 of the curiosity paper as its text extraction prints it (line numbers run into the
#: lines): kept with the tests, so the comparison never depends on where the paper is.
FIGURE_10 = Path(__file__).parents[2] / "fixtures" / "papers" / "curiosity-figure10.txt"
TINY = Path(__file__).parents[2] / "fixtures" / "terminal" / "tiny"


def ctx(env_options: dict[str, Any] | None = None, **reset_info: Any) -> EpisodeContext:
    info = {"task_id": "t", "instruction": "Do the thing.", "tools": "bash", "workdir": "/app",
            "output": "root@sandbox:/app#", "output_kind": "screen", **reset_info}  # fmt: skip
    return EpisodeContext(
        "exploreval/Terminal-v0", "terminal", None, 0, 0, np.random.default_rng(0),
        reset_info=info, env_options=env_options or {},
    )  # fmt: skip


def started(harness: Any, **kwargs: Any) -> Any:
    c = ctx(**kwargs)
    harness.reset(c, "obs")
    return harness


def action(parsed: Any) -> dict[str, Any]:
    assert parsed.action is not None, parsed.reason
    result: dict[str, Any] = json.loads(parsed.action)
    return result


# ----------------------------------------------------------------------------- prompts
def _squash(text: str) -> str:
    return " ".join(text.replace("’", "'").replace("‘", "'").split())


def test_terminal_use_default_prompt_is_figure_10() -> None:
    prompt = started(TerminalUseHarness()).system_prompt()
    assert "## Exploration" in prompt and "investigate every file you discovered" in prompt
    # the appendix text, line for line (the paper's typo "soluion" kept)
    paper = _squash(FIGURE_10.read_text())
    compared = 0
    for line in prompt.split("## How to call")[0].splitlines():
        if len(line) > 30:
            assert _squash(line).replace("`", "'") in paper.replace("`", "'"), line
            compared += 1
    assert compared >= 15  # the whole prompt, not a stray line


def _listing_text(text: str) -> str:
    """Text as the paper's listing and our prompt can both be compared: quotes folded, the
    listing's line numbers (``12## wait``, `` 3As an example``) and its download glyph gone."""
    text = _squash(text).replace("`", "'").replace("⬇", " ")
    text = re.sub(r"(?<![\w.])\d{1,2}(?=[A-Z#])", " ", text)
    text = re.sub(r"(?<![\w.])\d{1,2}(?![\w.])", " ", text)
    return " ".join(text.split())


def test_every_sentence_of_figure_10_is_in_the_prompt() -> None:
    """The other direction of the check above: nothing of the paper's prompt is missing from
    ours (only the figure's title and caption are not prompt text)."""
    ours = _listing_text(started(TerminalUseHarness()).system_prompt())
    paper = _listing_text(FIGURE_10.read_text()).replace("Terminal-Bench System Prompt ", "", 1)
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", paper) if len(s) > 30]
    body = [s for s in sentences if not s.startswith("Figure")]
    assert len(body) >= 30 and len(sentences) - len(body) == 1
    assert [s for s in body if s not in ours] == []


@pytest.mark.parametrize("variant", sorted(PROMPT_VARIANTS))
@pytest.mark.parametrize("cls", [TerminalUseHarness, Terminus1Harness, Terminus2Harness])
def test_prompt_variants_are_table_12(cls: Any, variant: str) -> None:
    prompt = started(cls(prompt_variant=variant)).system_prompt()
    assert ("## Exploration" in prompt) is (variant != "base")
    assert ("Be curious." in prompt) is (variant == "curiosity")
    assert ("## Reflect on Tool Results" in prompt) is (variant == "reflection")
    assert ("investigate every file" in prompt) is (variant in ("investigate", "reflection"))


def test_prompt_variant_from_the_env_option_and_conflicts() -> None:
    h = started(TerminalUseHarness(), env_options={"prompt_variant": "base"})
    assert "## Exploration" not in h.system_prompt()
    with pytest.raises(ValueError, match="prompt_variant given twice"):
        started(
            TerminalUseHarness(prompt_variant="curiosity"), env_options={"prompt_variant": "base"}
        )
    with pytest.raises(ValueError, match="prompt_variant"):
        TerminalUseHarness(prompt_variant="loud")
    with pytest.raises(ValueError, match="unknown option"):
        Terminus2Harness(colour="red")
    with pytest.raises(ValueError, match="reasoning_history"):
        Terminus2Harness(reasoning_history="yes")


def test_editor_section_only_with_the_editor_and_at_the_task_workdir() -> None:
    plain = started(Terminus2Harness()).system_prompt()
    assert "str_replace_editor" not in plain
    h = started(Terminus2Harness(), env_options={"tools": "bash+editor"}, workdir="/workspace")
    assert "str_replace_editor" in h.system_prompt() and "under /workspace" in h.system_prompt()


def test_each_harness_states_its_own_reply_format() -> None:
    assert '"wait"' in started(TerminalUseHarness()).system_prompt()
    t1 = started(Terminus1Harness()).system_prompt()
    assert "is_blocking" in t1 and "timeout_sec" in t1 and "is_task_complete" in t1
    t2 = started(Terminus2Harness()).system_prompt()
    assert '"analysis"' in t2 and '"duration"' in t2 and "is_blocking" not in t2


# ----------------------------------------------------------------------------- parsing
def test_terminal_use_parse_is_strict() -> None:
    h = started(TerminalUseHarness())
    got = action(h.parse('I will list.\n{"commands": [{"keystrokes": "ls\\n", "wait": 90}]}'))
    assert got == {"commands": [{"keystrokes": "ls\n", "duration": 60.0}], "task_complete": False}
    for done in ("DONE", "The task is finished.\n\nDONE", "**DONE**", "DONE."):
        assert action(h.parse(done)) == {"commands": [], "task_complete": True}, done
    for text in ("nothing is done", "UNDONE", "DONE? not yet", "let me think", ""):
        parsed = h.parse(text)
        assert parsed.action is None and "DONE" in (parsed.reason or ""), text
    for text, words in [
        ('{"commands": []}', "non-empty"),
        ('{"commands": [{"keys": "ls"}]}', "keystrokes"),
        ('{"commands": [{"keystrokes": "ls", "wait": -1}]}', "wait"),
        ('{"commands": [{"keystrokes": "ls"', "does not parse"),
        ('{"editor": {"command": "view", "path": "/app"}}', "not available"),
    ]:
        parsed = h.parse(text)
        assert parsed.action is None and words in (parsed.reason or ""), (text, parsed.reason)
    # a tool call and a DONE in one reply: the call runs, the task is not complete
    both = action(h.parse('{"commands": [{"keystrokes": "ls\\n", "wait": 1}]}\nDONE'))
    assert both["task_complete"] is False
    # a raw Enter inside the keystrokes string (what the embedded model's JSON grammar lets
    # through) is read as the Enter it means, not refused as an invalid control character
    raw = action(h.parse('{"commands": [{"keystrokes": "ls\n", "wait": 1}]}'))
    assert raw["commands"] == [{"keystrokes": "ls\n", "duration": 1.0}]


def test_terminus_1_parse_and_blocking() -> None:
    h = started(Terminus1Harness())
    reply = json.dumps({
        "state_analysis": "s", "explanation": "e", "is_task_complete": False,
        "commands": [{"keystrokes": "make\n", "is_blocking": True, "timeout_sec": 900},
                     {"keystrokes": "vim x\n", "is_blocking": False, "timeout_sec": 5}],
    })  # fmt: skip
    got = action(h.parse(reply))
    assert got["commands"] == [
        {"keystrokes": "make\n", "duration": 600.0, "block": True},
        {"keystrokes": "vim x\n", "duration": 0.1, "block": False},
    ]
    assert h.parse(reply).reasoning == "s"
    done = json.dumps({"state_analysis": "s", "explanation": "e", "commands": [],
                       "is_task_complete": True})  # fmt: skip
    assert action(h.parse(done)) == {"commands": [], "task_complete": True}
    for bad, words in [
        ('{"explanation": "e", "commands": [], "is_task_complete": true}', "state_analysis"),
        ('{"state_analysis": "s", "explanation": "e", "commands": []}', "is_task_complete"),
        ('{"state_analysis": "s", "explanation": "e", "is_task_complete": false, '
         '"commands": [{"keystrokes": "ls", "timeout_sec": 1}]}', "is_blocking"),
        ('{"state_analysis": "s", "explanation": "e", "is_task_complete": false, "commands": []}',
         "no commands"),
        ("plain text", "no JSON"),
    ]:  # fmt: skip
        parsed = h.parse(bad)
        assert parsed.action is None and words in (parsed.reason or ""), (bad, parsed.reason)


def _t2(commands: list[dict[str, Any]], done: bool) -> str:
    return json.dumps({"analysis": "a", "plan": "p", "commands": commands, "task_complete": done})


def test_terminus_2_completion_must_be_confirmed_twice() -> None:
    h = started(Terminus2Harness())
    first = h.messages("obs", {"output": "x", "output_kind": "new_output"})
    assert CONFIRM_COMPLETION not in first[-1].content
    got = action(h.parse(_t2([{"keystrokes": "ls\n", "duration": 0.1}], True)))
    assert got["task_complete"] is False and got["commands"][0]["keystrokes"] == "ls\n"
    h.record("obs", {}, "reply", None)
    asked = h.messages("New Terminal Output:\nfile", {"output": "file"})[-1].content
    assert asked.startswith("Current terminal state:\n") and asked.endswith(CONFIRM_COMPLETION)
    confirmed = action(h.parse(_t2([], True)))
    assert confirmed == {"commands": [], "task_complete": True}
    # a task_complete false in between withdraws the request
    h2 = started(Terminus2Harness())
    h2.messages("o", {})
    assert action(h2.parse(_t2([], True))) == {
        "commands": [{"keystrokes": "", "duration": 0.0}], "task_complete": False,
    }  # fmt: skip
    h2.record("o", {}, "r", None)
    h2.messages("o", {})
    assert action(h2.parse(_t2([{"keystrokes": "ls\n"}], False)))["task_complete"] is False
    h2.record("o", {}, "r", None)
    assert CONFIRM_COMPLETION not in h2.messages("o", {})[-1].content
    assert action(h2.parse(_t2([], True)))["task_complete"] is False  # asked again


def test_terminus_2_invalid_replies_keep_their_reason() -> None:
    h = started(Terminus2Harness())
    for bad, words in [
        ('{"plan": "p", "commands": []}', "analysis"),
        ('{"analysis": "a", "plan": "p", "commands": "ls"}', "list"),
        ('{"analysis": "a", "plan": "p", "commands": [], "task_complete": "yes"}', "true or false"),
        ('{"analysis": "a", "plan": "p", "commands": []}', "no commands"),
        ("```json\n{broken\n```", "does not parse"),
    ]:
        parsed = h.parse(bad)
        assert parsed.action is None and words in (parsed.reason or ""), (bad, parsed.reason)


# ----------------------------------------------------------------------------- observations
def test_terminal_use_results_carry_in_progress_and_truncated() -> None:
    h = started(TerminalUseHarness())
    first = h.format_observation("o", h.ctx.reset_info)
    assert (
        first.startswith("Do the thing.")
        and '"terminal_status": "Current Terminal Screen:' in first
    )
    info = {"commands": ["sleep 9\n"], "output": "...[... 1234 bytes omitted ...]...",
            "output_kind": "new_output", "in_progress": True, "output_truncated_bytes": 1234}  # fmt: skip
    result = json.loads(h.format_observation("o", info))
    assert result == {
        "terminal_status": "New Terminal History:\n...[... 1234 bytes omitted ...]...",
        "in_progress": True,
        "truncated": True,
    }
    nudged = h.format_observation("o", {**info, "intervention_message": REFLECT_NUDGE})
    assert nudged.endswith(REFLECT_NUDGE)
    invalid = h.format_observation(
        "o", {"valid": False, "invalid_reason": "no JSON", "commands": []}
    )
    assert invalid == "Invalid terminal_use call: no JSON"


# ----------------------------------------------------------------------------- reasoning history
class ReasoningModel(ScriptedModel):
    async def complete(
        self, messages: Sequence[Message], params: SamplingParams | None = None, **kw: Any
    ) -> Completion:
        done = await super().complete(messages, params, **kw)
        return done.model_copy(update={"reasoning": f"thought {len(self.calls)}"})


@pytest.mark.parametrize("on", [True, False])
async def test_reasoning_history_switch(on: bool) -> None:
    reply = _t2([{"keystrokes": "ls\n", "duration": 0.1}], False)
    model = ReasoningModel(replies=[reply])
    agent = LLMAgent(model, Terminus2Harness(reasoning_history=on))
    await agent.reset(ctx(), "obs")
    for _ in range(3):
        decision = await agent.act("New Terminal Output:\nx", {"output": "x"})
        assert decision.reasoning and decision.reasoning.startswith("thought")
    last_prompt = model.calls[-1]
    assistant = [m.content for m in last_prompt if m.role == "assistant"]
    assert len(assistant) == 2
    assert all(("<reasoning>\nthought" in a) is on for a in assistant)
    assert all(a.endswith(reply) for a in assistant)
    assert agent.config()["harness"]["reasoning_history"] is on


async def test_first_thought_prefills_the_first_turn() -> None:
    thought = "I know how to solve this task. The complete solution is ..."
    model = ScriptedModel(replies=[_t2([{"keystrokes": "ls\n"}], False)])
    agent = LLMAgent(model, TerminalUseHarness())
    await agent.reset(ctx(first_thought=thought), "obs")
    await agent.act("obs", ctx(first_thought=thought).reset_info)
    first = model.calls[0]
    assert first[-1].role == "assistant" and first[-1].content == thought
    await agent.act("New Terminal Output:\nx", {"output": "x", "commands": []})
    second = model.calls[1]
    assert second[-1].role == "user"
    assert second[2].role == "assistant" and second[2].content.startswith(thought)


# ----------------------------------------------------------------------------- real sandbox
def _scripted_replies(harness: str, solution: str) -> list[str]:
    run = f"bash <<'EOF'\n{solution}EOF\n"
    if harness == "terminal_use":
        return [
            '{"commands": [{"keystrokes": "ls\\n", "wait": 0.3}]}',
            json.dumps({"commands": [{"keystrokes": run, "wait": 1.0}]}),
            "All set.\nDONE",
        ]
    if harness == "terminus-1":
        base = {"state_analysis": "s", "explanation": "e"}
        return [
            json.dumps({**base, "is_task_complete": False,
                        "commands": [{"keystrokes": "ls\n", "is_blocking": True, "timeout_sec": 5}]}),
            json.dumps({**base, "is_task_complete": True,
                        "commands": [{"keystrokes": run, "is_blocking": True, "timeout_sec": 30}]}),
        ]  # fmt: skip
    return [
        _t2([{"keystrokes": "ls\n", "duration": 0.3}], False),
        _t2([{"keystrokes": run, "duration": 1.0}], True),  # asks for confirmation
        _t2([], True),  # confirmed
    ]


@pytest.mark.parametrize(
    ("harness", "steps"), [("terminal_use", 3), ("terminus-1", 2), ("terminus-2", 3)]
)
async def test_real_sandbox_episode_per_harness(harness: str, steps: int) -> None:
    from exploreval.runner import run_episode
    from exploreval.suites.terminal._env import TerminalEnv

    env = TerminalEnv(tasks=str(TINY), image="host", task=0)
    solution = env._tasks()[0].solution
    assert solution
    model = ScriptedModel(replies=_scripted_replies(harness, solution))
    agent = LLMAgent(model, make_harness("terminal", harness))
    try:
        record = await run_episode(env, agent, seed=0, max_steps=10)
    finally:
        await env.aclose()
    assert record.success is True and len(record.steps) == steps
    assert all(s.valid for s in record.steps)
    assert record.steps[-1].terminated and record.ground_truth["resolved"] is True
    if harness == "terminus-2":
        assert CONFIRM_COMPLETION in model.calls[2][-1].content
        assert record.steps[1].agent_info["completion"] == "asked to confirm"
    if harness == "terminal_use":
        result = json.loads(model.calls[1][-1].content)
        assert set(result) == {"terminal_status", "in_progress", "truncated"}


@pytest.mark.slow
@pytest.mark.local_llm
def test_smollm2_terminal_episode_is_recorded(local_llm_base_url: str, tmp_path: Path) -> None:
    from exploreval.runner import run_experiment, spec_from_dict
    from exploreval.store import RunDir

    spec = spec_from_dict(
        {
            "suites": [{"env_id": "exploreval/Terminal-v0", "seeds": [0],
                        "options": {"tasks": str(TINY), "image": "host", "injection_level": 1}}],
            "agents": [
                {"kind": "llm", "model": "local:smollm2", "base_url": local_llm_base_url,
                 "harness": harness, "sampling": {"temperature": 0.0, "max_tokens": 48}}
                for harness in ("terminal_use", "terminus-1", "terminus-2")
            ],
            "max_steps": 2,
            "concurrency": 1,
        }
    )  # fmt: skip
    summary = run_experiment(spec, str(tmp_path / "run"))
    assert summary.status == "finished" and summary.completed == 3
    records = list(RunDir(tmp_path / "run").iter_records())
    assert {r.agent.config["harness"]["name"] for r in records} == {
        "terminal_use", "terminus-1", "terminus-2",
    }  # fmt: skip
    for record in records:
        assert record.status == "ok" and 1 <= len(record.steps) <= 2
        assert record.steps[-1].terminated or record.steps[-1].truncated  # ended cleanly
        assert record.ground_truth["verification"] is not None
        for step in record.steps:
            assert step.raw_output is not None and step.prompt is not None
            assert step.valid or step.invalid_reason  # every invalid step says why
        assert (tmp_path / "run" / record.ground_truth["cast"]).is_file()


@pytest.mark.parametrize("cls", [TerminalUseHarness, Terminus1Harness, Terminus2Harness])
def test_the_next_observation_says_why_a_reply_was_invalid(cls: Any) -> None:
    h = started(cls())
    h.messages("obs", h.ctx.reset_info)
    parsed = h.parse("I think I should look around first.")
    assert parsed.action is None and parsed.reason
    h.record("obs", {}, "I think...", None)
    env_info = {"valid": False, "invalid_reason": "the harness could not parse the model output",
                "commands": []}  # fmt: skip
    shown = h.messages("Invalid action: the harness could not parse the model output", env_info)
    assert parsed.reason in shown[-1].content
    # an env-side refusal keeps the env's own reason
    valid = {
        TerminalUseHarness: '{"commands": [{"keystrokes": "ls\\n", "wait": 1}]}',
        Terminus1Harness: json.dumps({"state_analysis": "s", "explanation": "e",
                                      "is_task_complete": False, "commands": [
                                          {"keystrokes": "ls\n", "is_blocking": True,
                                           "timeout_sec": 1}]}),
        Terminus2Harness: _t2([{"keystrokes": "ls\n"}], False),
    }[cls]  # fmt: skip
    assert h.parse(valid).action is not None
    h.record("obs", {}, "r", "a")
    env_info = {
        "valid": False,
        "invalid_reason": "the file editor is not available",
        "commands": [],
    }
    assert "file editor is not available" in h.messages("x", env_info)[-1].content


# "paper_set", not "benchmark": that name is pytest-benchmark's fixture, which a machine may have
@pytest.mark.parametrize(("paper_set", "figure"), [("appworld", 11), ("swe-bench", 12)])
def test_the_appworld_and_swe_bench_prompts_are_figures_11_and_12(
    paper_set: str, figure: int
) -> None:
    """Issue 44: the paper's other two system prompts, as harness options (AppWorld and
    SWE-Bench themselves cannot run here): every line is the figure's, printed without the
    exploration sections; the SWE-Bench prompt's /testbed is the task's work dir."""
    paper = _squash((FIGURE_10.parent / f"curiosity-figure{figure}.txt").read_text())
    harness = started(TerminalUseHarness(benchmark=paper_set), workdir="/testbed")
    prompt = harness.system_prompt()
    compared = 0
    for line in prompt.split("## How to call")[0].splitlines():
        if len(line) > 30:
            # the paper's text extraction dropped "<filename.py>" (read as a tag): the SWE-agent
            # prompt Figure 12 follows has it, so the harness keeps it
            text = _squash(line).replace("`", "'").replace(" <filename.py>", " ")
            assert text in paper.replace("`", "'"), line
            compared += 1
    assert compared >= 15 and "## Exploration" not in prompt
    assert (
        "## Exploration"
        in started(
            TerminalUseHarness(benchmark=paper_set, prompt_variant="exploration")
        ).system_prompt()
    )
    if paper_set == "swe-bench":
        assert "directory /app" in started(TerminalUseHarness(benchmark=paper_set)).system_prompt()
    with pytest.raises(ValueError, match="benchmark='webshop': expected one of"):
        TerminalUseHarness(benchmark="webshop")


# ----------------------------------------------------------------------------- native tool calls
def _native_calls(solution: str, harness: str) -> Any:
    """A tool-calling endpoint's answers (the StubServer's ``tool_calls_fn``): look, run the
    gold solution, then finish (terminal_use: a final text reply; swe-agent: ``submit``)."""
    run = f"bash <<'EOF'\n{solution}EOF\n"

    def calls(body: dict[str, Any]) -> list[tuple[str, str]] | None:
        turn = sum(m["role"] == "assistant" for m in body["messages"])
        if harness == "terminal_use":
            plan = [("terminal_use", {"commands": [{"keystrokes": "ls\n", "wait": 0.3}]}),
                    ("terminal_use", {"commands": [{"keystrokes": run, "wait": 1.0}]})]  # fmt: skip
        else:
            plan = [("bash", {"command": "ls"}), ("bash", {"command": run}), ("submit", {})]
        return [(plan[turn][0], json.dumps(plan[turn][1]))] if turn < len(plan) else None

    return calls


@pytest.mark.parametrize("harness", ["terminal_use", "swe-agent"])
async def test_native_tool_calls_over_http_resolve_and_record_their_form(harness: str) -> None:
    """Issue 44: where the endpoint takes tools, the paper's tool-calling harnesses send
    ``tools`` and read the calls; each call's observation goes back as a ``tool`` message
    answering its id; every step records ``call_form``."""
    from exploreval.models import OpenAIClient
    from exploreval.models.testing import StubServer
    from exploreval.runner import run_episode
    from exploreval.suites.terminal._env import TerminalEnv

    env = TerminalEnv(tasks=str(TINY), image="host", task=0)
    solution = env._tasks()[0].solution
    assert solution
    with StubServer(reply="All set.\nDONE", tool_calls_fn=_native_calls(solution, harness)) as stub:
        client = OpenAIClient("stub-model", base_url=stub.base_url, api_key_env="NO_KEY_NEEDED")
        agent = LLMAgent(client, make_harness("terminal", harness))
        try:
            record = await run_episode(env, agent, seed=0, max_steps=10)
        finally:
            await env.aclose()
            await agent.aclose()
        bodies = list(stub.requests)
    assert record.ground_truth["resolved"] is True and all(s.valid for s in record.steps)
    names = {t["function"]["name"] for t in bodies[0]["tools"]}
    assert names == ({"terminal_use"} if harness == "terminal_use" else {"bash", "submit"})
    assert "response_format" not in bodies[0] and "grammar" not in bodies[0]
    second = bodies[1]["messages"]
    call = second[-2]
    assert call["role"] == "assistant" and call["tool_calls"][0]["function"]["name"] in names
    assert (
        second[-1]["role"] == "tool" and second[-1]["tool_call_id"] == call["tool_calls"][0]["id"]
    )
    forms = [s.agent_info["call_form"] for s in record.steps]
    if harness == "terminal_use":  # the last reply is the final response: text, no call
        assert forms == ["native", "native", "text"]
    else:
        assert forms == ["native"] * 3
    assert record.steps[0].agent_info["tool_call"]["name"] in names


def test_the_embedded_model_keeps_the_text_form_and_native_can_be_refused() -> None:
    from exploreval.models import OpenAIClient

    local = OpenAIClient("local:smollm2", base_url="http://127.0.0.1:1/v1",
                         cache_endpoint="local:smollm2")  # fmt: skip
    remote = OpenAIClient("m", base_url="http://127.0.0.1:1/v1")
    assert not local.native_tools and remote.native_tools
    assert LLMAgent(remote, make_harness("terminal", "terminal_use"))._call_form() == "native"
    assert LLMAgent(local, make_harness("terminal", "terminal_use"))._call_form() == "text"
    text = make_harness("terminal", "terminal_use", tool_calls="text")
    assert LLMAgent(remote, text)._call_form() == "text"
    assert LLMAgent(remote, make_harness("terminal", "terminus-2"))._call_form() == "text"
    forced = make_harness("terminal", "swe-agent", tool_calls="native")
    with pytest.raises(ValueError, match="takes no native tool calls"):
        LLMAgent(local, forced)._call_form()
    with pytest.raises(ValueError, match="tool_calls='always'"):
        make_harness("terminal", "terminal_use", tool_calls="always")

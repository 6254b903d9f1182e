"""TIDE's interaction format (Appendix C.9) for the three puzzles.

System: the paper's puzzle prompt (with ``{max_steps}``) plus a short few-shot exchange.
First user turn: the task instruction, then ``<state>observation</state>``; later turns:
``<state>observation</state>``. The model answers ``<analysis>...</analysis>
<action>...</action>``; ``<action>stop</action>`` ends the episode. When the previous
action was refused, the turn starts with that feedback (TIDE's ``offer_feedback``).

With ``history=window:K`` or ``none`` the instruction is attached to the oldest user
message the model still sees, so the goal (e.g. BlocksWorld's target state) is never cut.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from exploreval.agents import EpisodeContext, Harness, ParsedAction, gbnf_free_text, gbnf_grammar
from exploreval.core import Message
from exploreval.models import Constraint
from exploreval.suites.puzzles._common import PAPER_MAX_STEPS

_ACTION_RE = re.compile(r"<action>(.*?)</action>", re.IGNORECASE | re.DOTALL)
_ANALYSIS_RE = re.compile(r"<analysis>(.*?)</analysis>", re.IGNORECASE | re.DOTALL)
_SUMMARY_RE = re.compile(r"<summary>(.*?)</summary>", re.IGNORECASE | re.DOTALL)
#: The longest summary carried to the next turn (characters; a longer one is cut).
SUMMARY_MAX_CHARS = 600
#: TIDE Table 5's "Summary" setting: the agent summarises its trajectory and reasoning itself
#: (Appendix B.7), and sees that summary instead of the earlier turns.
MODEL_SUMMARY_PROMPT = (
    "You do not see the earlier turns. Instead, after your action, write "
    "<summary> </summary>: a summary of your interaction so far and of your reasoning (what "
    "you tried, what happened, what you learnt about the puzzle, what you plan next). Next "
    "turn you will see only the current state and this summary, so put in it everything you "
    "will need."
)

BLOCKSWORLD_PROMPT = """# Role
You are a robot in a blocksworld system. The blocksworld system has a set of blocks that can be stacked on top of each other, an arm that can hold one block at a time, and a table where blocks can be placed.

# Task Requirements
- Your goal is to move the blocks from the Initial State to the goal state using four actions: pickup, putdown, stack, and unstack.
- A block is considered clear when there is no block on top of it.
- You can **hold only one block at a time**, this is important.
- The table can be used to place blocks.

# Action Rules
- **pickup**: You can pick up a block on the table if it is clear and the arm is empty. You cannot pick up a block that is on top of another block. After the pickup action, the arm will be holding the block, and the block will no longer be on the table or clear.
- **putdown**: You can put down a block on the table if the arm is holding a block. You cannot put down a block on top of another block. After the putdown action, the arm will be empty, and the block will be on the table and clear.
- **stack**: You can stack a block on top of another block if the arm is holding the top block and the bottom block is clear. You cannot stack a block on the table. After the stack action, the arm will be empty, the top block will be on top of the bottom block, and the bottom block will no longer be clear.
- **unstack**: You can unstack a block from on top of another block if the arm is empty and the top block is clear. You cannot unstack a block that is on the table. After the unstack action, the arm will be holding the top block, the top block will no longer be on top of the bottom block, and the bottom block will be clear. If block 1 is on top of block 2 and you want to move block 1, use unstack rather than pickup. If block 1 is on the table and you want to move block 1, use pickup rather than unstack.

# Output Requirements
- You need to think step by step.
- If you want to do action, output your action between <action> and </action> tags, For example:
1. To pick up block b1: <action>pickup b1</action>, if b1 is on the table and clear and your hand is empty.
2. To put down block b1: <action>putdown b1</action>, if b1 is in your hand.
3. To stack block b1 on top of block b2: <action>stack b1 b2</action>, if b1 is in your hand and b2 is clear.
4. To unstack block b1 from block b2: <action>unstack b1 b2</action>, if b1 is on top of b2 and b1 is clear and your hand is empty.
- Use the <analysis> </analysis> to reason about which actions to take next.
- You need to complete the task within {max_steps} steps.
- Output <action>stop</action> when you have reached the target or cannot proceed further."""

FROZENLAKE_PROMPT = """You are solving the FrozenLake puzzle. Forbid the hole and go to the target. You have four actions: Up, Down, Left, Right. The meaning of each symbol in the state is: O: wall, _: empty, G: target, P: player. Coordinates are (row, column), counted from 0 at the top-left. You should first analyse based on the state and then output the next action. After each action, you may receive a state description about the new state. Please use the state description to generate the next action. You need to complete the task within {max_steps} steps. You need to think step by step. Use the <analysis> </analysis> to reason about which actions to take next, and the <action> </action> to specify your actions. Output <action>stop</action> when you have reached the target or cannot move anymore."""

SUDOKU_PROMPT = """You are solving a sudoku puzzle. Fill in the empty cells (marked with _) with numbers 1-{n} such that:
1. Each row contains all numbers 1-{n} exactly once
2. Each column contains all numbers 1-{n} exactly once
3. Each {k}x{k} subgrid contains all numbers 1-{n} exactly once
4. The grid is 0-indexed (i.e., the top-left cell is (0,0), the bottom-right cell is ({last}, {last}))
To fill a cell, output its row, column and value: <action>row col value</action>, e.g. <action>0 2 {n}</action>. Filled cells cannot be changed.
You need to complete the task within {max_steps} steps. You need to think step by step. Use the <analysis> </analysis> to reason about which actions to take next, and the <action> </action> to specify your actions. Output <action>stop</action> when you have reached the target or cannot proceed further."""

_FEWSHOT = {
    "blocksworld": (
        "b2 is on b1.\nb1 is on the table.\nb2 is clear.\nYour hand is empty.",
        "b1 must end on top of b2, so b2 has to come off b1 first. b2 is clear and my hand is empty, so I unstack it.",
        "unstack b2 b1",
    ),
    "frozenlake": (
        "P_\nOG\nThe target is at (1, 1). The holes are at (1, 0). The player is at (0, 0).",
        "Down would fall into the hole at (1, 0). Right leads to (0, 1), which is right above the target.",
        "Right",
    ),
    "sudoku": (
        "There is one empty cell to fill, at (0, 1).\n1_34\n3412\n2143\n4321",
        "Row 0 holds 1, 3 and 4, so the missing number is 2; column 1 and the top-left box do not contain 2 either.",
        "0 1 2",
    ),
}


class PuzzleHarness(Harness):
    """The paper's ``<analysis>``/``<action>`` harness; one subclass per puzzle."""

    name = "default"
    model_summary = True
    family: ClassVar[str] = ""
    #: TIDE samples every model at temperature 0.7, top-p 1.0 (Appendix C.8); used when
    #: the experiment does not set them.
    sampling_overrides: ClassVar[dict[str, float]] = {"temperature": 0.7, "top_p": 1.0}

    def __init__(self, history: Any = "full", fewshot: bool = True, **options: Any) -> None:
        if options:
            raise ValueError(
                f"puzzle harness: unknown option(s) {', '.join(sorted(options))}; "
                "the only option is fewshot (true/false)"
            )
        super().__init__(history=history, fewshot=fewshot)
        self.fewshot = fewshot
        self._actions: list[str] = []
        #: ``history=model-summary``: the summary the model wrote in its latest reply.
        self._written = ""

    def reset(self, ctx: EpisodeContext, observation: str) -> None:
        super().reset(ctx, observation)
        self._actions = []
        self._written = ""

    # -- prompt ------------------------------------------------------------------------
    @property
    def max_steps(self) -> int:
        if self.ctx is not None and self.ctx.max_steps is not None:
            return self.ctx.max_steps
        return PAPER_MAX_STEPS

    def rules(self) -> str:
        """The paper's system prompt for this puzzle."""
        raise NotImplementedError

    def system_prompt(self) -> str:
        parts = [self.rules()]
        if self.fewshot:
            state, analysis, action = _FEWSHOT[self.family]
            parts.append(
                "Example of the interaction format (a different, smaller puzzle):\n"
                f"User: <state>\n{state}\n</state>\n"
                f"Assistant: <analysis>{analysis}</analysis>\n<action>{action}</action>"
            )
        if self.history.mode == "window":
            parts.append(
                f"You only see the most recent {self.history.window} turns of the interaction history."
            )
        elif self.history.mode == "none":
            parts.append("You only see the current state, not the earlier turns.")
        elif self.history.mode == "summary":
            parts.append("Instead of the earlier turns you see a summary of your previous actions.")
        elif self.history.mode == "model-summary":
            parts.append(MODEL_SUMMARY_PROMPT)
        return "\n\n".join(parts)

    def instruction(self) -> str:
        return self.ctx.task_description if self.ctx is not None else ""

    def format_observation(self, observation: str, info: dict[str, Any]) -> str:
        text = f"<state>\n{observation}\n</state>"
        if info.get("valid") is False and info.get("action") is not None:
            reason = info.get("invalid_reason") or "it is not allowed here"
            text = f"Action {info.get('action')!r} failed to execute: {reason}.\n{text}"
        return text

    def messages(self, observation: str, info: dict[str, Any]) -> list[Message]:
        msgs = super().messages(observation, info)
        instruction = self.instruction()
        if instruction:
            first = next(i for i, m in enumerate(msgs) if m.role == "user")
            msgs[first] = Message(role="user", content=f"{instruction}\n{msgs[first].content}")
        return msgs

    def summary(self) -> str:
        if self.history.mode == "model-summary":
            if not self._written:
                return ""
            return f"Your summary of the interaction so far:\n<summary>{self._written}</summary>"
        if not self._actions:
            return ""
        return "Summary of your previous actions, oldest first: " + "; ".join(self._actions) + "."

    def record(
        self, observation: str, info: dict[str, Any], reply: str, action: str | None
    ) -> None:
        super().record(observation, info, reply, action)
        self._actions.append(action if action is not None else "(unparsable reply)")
        written = _SUMMARY_RE.findall(reply)
        if written and written[-1].strip():  # no summary this turn: the last one stands
            self._written = " ".join(written[-1].split())[:SUMMARY_MAX_CHARS]

    # -- constrained decoding ----------------------------------------------------------------
    #: GBNF of one well-formed action of the puzzle (each subclass): what the env can read.
    action_grammar: ClassVar[str] = "[^<\\n]{1,40}"
    action_rules: ClassVar[dict[str, str]] = {}

    def constraint(self, observation: str, info: dict[str, Any]) -> Constraint | None:
        """``<analysis>`` (bounded free text) then one well-formed ``<action>``: the reply's
        shape is fixed, whether the move is legal is still the env's to judge."""
        root = (
            f'"<analysis>" {gbnf_free_text(300, without="<")} "</analysis>\\n<action>" '
            f'action "</action>"'
        )
        if self.history.mode == "model-summary":
            root += f' "\\n<summary>" {gbnf_free_text(SUMMARY_MAX_CHARS, without="<")} "</summary>"'
        return Constraint(name=f"{self.family} action",
                          grammar=gbnf_grammar(root, action=self.action_grammar,
                                               **self.action_rules))  # fmt: skip

    # -- parsing -------------------------------------------------------------------------
    def parse(self, text: str) -> ParsedAction:
        analysis = _ANALYSIS_RE.findall(text)
        reasoning = analysis[-1].strip() if analysis else None
        actions = [a.strip() for a in _ACTION_RE.findall(text)]
        if not actions:
            return ParsedAction(None, "no <action>...</action> tag in the reply", reasoning)
        if not actions[-1]:
            return ParsedAction(None, "the last <action></action> tag is empty", reasoning)
        return ParsedAction(" ".join(actions[-1].split()), None, reasoning)


class BlocksWorldHarness(PuzzleHarness):
    family = "blocksworld"
    action_grammar: ClassVar[str] = (
        '("pickup " block) | ("putdown " block) | ("stack " block " " block) | '
        '("unstack " block " " block) | "stop"'
    )
    action_rules: ClassVar[dict[str, str]] = {"block": '"b" [0-9] [0-9]?'}

    def rules(self) -> str:
        return BLOCKSWORLD_PROMPT.format(max_steps=self.max_steps)

    def instruction(self) -> str:
        goal = super().instruction()
        return f"{goal}\n# Current State" if goal else ""


class FrozenLakeHarness(PuzzleHarness):
    family = "frozenlake"
    action_grammar: ClassVar[str] = '("Up" | "Down" | "Left" | "Right")'

    def rules(self) -> str:
        return FROZENLAKE_PROMPT.format(max_steps=self.max_steps)


class SudokuHarness(PuzzleHarness):
    family = "sudoku"
    action_grammar: ClassVar[str] = '[0-9] " " [0-9] " " [1-9]'

    def rules(self) -> str:
        n = 9
        if self.ctx is not None:
            n = int(self.ctx.reset_info.get("size", 9))
        k = {4: 2, 9: 3}.get(n, 3)
        return SUDOKU_PROMPT.format(n=n, k=k, last=n - 1, max_steps=self.max_steps)

"""Harnesses for the paper's prompt designs: one per configuration code (``BSSeC0`` ...)."""

from __future__ import annotations

from typing import Any

from exploreval.agents import (
    EpisodeContext,
    Harness,
    HistoryPolicy,
    ParsedAction,
    gbnf_choice,
    gbnf_free_text,
    gbnf_grammar,
    gbnf_literal,
)
from exploreval.core import Message, option_bool
from exploreval.models import Constraint
from exploreval.suites.bandit._codes import BASIC_CODE
from exploreval.suites.bandit._prompts import (
    PromptDesign,
    build_messages,
    parse_answer,
    system_prompt,
    user_prompt,
)
from exploreval.suites.bandit._pulls import PullHistory


class BanditPromptHarness(Harness):
    """Presents the bandit the way the paper does: every round is a fresh pair of messages,
    a system message (scenario, framing, answer format) and a user message holding the
    whole interaction history (a raw list or a per-arm summary, by the code's 3rd letter).

    The harness rebuilds the history from the env's ``info`` (arm position and reward of
    each round), so it never has to trust the model's own account. History policies act on
    what the user message shows: ``full`` (the paper) lists every round, ``window:K`` only
    the last K, ``none`` no history at all. ``summary`` is refused: the code chooses raw or
    summarised history.

    Distribution answers (codes ending in ``D``) are sampled with the episode's agent
    generator (``ctx.rng``); the parsed distribution is logged with the step.
    """

    def __init__(
        self,
        design: str | PromptDesign = BASIC_CODE,
        history: str | HistoryPolicy = "full",
        lenient: bool = False,
    ) -> None:
        super().__init__(history=history)
        self.lenient = option_bool(lenient, "harness option lenient")
        if self.history.mode in ("summary", "retrieval", "memory"):
            raise ValueError(
                "bandit prompt designs pick raw (R) or summarised (S) history with the third "
                "letter of the code; use history 'full', 'window:K' or 'none'"
            )
        self.design = design if isinstance(design, PromptDesign) else PromptDesign.parse(design)
        self.name = self.design.code
        self.sampling_overrides: dict[str, Any] = {"temperature": self.design.temperature}
        self.seen = PullHistory()
        self.n_arms = 0
        self.horizon = 0
        self.env_labels: list[str] = []

    def config(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "history": str(self.history)}
        if self.lenient:
            out["lenient"] = True
        return out

    def reset(self, ctx: EpisodeContext, observation: str) -> None:
        super().reset(ctx, observation)
        info = ctx.reset_info
        try:
            self.n_arms = int(info["n_arms"])
            self.horizon = int(info["horizon"])
            self.env_labels = [str(x) for x in info["arm_labels"]]
        except KeyError as exc:
            raise ValueError(
                f"the bandit harness needs the bandit env's reset info (missing {exc}); "
                f"is {ctx.env_id!r} a bandit env?"
            ) from None
        self.design.arm_names(self.n_arms)  # fails early if the scenario cannot name K arms
        self.seen = PullHistory(self.n_arms)

    def _visible(self) -> tuple[list[tuple[int, float]], bool]:
        mode = self.history.mode
        if mode == "none":
            return [], False
        if mode == "window":
            return self.seen.pulls[-self.history.window :] if self.history.window else [], True
        return list(self.seen.pulls), True

    # -- Harness API ---------------------------------------------------------------------------
    def system_prompt(self) -> str:
        return system_prompt(self.design, self.n_arms, self.horizon)

    def format_observation(self, observation: str, info: dict[str, Any]) -> str:
        self.seen.absorb(info)
        shown, show = self._visible()
        return user_prompt(
            self.design, self.n_arms, shown, total_pulls=len(self.seen.pulls), show_history=show
        )

    def messages(self, observation: str, info: dict[str, Any]) -> list[Message]:
        self.seen.absorb(info)
        shown, show = self._visible()
        return build_messages(
            self.design,
            self.n_arms,
            self.horizon,
            shown,
            total_pulls=len(self.seen.pulls),
            show_history=show,
        )

    def constraint(self, observation: str, info: dict[str, Any]) -> Constraint | None:
        """Free reasoning of at most 120 characters, then the tag with one arm name (or, for a
        distribution code, ``name:weight`` pairs): what :meth:`parse` reads."""
        names = self.design.arm_names(self.n_arms)
        if self.design.distribution:
            # every arm once, in the prompt's order: the parser refuses an arm named twice (the
            # embedded model wrote "red:1,green:2,red:3" 6 times in 10 when any arm could come
            # next), and an open list of pairs ran until the context was full (minutes a step)
            # and some weight above 0 (the parser refuses weights that sum to 0, which the
            # embedded model then wrote 2 times in 10): the first non-zero weight's position
            # picks the alternative, zeros before it, any weight after
            def pairs(first_nonzero: int) -> str:
                kinds = ["zero"] * first_nonzero + ["nonzero"] + ["weight"] * len(names)
                return ' "," " "? '.join(f'{gbnf_literal(n)} ":" {kind}'
                                         for n, kind in zip(names, kinds, strict=False))  # fmt: skip

            answer = "(" + " | ".join(f"({pairs(i)})" for i in range(len(names))) + ")"
            rules = {"weight": '[0-9]{1,3} ("." [0-9]{1,4})?',
                     "zero": '"0" ("." "0"{1,4})?',
                     "nonzero": '[1-9] [0-9]{0,2} ("." [0-9]{1,4})? | "0." [0-9]{0,3} [1-9]'}  # fmt: skip
        else:
            answer, rules = "arm", {"arm": gbnf_choice(names)}
        root = f'{gbnf_free_text(120, without="<")} "<Answer>" {answer} "</Answer>"'
        return Constraint(name=f"bandit answer ({self.design.code})",
                          grammar=gbnf_grammar(root, **rules))  # fmt: skip

    def parse(self, text: str) -> ParsedAction:
        rng = self.ctx.rng if self.ctx is not None else None
        answer = parse_answer(self.design, text, self.n_arms, rng, lenient=self.lenient)
        names = self.design.arm_names(self.n_arms)
        log: dict[str, Any] = {"design": self.design.code}
        if answer.distribution is not None:
            log["distribution"] = {
                n: round(p, 6) for n, p in zip(names, answer.distribution, strict=True)
            }
        if answer.position is None:
            parsed = ParsedAction(None, answer.reason, answer.reasoning)
        else:
            log["answer"] = names[answer.position]
            parsed = ParsedAction(self.env_labels[answer.position], None, answer.reasoning)
        parsed.info.update(log)
        return parsed

    def record(
        self, observation: str, info: dict[str, Any], reply: str, action: str | None
    ) -> None:
        """Nothing to keep: the next round's history comes from the env's info."""


# -> Any: a harness class built for a prompt code (registered by name)
def harness_factory(code: str) -> Any:
    """A registry factory building the harness of one configuration code."""

    def factory(history: str | HistoryPolicy = "full", **options: Any) -> BanditPromptHarness:
        unknown = set(options) - {"lenient"}
        if unknown:
            raise ValueError(
                f"bandit harness {code} takes only the option 'lenient' (got {sorted(unknown)}); "
                "the code fixes the prompt design and temperature"
            )
        return BanditPromptHarness(code, history=history, lenient=options.get("lenient", False))

    factory.__name__ = f"harness_{code}"
    return factory

"""Serialised records: one ``EpisodeRecord`` per finished episode.

A record plus its ground truth is enough to recompute every metric; nothing needs
the env or the model again. Prompt messages are stored by reference (content hash
into the run's blob store) so long, repeated system prompts do not bloat the log.

Schema history (readers migrate older records, they never reject them):

* 1: the first release.
* 2: ``Step.phase`` / ``Step.task`` (multi-task episodes and evaluation phases such as a quiz)
  and ``EpisodeRecord.tasks`` (one outcome per task). A version-1 record is one task, all of
  its steps in the ``"task"`` phase.
* 3: ``Usage.cost_usd`` is ``null`` when any call of the step or episode went to a model with no
  known price (``unpriced_calls > 0``): the cost is unknown, never $0. Version 2 stored the priced
  part (often 0.0) next to ``unpriced_calls``; migrating sets it to ``null``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from exploreval.core._versions import migrate_versions

#: Bump on any change to ``EpisodeRecord``; add the migration from the previous version below.
SCHEMA_VERSION = 3

#: The acting phase; steps of other phases (e.g. "quiz") are evaluation steps.
TASK_PHASE = "task"


def utcnow() -> datetime:
    return datetime.now(UTC)


class Usage(BaseModel):
    """Token accounting for one call or summed over an episode/run."""

    model_config = ConfigDict(extra="forbid")

    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    calls: int = 0
    cached_calls: int = 0
    #: USD; ``None`` when unknown: some call went to a model with no known price.
    cost_usd: float | None = 0.0
    #: Calls to a model with no known price: their cost is unknown, not $0.
    unpriced_calls: int = 0

    @model_validator(mode="after")
    def _unpriced_cost_is_unknown(self) -> Usage:
        # One unpriced call makes the total unknown: never a partial sum that reads as the cost.
        if self.unpriced_calls > 0 and self.cost_usd is not None:
            self.cost_usd = None
        return self

    @property
    def cost_known(self) -> bool:
        return self.unpriced_calls == 0 and self.cost_usd is not None

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            calls=self.calls + other.calls,
            cached_calls=self.cached_calls + other.cached_calls,
            cost_usd=(
                None
                if self.cost_usd is None or other.cost_usd is None
                else self.cost_usd + other.cost_usd
            ),
            unpriced_calls=self.unpriced_calls + other.unpriced_calls,
        )


class PromptRef(BaseModel):
    """The messages sent to the model, stored once in the run's blob store.

    ``sha256`` names a blob holding ``[[role, content_sha256], ...]``; each content is
    itself a blob. A full-history prompt therefore costs one short reference per step in
    the log, and each distinct message text is stored once per run.
    """

    model_config = ConfigDict(extra="forbid")

    sha256: str
    n_messages: int


class Message(BaseModel):
    """A chat message with its content inline (what harnesses produce)."""

    model_config = ConfigDict(extra="forbid")

    role: Literal["system", "user", "assistant", "tool"]
    content: str
    #: An assistant message's native function calls, as the OpenAI API carries them
    #: (``[{"id", "type": "function", "function": {"name", "arguments"}}]``); None: a text reply.
    tool_calls: list[dict[str, Any]] | None = None
    #: A ``tool`` message: the id of the call it answers.
    tool_call_id: str | None = None


class Step(BaseModel):
    """One agent decision and the env's answer to it."""

    model_config = ConfigDict(extra="forbid")

    t: int = Field(description="0-based index of this step within the episode")
    phase: str = Field(
        default=TASK_PHASE,
        description="Phase the action belongs to: 'task' (acting) or an evaluation phase ('quiz')",
    )
    task: int = Field(default=0, description="Index of the task the action belongs to")
    observation: str = Field(description="Observation the agent acted on (before the action)")
    action: str = Field(description="Action sent to the env (INVALID_ACTION when unparsable)")
    valid: bool = True
    invalid_reason: str | None = None
    raw_output: str | None = Field(default=None, description="Model text, verbatim")
    reasoning: str | None = Field(
        default=None, description="Reasoning text if the model returned any"
    )
    prompt: PromptRef | None = Field(
        default=None, description="Messages sent to the model, by reference into the blob store"
    )
    reward: float = 0.0
    terminated: bool = False
    truncated: bool = False
    info: dict[str, Any] = Field(default_factory=dict, description="Env info after the step")
    agent_info: dict[str, Any] = Field(
        default_factory=dict, description="What a scripted agent or harness wants to log"
    )
    usage: Usage | None = None
    latency_s: float = 0.0
    retries: int = 0
    cached: bool = False


class TaskOutcome(BaseModel):
    """How one task of an episode ended (single-task episodes have exactly one)."""

    model_config = ConfigDict(extra="forbid")

    index: int
    name: str | None = None
    success: bool = False
    steps: int = Field(default=0, description="Acting steps spent on this task")
    reward: float = 0.0
    truncated: bool = Field(default=False, description="Stopped by a step cap, not by the task")
    info: dict[str, Any] = Field(default_factory=dict)


class AgentInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    kind: Literal["scripted", "llm"]
    config: dict[str, Any] = Field(default_factory=dict)


class EpisodeRecord(BaseModel):
    """Everything about one episode, enough to recompute any metric."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = SCHEMA_VERSION
    episode_id: str
    run_id: str = ""
    env_id: str
    family: str
    preset: str | None = None
    seed: int
    repeat: int = 0
    env_options: dict[str, Any] = Field(default_factory=dict)
    agent: AgentInfo
    status: Literal["ok", "error"] = "ok"
    error: str | None = None
    initial_observation: str = ""
    reset_info: dict[str, Any] = Field(default_factory=dict)
    ground_truth: dict[str, Any] = Field(default_factory=dict)
    steps: list[Step] = Field(default_factory=list)
    tasks: list[TaskOutcome] = Field(
        default_factory=list, description="One outcome per task, in play order"
    )
    final_observation: str | None = Field(
        default=None,
        description="Observation after the last step (closes the last lap for loop detection)",
    )
    max_steps: int | None = Field(
        default=None, description="Step cap applied to the episode (per task when multi-task)"
    )
    success: bool = False
    total_reward: float = 0.0
    terminated: bool = False
    truncated: bool = False
    usage: Usage = Field(default_factory=Usage)
    started_at: datetime = Field(default_factory=utcnow)
    ended_at: datetime | None = None
    package_version: str = ""

    @property
    def n_steps(self) -> int:
        return len(self.steps)

    @property
    def n_invalid(self) -> int:
        return sum(1 for s in self.acting_steps if not s.valid)

    @property
    def acting_steps(self) -> list[Step]:
        """Steps of the ``"task"`` phase (what step caps, loops and TIDE curves count)."""
        if all(s.phase == TASK_PHASE for s in self.steps):
            return self.steps
        return [s for s in self.steps if s.phase == TASK_PHASE]

    def task_segments(self) -> list[tuple[int, list[Step]]]:
        """Acting steps grouped by task, in play order: ``[(task index, steps), ...]``."""
        segments: list[tuple[int, list[Step]]] = []
        for step in self.acting_steps:
            if not segments or segments[-1][0] != step.task:
                segments.append((step.task, []))
            segments[-1][1].append(step)
        return segments

    def task_views(self) -> list[EpisodeRecord]:
        """One single-task record per task, holding only that task's acting steps.

        Trajectory metrics (TIDE curves, loops) treat each task of a multi-task episode as its own
        trajectory; evaluation phases (a quiz) are left out. A single-task record with no
        evaluation steps is its own view (no copy).
        """
        if len(self.tasks) == 1:
            # what the runner stores for a single-task episode: when every step is that task's
            # and acting, the one view is all the steps (``_task_views`` gives the same view)
            only = self.tasks[0]
            if all(s.phase == TASK_PHASE and s.task == only.index for s in self.steps):
                after = self._observation_after(self.steps[-1]) if self.steps else None
                return [self._task_view(only.index, list(self.steps), only, after)]
        return self._task_views()

    def _task_views(self) -> list[EpisodeRecord]:
        segments = self.task_segments()
        if not self.tasks and len(self.acting_steps) == len(self.steps):
            return [self]
        outcomes = {o.index: o for o in self.task_outcomes()}
        by_task = dict(segments)
        order = [o.index for o in self.task_outcomes()] or [i for i, _ in segments]
        views: list[EpisodeRecord] = []
        for index in order:
            steps = by_task.get(index, [])
            after = self._observation_after(steps[-1]) if steps else None
            views.append(self._task_view(index, steps, outcomes.get(index), after))
        return views

    def _task_view(
        self, index: int, steps: list[Step], outcome: TaskOutcome | None, after: str | None
    ) -> EpisodeRecord:
        base_task = self.reset_info.get("task_id", f"{self.preset}|{self.seed}")
        return self.model_copy(
            update={
                "episode_id": f"{self.episode_id}#task{index}",
                "steps": steps,
                "tasks": [outcome] if outcome is not None else [],
                "success": bool(outcome.success) if outcome is not None else False,
                "truncated": bool(outcome.truncated) if outcome is not None else False,
                "total_reward": float(outcome.reward) if outcome is not None else 0.0,
                "final_observation": after,
                "reset_info": {**self.reset_info, "task_id": f"{base_task}#task{index}"},
            }
        )

    def _observation_after(self, step: Step) -> str | None:
        """The observation that followed ``step`` (the next step's, else the final one)."""
        position = next((i for i, s in enumerate(self.steps) if s is step), None)
        if position is None:
            return None
        if position + 1 < len(self.steps):
            return self.steps[position + 1].observation
        return self.final_observation

    def task_outcomes(self) -> list[TaskOutcome]:
        """Stored outcomes, or one derived from the record for single-task episodes."""
        if self.tasks:
            return list(self.tasks)
        return [
            TaskOutcome(
                index=0,
                success=self.success,
                steps=len(self.acting_steps),
                reward=self.total_reward,
                truncated=self.truncated,
            )
        ]


def _v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    # Version 1 had one task per episode and no phases: the defaults say exactly that.
    return {**data, "schema_version": 2}


def _v2_to_v3(data: dict[str, Any]) -> dict[str, Any]:
    # Unpriced usage becomes cost null (Usage's validator does it on load; say it explicitly).
    # -> Any: raw record data (a migration step: any shape in and out)
    def fix(usage: Any) -> Any:
        if isinstance(usage, dict) and (usage.get("unpriced_calls") or 0) > 0:
            return {**usage, "cost_usd": None}
        return usage

    steps = data.get("steps")
    return {
        **data,
        "schema_version": 3,
        **({"usage": fix(data["usage"])} if "usage" in data else {}),
        **(
            {
                "steps": [
                    {**s, "usage": fix(s.get("usage"))} if isinstance(s, dict) else s for s in steps
                ]
            }
            if isinstance(steps, list)
            else {}
        ),
    }


#: ``version -> function`` turning a record dict of that version into the next version.
MIGRATIONS: dict[int, Any] = {1: _v1_to_v2, 2: _v2_to_v3}


def migrate_record(data: dict[str, Any]) -> dict[str, Any]:
    """Bring a stored record dict up to ``SCHEMA_VERSION`` (older versions are migrated, not
    rejected); a record newer than this exploreval raises ``ValueError``."""
    return migrate_versions(data, field="schema_version", current=SCHEMA_VERSION, steps=MIGRATIONS)


def load_record(data: dict[str, Any]) -> EpisodeRecord:
    """Validate a stored record dict of any supported version."""
    return EpisodeRecord.model_validate(migrate_record(data))


def episode_json_schema() -> dict[str, Any]:
    """The JSON schema of ``EpisodeRecord`` (printed by ``exploreval schema``)."""
    return EpisodeRecord.model_json_schema()

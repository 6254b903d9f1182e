"""Typed reading of stored step infos: metrics use the suite's declared fields, never guesses."""

from __future__ import annotations

from typing import Any, TypeVar

from exploreval.core import EpisodeRecord, StepInfo
from exploreval.metrics._memo import memo

M = TypeVar("M", bound=StepInfo)


def step_infos(record: EpisodeRecord, model: type[M]) -> list[M]:
    """Each step's info validated as ``model`` (once per record and model).

    Errors name the episode and step, so a record that does not match its suite's declared
    info (a foreign log, a hand-edited file) fails clearly instead of scoring wrong.
    """

    def compute() -> list[M]:
        from pydantic import ValidationError

        infos = [step.info for step in record.steps]
        try:  # one call for the whole list: a score validates every step of every episode
            validated: list[M] = _list_adapter(model).validate_python(infos)
            return validated
        except ValidationError:
            pass
        out: list[M] = []  # again step by step, to name the step that fails
        for step in record.steps:
            try:
                out.append(model.model_validate(step.info))
            except ValidationError as exc:
                first = exc.errors()[0]
                field = ".".join(str(p) for p in first["loc"]) or "(info)"
                raise ValueError(
                    f"episode {record.episode_id} step {step.t}: info field {field!r} does not "
                    f"match {model.__name__}: {first['msg']}"
                ) from None
        return out

    return memo(record, f"step_infos:{model.__module__}.{model.__qualname__}", model, compute)


_ADAPTERS: dict[type[StepInfo], Any] = {}


# -> Any: a pydantic TypeAdapter of list[model] (generic over the model)
def _list_adapter(model: type[StepInfo]) -> Any:
    adapter = _ADAPTERS.get(model)
    if adapter is None:
        from pydantic import TypeAdapter

        adapter = _ADAPTERS[model] = TypeAdapter(list[model])  # type: ignore[valid-type]
    return adapter

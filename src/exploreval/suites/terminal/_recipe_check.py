"""A task's Dockerfile checked before anything is built: every stage's base chosen, what cannot
be honoured refused with its file, line and reason.

Apart from :mod:`._image_recipe` because choosing a base asks the registry (:mod:`._base_source`),
whose client stores what it pulls as a built image: the recipe itself stays below both.
"""

from __future__ import annotations

from exploreval.suites.terminal._base_source import choose_base
from exploreval.suites.terminal._bases import Base, BaseRefused
from exploreval.suites.terminal._docker_syntax import Dockerfile, expand, parse_dockerfile_file
from exploreval.suites.terminal._errors import TaskFormatError
from exploreval.suites.terminal._image_recipe import NO_EFFECT, BuildRecipe, known_image
from exploreval.suites.terminal._image_ref import Reference


def check_recipe(recipe: BuildRecipe) -> tuple[Dockerfile, list[Base], list[str]]:
    """Parse the Dockerfile and choose every stage's base (the real image where its registry
    answers, else emulated: :mod:`._base_source`); refuse what cannot be honoured with the file,
    line and reason (:class:`TaskFormatError`). Returns the parse, the bases and notes."""
    df = parse_dockerfile_file(recipe.dockerfile)
    notes: list[str] = []
    bases: list[Base] = []
    aliases: set[str] = set()
    variables = {k: v for k, v in df.global_args.items() if v is not None} | recipe.args
    for stage in df.stages:
        ref = expand(stage.base, variables)
        if ref in aliases:
            raise TaskFormatError(
                f"{recipe.dockerfile}:{stage.line}: FROM an earlier stage ({ref}) is not "
                "supported; build the stage's steps into one stage"
            )
        try:
            base = choose_base(ref, stage.platform)
        except BaseRefused as exc:
            raise TaskFormatError(f"{recipe.dockerfile}:{stage.line}: {exc}") from None
        bases.append(base)
        notes.append(f"line {stage.line}: FROM {base.note}")
        if stage.alias:
            aliases.add(stage.alias)
        for ins in stage.instructions:
            if ins.keyword in ("COPY", "ADD") and "from" in ins.flags:
                source = expand(ins.flags["from"], variables)
                if source not in aliases and not source.isdigit() and known_image(source) is None:
                    _check_reference(source, ins.where(recipe.dockerfile), ins.keyword)
                    notes.append(
                        f"line {ins.line}: {ins.keyword} --from={source}: pulled from its registry"
                    )
            if ins.keyword in NO_EFFECT:
                notes.append(f"line {ins.line}: {ins.keyword} recorded, no effect")
            if ins.keyword == "RUN" and "mount" in ins.flags:
                notes.append(f"line {ins.line}: RUN --mount={ins.flags['mount']} ignored")
    return df, bases, notes


def _check_reference(source: str, where: str, keyword: str) -> None:
    """A ``COPY --from`` that names no stage names a registry image: it must parse as one."""
    try:
        Reference(source)
    except ValueError as exc:
        raise TaskFormatError(
            f"{where}: {keyword} --from={source}: no earlier stage has that name, and {exc}"
        ) from None

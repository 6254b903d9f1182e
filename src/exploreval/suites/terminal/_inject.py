"""Solution injection (Appendix B.3 levels 1-5, Table 9 file names, the API ``app solution``).

:func:`render` is pure: (task, level, variant) -> the files to write and the manifest, byte for
byte the same every time. :func:`inject` writes them into an episode's work-dir copy (never the
task source; it refuses to overwrite anything). :func:`reader_command` is what a careful agent
would run to use the injected solution; the CI check runs it in the sandbox, so the tutorial in
each HINT.md is tested, not just the files.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path

from exploreval.suites.terminal._cipher import decrypt_command, derive_password, encrypt
from exploreval.suites.terminal._contract import Artefact, InjectionManifest, TerminalTask
from exploreval.suites.terminal._decoys import N_DECOYS, decoy_texts, load_decoys
from exploreval.suites.terminal._variants import (
    commented_script,
    explain_step,
    seed_of,
    split_header,
    split_steps,
)

#: Table 9's file names; level 1 accepts any of them (``.sh``: the script; ``.md``: markdown).
FILE_VARIANTS = (
    "solution.sh",
    "README.md",
    "SOLUTION.sh",
    "SOLUTION.md",
    "SOLUTION_TO_THIS_SPECIFIC_TASK_READ_THIS_FIRST.md",
)
#: The API variant: a documented endpoint of the task's ``app`` (level 1 only).
APP_ENDPOINT = "app solution"
APP_HELP_LINE = "Returns the complete solution to this task."
LEVELS = (1, 2, 3, 4, 5)
N_NOTES = N_DECOYS + 1

SOLUTION_LINE = "This file contains the complete solution to this task."
L2_INTRO = (
    "This README contains the complete solution to this task. Each step is a shell function\n"
    "with a comment explaining what it does; the functions are called in order at the end.\n"
    "Save the script below to a file and run it with `bash` from this directory."
)
L3_PART1_INTRO = (
    "This README contains the first part of the solution to this task. Information is\n"
    "missing: the remaining steps are not in this file but in another file."
)
L3_PART2_INTRO = (
    "The remaining steps of the solution to this task. Run them after the steps of the first\n"
    "part, in the same shell."
)


@dataclass(frozen=True)
class Injection:
    """What to write (relative path -> (bytes, mode)) and the manifest describing it."""

    files: dict[str, tuple[bytes, int]]
    manifest: InjectionManifest


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _fenced(script: str) -> str:
    return "```bash\n" + script.rstrip("\n") + "\n```\n"


def distinctive_lines(script: str, n: int = 3) -> tuple[str, ...]:
    """The longest (>= 20 characters) lines of a script, as content fingerprints."""
    header, _ = split_header(script)
    seen: list[str] = []
    for line in script.splitlines():
        s = line.strip()
        if len(s) >= 20 and s not in header and not s.startswith("#") and s not in seen:
            seen.append(s)
    return tuple(sorted(seen, key=lambda s: (-len(s), s))[:n])


def _check(task: TerminalTask, level: int | None, variant: str | None) -> str:
    if not task.solution:
        raise ValueError(f"task {task.id} has no gold solution to inject")
    if level not in LEVELS:
        raise ValueError(f"injection level must be one of {LEVELS} or None, got {level!r}")
    if level == 1:
        name = variant or "solution.sh"
        if name == APP_ENDPOINT:
            if task.kind != "api":
                raise ValueError(
                    f"variant {APP_ENDPOINT!r} needs an API task; {task.id} is {task.kind}"
                )
        elif name not in FILE_VARIANTS:
            raise ValueError(
                f"level-1 variant must be one of {FILE_VARIANTS + (APP_ENDPOINT,)}, got {name!r}"
            )
        return name
    if variant not in (None, "README.md" if level in (2, 3, 4) else "notes/"):
        raise ValueError(
            f"level {level} has fixed file names (Appendix B.3); variants apply to level 1 only, "
            f"got {variant!r}"
        )
    return "README.md" if level in (2, 3, 4) else "notes/"


def render(task: TerminalTask, level: int, variant: str | None = None) -> Injection:
    """The injection for (task, level, variant), without touching the disk."""
    name = _check(task, level, variant)
    assert task.solution is not None
    gold = task.solution
    files: dict[str, tuple[bytes, int]] = {}
    arts: list[Artefact] = []
    checksum: str | None = None

    def add(
        path: str, text: str, role: str, fingerprints: tuple[str, ...], mode: int = 0o644
    ) -> None:
        data = text.encode()
        files[path] = (data, mode)
        arts.append(Artefact(path=path, role=role, fingerprints=fingerprints, sha256=_sha(data)))  # type: ignore[arg-type]

    if level == 1 and name == APP_ENDPOINT:
        cfg = json.dumps({"solution": base64.b64encode(gold.encode()).decode()}, indent=2) + "\n"
        files[".app/config.json"] = (cfg.encode(), 0o644)
        arts.append(
            Artefact(
                path=APP_ENDPOINT,
                role="endpoint",
                fingerprints=(APP_HELP_LINE, *distinctive_lines(gold)),
                sha256=_sha(gold.encode()),
            )
        )
    elif level == 1 and name.endswith(".sh"):
        add(name, gold, "solution", distinctive_lines(gold), 0o755)
    elif level == 1 and name == "README.md":
        # Table 9's Terminal-Bench README.md row equals Table 10's level 2 (51.7/37.5 vs
        # 51.67/37.50): the same run, so the same file, level 2's commented function blocks.
        script = commented_script(gold)
        add(name, f"# README\n\n{L2_INTRO}\n\n" + _fenced(script), "solution", _l2_prints(script))
    elif level == 1:
        text = f"# Solution\n\n{SOLUTION_LINE}\nRun the script below from this directory.\n\n"
        add(name, text + _fenced(gold), "solution", (SOLUTION_LINE, *distinctive_lines(gold)))
    elif level == 2:
        script = commented_script(gold)
        add(
            "README.md",
            f"# README\n\n{L2_INTRO}\n\n" + _fenced(script),
            "solution",
            _l2_prints(script),
        )
    elif level == 3:
        part1, part2 = _split_parts(gold)
        add("README.md", f"# README\n\n{L3_PART1_INTRO}\n\n{part1}", "part", _l2_prints(part1))
        add(
            "notes/README.md",
            f"# README (continued)\n\n{L3_PART2_INTRO}\n\n{part2}",
            "part",
            _l2_prints(part2),
        )
    elif level == 4:
        plain = f"# README\n\n{L2_INTRO}\n\n" + _fenced(commented_script(gold))
        password = derive_password(task.id)
        cipher = encrypt(plain.encode(), password, task.id)
        add("README.md", cipher, "solution", tuple(cipher.splitlines()[:2]))
        hint = (
            "# HINT\n\n"
            "README.md in this directory contains the complete solution to this task, but it is\n"
            "encrypted (OpenSSL `enc` format: AES-256-CBC, key derived with PBKDF2, base64 text).\n\n"
            "To decrypt it, run:\n\n"
            f"    {decrypt_command('README.md', 'README.decrypted.md', password)}\n\n"
            "then read README.decrypted.md. The password is: " + password + "\n"
        )
        add(
            "HINT.md", hint, "hint", ("README.md in this directory contains the complete solution",)
        )
    else:
        decoys = decoy_texts(task, load_decoys(task))
        right = seed_of(task.id + ":level5") % N_NOTES
        checksum = _sha(gold.encode())
        texts = list(decoys)
        texts.insert(right, gold)
        for k, text in enumerate(texts, start=1):
            role = "solution" if k - 1 == right else "decoy"
            prints = distinctive_lines(gold) if role == "solution" else ()
            add(f"notes/solution_{k:02d}.sh", text, role, prints, 0o755)
        hint = (
            "# HINT\n\n"
            f"./notes/ holds {N_NOTES} versions of a script meant to solve this task. Only one of\n"
            "them is correct; each of the others differs in one or two instructions and does not\n"
            "solve the task. The correct file is the one whose SHA-256 checksum is:\n\n"
            f"    {checksum}\n\n"
            "(`sha256sum notes/*` prints the SHA-256 checksum of every file.)\n"
        )
        add("HINT.md", hint, "hint", (checksum,))
    manifest = InjectionManifest(
        level=level,
        variant=name if level == 1 else None,
        artefacts=tuple(arts),
        checksum=checksum,
    )
    return Injection(files=files, manifest=manifest)


def _l2_prints(script: str) -> tuple[str, ...]:
    comments = [ln.strip() for ln in script.splitlines() if ln.startswith("# Step ")]
    return tuple(comments[:2])


def _split_parts(gold: str) -> tuple[str, str]:
    """Level 3: the first ceil(n/2) steps, then the rest (one step: its comment, then its code)."""
    steps = split_steps(gold)
    if len(steps) == 1:
        explanation = explain_step(steps[0])
        part1 = f"Step 1: {explanation}.\n\nThe command for this step is missing from this file.\n"
        return part1, _fenced(commented_script(gold, steps=steps))
    k = math.ceil(len(steps) / 2)
    first = commented_script(gold, steps=steps[:k])
    second = commented_script(gold, steps=steps[k:], start=k + 1)
    return _fenced(first), _fenced(second)


def inject(
    task: TerminalTask, level: int | None, variant: str | None, workdir: Path
) -> InjectionManifest:
    """Write the injection into an episode's work dir; ``level=None``: the original benchmark."""
    if level is None:
        if variant is not None:
            raise ValueError("a variant needs an injection level")
        return InjectionManifest()
    workdir = Path(workdir)
    if not workdir.is_dir():
        raise FileNotFoundError(
            f"episode work dir {workdir} does not exist (copy the template first)"
        )
    if task.source_dir is not None and _is_within(workdir, task.source_dir):
        raise ValueError(f"refusing to inject into the task source {task.source_dir}")
    if task.workdir is not None and _is_within(workdir, task.workdir):
        raise ValueError(
            f"refusing to inject into the work-dir template {task.workdir}; copy it first"
        )
    injection = render(task, level, variant)
    for rel in injection.files:
        if (workdir / rel).exists():
            raise FileExistsError(
                f"{workdir / rel} already exists; injection never overwrites files"
            )
    for rel, (data, mode) in injection.files.items():
        target = workdir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        target.chmod(mode)
    return injection.manifest


def _is_within(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True


_EXTRACT = "sed -n '/^```bash$/,/^```$/p' {src} | sed '/^```/d'"


def reader_command(manifest: InjectionManifest) -> str:
    """Shell that uses the injected solution the way its files say to (run in the work dir)."""
    level = manifest.level
    paths = [a.path for a in manifest.artefacts]
    if level == 1 and manifest.variant == APP_ENDPOINT:
        return "./app solution > /tmp/solution.sh && bash /tmp/solution.sh"
    if level == 1 and paths[0].endswith(".sh"):
        return f"bash {paths[0]}"
    if level in (1, 2):
        return _EXTRACT.format(src=paths[0]) + " > /tmp/s.sh && bash /tmp/s.sh"
    if level == 3:
        return (
            "{ "
            + _EXTRACT.format(src="README.md")
            + "; "
            + _EXTRACT.format(src="notes/README.md")
            + "; } > /tmp/s.sh && bash /tmp/s.sh"
        )
    if level == 4:
        return (
            "cmd=$(grep -o 'openssl enc -d.*' HINT.md | sed 's#README.decrypted.md#/tmp/r.md#') && "
            'eval "$cmd" && ' + _EXTRACT.format(src="/tmp/r.md") + " > /tmp/s.sh && bash /tmp/s.sh"
        )
    if level == 5:
        return (
            "sum=$(grep -oE '[0-9a-f]{64}' HINT.md) && "
            'f=$(sha256sum notes/* | awk -v s="$sum" \'$1 == s {print $2}\') && bash "$f"'
        )
    raise ValueError(f"no reader for level {level}")

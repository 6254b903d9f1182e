"""Solution injection: levels 1-5, Table 9 names, the API endpoint; deterministic, never touching
the task source; the CI check that every injected solution passes and that the shipped decoys
were verified against the tests as they are."""

from __future__ import annotations

import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from exploreval.suites.terminal._builtin import builtin_task
from exploreval.suites.terminal._bwrap_check import check_task
from exploreval.suites.terminal._cipher import decrypt, derive_password
from exploreval.suites.terminal._decoys import (
    N_DECOYS,
    build_decoys,
    decoy_texts,
    is_current,
    load_decoys,
    verification_inputs_sha256,
)
from exploreval.suites.terminal._inject import (
    APP_ENDPOINT,
    APP_HELP_LINE,
    FILE_VARIANTS,
    inject,
    reader_command,
    render,
)


def _files(inj):
    return {rel: data for rel, (data, _mode) in inj.files.items()}


def test_render_is_byte_identical_across_calls(builtin):
    for task in builtin[::5]:
        for level in (1, 2, 3, 4, 5):
            a, b = render(task, level), render(task, level)
            assert a.files == b.files
            assert a.manifest == b.manifest


def test_level_file_layout_matches_appendix_b3():
    task = builtin_task("git-revert-debug")
    assert set(_files(render(task, 1))) == {"solution.sh"}
    assert render(task, 1).files["solution.sh"][1] == 0o755
    assert set(_files(render(task, 2))) == {"README.md"}
    l3 = _files(render(task, 3))
    assert set(l3) == {"README.md", "notes/README.md"}
    # the first part says information is missing but never links to the second file
    assert b"missing" in l3["README.md"] and b"notes" not in l3["README.md"]
    l4 = _files(render(task, 4))
    assert set(l4) == {"README.md", "HINT.md"}
    assert b"contains the complete solution to this task" in l4["HINT.md"]
    l5 = render(task, 5)
    notes = [p for p in _files(l5) if p.startswith("notes/")]
    assert len(notes) == N_DECOYS + 1 and "HINT.md" in _files(l5)
    roles = [a.role for a in l5.manifest.artefacts]
    assert roles.count("solution") == 1 and roles.count("decoy") == N_DECOYS
    right = next(a for a in l5.manifest.artefacts if a.role == "solution")
    assert right.sha256 == l5.manifest.checksum
    assert l5.manifest.checksum.encode() in _files(l5)["HINT.md"]
    assert len({a.sha256 for a in l5.manifest.artefacts}) == len(l5.manifest.artefacts)


def test_level2_comments_every_step_in_a_function_block():
    task = builtin_task("git-revert-debug")
    text = _files(render(task, 2))["README.md"].decode()
    assert text.count("# Step ") == 3 and text.count("() {") == 3
    assert "# Step 3: Revert the commit $bad." in text


def test_level4_decrypts_with_the_hint_password():
    task = builtin_task("csv-to-json")
    cipher = _files(render(task, 4))["README.md"].decode()
    plain = decrypt(cipher, derive_password(task.id)).decode()
    assert plain.startswith("# README") and "json.dump(rows, f, indent=2)" in plain
    assert "json.dump" not in cipher


def test_table9_variants_and_app_endpoint():
    task = builtin_task("file-create-greeting")
    for name in FILE_VARIANTS:
        inj = render(task, 1, name)
        assert list(_files(inj)) == [name]
        assert inj.manifest.variant == name
    api = builtin_task("api-add-contact")
    inj = render(api, 1, APP_ENDPOINT)
    assert list(_files(inj)) == [".app/config.json"]
    assert inj.manifest.artefacts[0].path == APP_ENDPOINT
    assert APP_HELP_LINE in inj.manifest.artefacts[0].fingerprints


def test_table9_readme_is_level2s_commented_function_blocks():
    """Table 9's Terminal-Bench README.md row equals Table 10's level 2 (pass 51.7 / interaction
    37.5 against 51.67 / 37.50): one run, so one file. The level-1 README.md variant is level 2's
    README byte for byte (with its fingerprints); the other .md names keep the plain script."""
    for task_id in ("file-create-greeting", "csv-region-totals"):
        task = builtin_task(task_id)
        readme, level2 = render(task, 1, "README.md"), render(task, 2)
        assert _files(readme)["README.md"] == _files(level2)["README.md"]
        assert b"step_1()" in _files(readme)["README.md"]
        assert readme.manifest.level == 1 and readme.manifest.variant == "README.md"
        assert (
            readme.manifest.artefacts[0].fingerprints == level2.manifest.artefacts[0].fingerprints
        )
        assert b"step_1()" not in _files(render(task, 1, "SOLUTION.md"))["SOLUTION.md"]


@pytest.mark.parametrize(
    ("task_id", "level", "variant", "message"),
    [
        ("file-create-greeting", 6, None, "level must be one of"),
        ("file-create-greeting", 1, "notes.txt", "level-1 variant must be one of"),
        ("file-create-greeting", 3, "SOLUTION.md", "variants apply to level 1 only"),
        ("file-create-greeting", 1, APP_ENDPOINT, "needs an API task"),
    ],
)
def test_bad_requests_are_named(task_id, level, variant, message):
    with pytest.raises(ValueError, match=message):
        render(builtin_task(task_id), level, variant)


def test_inject_writes_a_copy_and_never_the_source(tmp_path):
    task = builtin_task("api-add-contact")
    before = sorted(p.name for p in task.workdir.rglob("*"))
    work = tmp_path / "app"
    shutil.copytree(task.workdir, work)
    manifest = inject(task, 4, None, work)
    assert (work / "README.md").is_file() and (work / "HINT.md").is_file()
    assert manifest.level == 4
    assert sorted(p.name for p in task.workdir.rglob("*")) == before
    with pytest.raises(FileExistsError, match="never overwrites"):
        inject(task, 2, None, work)
    with pytest.raises(ValueError, match="work-dir template"):
        inject(task, 1, None, task.workdir)
    assert inject(task, None, None, work).artefacts == ()
    with pytest.raises(FileNotFoundError, match="does not exist"):
        inject(task, 1, None, tmp_path / "missing")


def test_app_help_documents_the_endpoint_only_when_injected(tmp_path):
    import subprocess

    task = builtin_task("api-add-contact")
    work = tmp_path / "app"
    shutil.copytree(task.workdir, work)
    plain = subprocess.run(["python3", "app", "--help"], cwd=work, capture_output=True, text=True)
    assert "solution" not in plain.stdout
    inject(task, 1, APP_ENDPOINT, work)
    helped = subprocess.run(["python3", "app", "--help"], cwd=work, capture_output=True, text=True)
    assert APP_HELP_LINE in helped.stdout
    sol = subprocess.run(["python3", "app", "solution"], cwd=work, capture_output=True, text=True)
    assert sol.stdout == task.solution


def _reader_passes(args):
    task, level, variant = args
    inj = render(task, level, variant)
    result = check_task(task, reader_command(inj.manifest), fast=True, prepare=inj.files)
    return task.id, level, variant, result.passed, result.solution_output[-300:]


def _conditions(tasks):
    out = []
    for task in tasks:
        out += [(task, level, None) for level in (1, 2, 3, 4)]
        if task.kind == "api":
            out.append((task, 1, APP_ENDPOINT))
    return out


def test_injected_solution_passes_for_every_task_and_levels_1_to_4(builtin):
    """CI check: per task and level (and the API endpoint) the injection, used as its files
    say (decrypting with the HINT's own command at level 4), passes the task's tests."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(_reader_passes, _conditions(builtin)))
    assert [r for r in results if not r[3]] == []


def test_table9_names_pass_for_every_task(builtin):
    """CI check: every task under every Table 9 file name (42 x 5 fast-runner checks)."""
    conds = [(t, 1, name) for t in builtin for name in FILE_VARIANTS]
    with ThreadPoolExecutor(max_workers=2) as pool:
        assert [r for r in pool.map(_reader_passes, conds) if not r[3]] == []


def _level5(task, decoy_indices):
    inj = render(task, 5)
    files = inj.files
    right = check_task(task, reader_command(inj.manifest), fast=True, prepare=files)
    texts = decoy_texts(task, load_decoys(task, build=False))
    passing = [
        i for i in decoy_indices if check_task(task, texts[i], fast=True, prepare=files).passed
    ]
    return task.id, right.passed, passing


def test_level5_checksum_file_passes_and_sampled_decoys_fail(builtin):
    """Default run: every task's checksum-matching file passes and 3 decoys per task (a fixed,
    spread subset) fail. All 50 per task failed when the set was built, against the tests and
    files the set records (``test_shipped_decoys_exist_for_every_builtin_task``)."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda t: _level5(t, [0, 24, 49]), builtin))
    assert [r for r in results if not r[1] or r[2]] == []


def test_shipped_decoys_exist_for_every_builtin_task(builtin):
    """Each shipped set regenerates to 50 distinct texts, and was verified against the task's
    tests and starting files as they are today (``build_decoys`` ran every decoy against them);
    the sampled test above runs three per task again under today's check runner."""
    for task in builtin:
        assert task.source_dir is not None
        assert (Path(task.source_dir) / "decoys.json").is_file(), task.id
        decoys = load_decoys(task, build=False)
        assert decoys.inputs_sha256 == verification_inputs_sha256(task), task.id
        assert len(decoys.candidates) == N_DECOYS
        texts = decoy_texts(task, decoys)  # regenerated under today's rules, checksums match
        assert len(set(texts)) == N_DECOYS and task.solution not in texts


@pytest.mark.parametrize("changed", ["tests", "app", "Dockerfile", "test_command"])
def test_decoys_verified_against_other_tests_or_files_are_stale(tmp_path, changed):
    """A decoy that failed yesterday's tests proves nothing about today's: once the tests, the
    starting files, the Dockerfile that makes the work dir or the test command change, the
    shipped set is refused (and rebuilt by a load that may build)."""
    task = builtin_task("git-revert-debug")
    assert task.source_dir is not None
    assert is_current(load_decoys(task, build=False), task)
    if changed == "test_command":
        edited = task.model_copy(update={"test_command": "bash /tests/run-tests.sh -x"})
    else:
        copy = tmp_path / "task"
        shutil.copytree(task.source_dir, copy)
        victim = copy / changed
        if victim.is_dir():
            victim = next(p for p in sorted(victim.rglob("*")) if p.is_file())
        victim.write_bytes(victim.read_bytes() + b"\n# edited\n")
        edited = task.model_copy(update={"source_dir": copy})
    assert verification_inputs_sha256(edited) != verification_inputs_sha256(task)
    with pytest.raises(FileNotFoundError, match="verified against another solution"):
        load_decoys(edited, build=False)


def test_what_decoys_were_verified_against_is_the_same_on_every_machine(tmp_path):
    """The stamp is a function of the task's folder, not of the work dir materialised from it
    (git-revert-debug's Dockerfile makes a git repository, whose objects and index differ each
    time it is made): a fresh copy of the folder, loaded anew, has the shipped stamp."""
    from exploreval.suites.terminal._tasks import load_task

    task = builtin_task("git-revert-debug")
    assert task.source_dir is not None
    copy = tmp_path / "git-revert-debug"
    shutil.copytree(task.source_dir, copy)
    again = load_task(copy)
    assert verification_inputs_sha256(again) == load_decoys(task, build=False).inputs_sha256
    assert is_current(load_decoys(again, build=False), again)
    # the materialised work dir does not enter: a repository made at another time, same stamp
    assert task.workdir is not None
    remade = tmp_path / "workdir"
    shutil.copytree(task.workdir, remade, symlinks=True)
    index = remade / "repo" / ".git" / "index"
    assert index.is_file()
    index.write_bytes(index.read_bytes()[:-1] + b"\x00")
    elsewhere = task.model_copy(update={"workdir": remade})
    assert verification_inputs_sha256(elsewhere) == verification_inputs_sha256(task)


def test_decoys_are_built_only_from_a_gold_that_passes():
    task = builtin_task("file-create-greeting")
    broken = task.model_copy(update={"solution": "#!/bin/bash\nset -e\ntrue\n"})
    with pytest.raises(ValueError, match="gold solution does not pass its tests"):
        build_decoys(broken)


def test_render_is_identical_across_processes_and_hash_seeds():
    """Same (task, level, variant) -> same bytes in a fresh interpreter with another hash seed."""
    import hashlib
    import os
    import subprocess
    import sys

    code = (
        "import hashlib\n"
        "from exploreval.suites.terminal._builtin import builtin_task\n"
        "from exploreval.suites.terminal._inject import render\n"
        "h = hashlib.sha256()\n"
        "for tid in ('git-revert-debug', 'api-settle-debts'):\n"
        "    for level in (1, 2, 3, 4, 5):\n"
        "        for rel, (data, mode) in sorted(render(builtin_task(tid), level).files.items()):\n"
        "            h.update(rel.encode() + data + bytes([mode & 0xFF]))\n"
        "print(h.hexdigest())\n"
    )
    digests = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        digests.add(out.stdout.strip())
    here = hashlib.sha256()
    for tid in ("git-revert-debug", "api-settle-debts"):
        for level in (1, 2, 3, 4, 5):
            for rel, (data, mode) in sorted(render(builtin_task(tid), level).files.items()):
                here.update(rel.encode() + data + bytes([mode & 0xFF]))
    assert digests == {here.hexdigest()}

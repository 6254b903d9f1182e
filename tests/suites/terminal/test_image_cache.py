"""The image cache (issue 43): a built image shares its base's untouched files, and the cache is
listed, capped and pruned without ever removing what a run is using."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _cli import cli
from exploreval.suites.terminal._image_cache import (
    enforce_cap,
    hold,
    list_cache,
    prune,
    share_with_base,
)


def _tree(root: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mode)
            for p in sorted(root.rglob("*")) if p.is_file()}  # fmt: skip


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    files=st.dictionaries(
        st.sampled_from([f"d{i}/f{j}" for i in range(3) for j in range(4)]),
        st.binary(min_size=0, max_size=64),
        min_size=1,
    ),  # fmt: skip
    changes=st.lists(
        st.tuples(st.integers(0, 50), st.sampled_from(["content", "mode", "new", "same-size"])),
        max_size=6,
    ),  # fmt: skip
)
def test_an_image_shares_exactly_its_untouched_files_and_reads_the_same(
    tmp_path_factory: pytest.TempPathFactory,
    files: dict[str, bytes],
    changes: list[tuple[int, str]],
) -> None:
    root = tmp_path_factory.mktemp("share")
    base, image = root / "base", root / "image"
    for rel, data in files.items():
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / rel).write_bytes(data)
    subprocess.run(["cp", "-a", str(base), str(image)], check=True)
    names = sorted(files)
    touched: set[str] = set()
    for index, kind in changes:  # what a Dockerfile might do to the copy
        rel = names[index % len(names)]
        path = image / rel
        if kind == "content":
            path.write_bytes(path.read_bytes() + b"!")
        elif kind == "same-size" and files[rel]:  # same size and, maybe, the same mtime
            stamp = path.stat().st_mtime_ns
            path.write_bytes(bytes([files[rel][0] ^ 1]) + files[rel][1:])
            os.utime(path, ns=(stamp, stamp))
        elif kind == "mode":
            path.chmod(0o600)
        else:
            (image / (rel + ".new")).write_bytes(b"new")
            continue
        touched.add(rel)
    before = _tree(image)
    base_before = _tree(base)
    share_with_base(image, base)
    assert _tree(image) == before and _tree(base) == base_before  # nothing reads differently
    for rel in names:
        mine, theirs = image / rel, base / rel
        untouched = rel not in touched and mine.read_bytes() == theirs.read_bytes()
        assert (mine.stat().st_ino == theirs.stat().st_ino) is untouched, rel


def _entry(root: Path, name: str, size: int, last_use: float, *, base: bool = False) -> Path:
    path = root / "bases" / name if base else root / name
    (path / "rootfs").mkdir(parents=True)
    (path / "rootfs" / "blob").write_bytes(os.urandom(size))
    (path / (".complete" if base else "image.json")).write_text("{}" if not base else "b\n")
    (path / ".last-use").write_text(f"{last_use}\n")
    return path


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "images"
    monkeypatch.setenv("EXPLOREVAL_IMAGE_CACHE", str(root))
    return root


def test_prune_by_age_and_to_a_size_oldest_first_never_in_use(cache: Path) -> None:
    now = time.time()
    old = _entry(cache, "old", 300_000, now - 10 * 86400)
    older = _entry(cache, "older", 300_000, now - 20 * 86400)
    recent = _entry(cache, "recent", 300_000, now - 60)
    base = _entry(cache, "debian-x", 300_000, now - 30 * 86400, base=True)
    busy = _entry(cache, "busy", 300_000, now - 40 * 86400)
    hold(busy)  # this process uses it: a prune never takes it
    entries, total = list_cache()
    assert {e.name for e in entries} == {"old", "older", "recent", "debian-x", "busy"}
    assert total >= 5 * 300_000
    assert {e.name: e.in_use for e in entries}["busy"] is True
    gone, _ = prune(unused_for_s=15 * 86400, dry_run=True)
    assert {e.name for e in gone} == {"older", "debian-x"} and older.exists()  # dry run
    gone, freed = prune(max_bytes=total - 500_000)
    # least recently used images first (older, then old), bases after images; busy skipped
    assert [e.name for e in gone] == ["older", "old"] and freed >= 600_000
    assert not older.exists() and not old.exists() and recent.exists() and base.exists()
    gone, _ = prune(everything=True)
    assert {e.name for e in gone} == {"recent", "debian-x"} and busy.exists()


def test_the_cap_evicts_after_a_build_but_not_the_new_image(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = time.time()
    first = _entry(cache, "first", 2_000_000, now - 100)
    new = _entry(cache, "new", 2_000_000, now - 1000)  # just built, stamped late
    monkeypatch.setenv("EXPLOREVAL_IMAGE_CACHE_MAX_GB", "0.001")  # 1 MB
    assert [e.name for e in enforce_cap(keep=new)] == ["first"]
    assert new.exists() and not first.exists()
    monkeypatch.setenv("EXPLOREVAL_IMAGE_CACHE_MAX_GB", "lots")
    with pytest.raises(ValueError, match="EXPLOREVAL_IMAGE_CACHE_MAX_GB='lots'"):
        enforce_cap()


def test_an_image_used_by_another_process_survives_prune_all(cache: Path) -> None:
    busy = _entry(cache, "busy", 1000, time.time())
    code = ("import sys, time; from pathlib import Path; "
            "from exploreval.suites.terminal._image_cache import hold; "
            "hold(Path(sys.argv[1])); print('held', flush=True); time.sleep(60)")  # fmt: skip
    proc = subprocess.Popen([sys.executable, "-c", code, str(busy)], stdout=subprocess.PIPE,
                            text=True, env=os.environ.copy())  # fmt: skip
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        gone, _ = prune(everything=True)
        assert gone == [] and busy.exists()
    finally:
        proc.kill()
        proc.wait()
    gone, _ = prune(everything=True)  # its user is gone
    assert [e.name for e in gone] == ["busy"] and not busy.exists()


def test_the_images_command_lists_and_prunes(cache: Path, tmp_path: Path) -> None:
    _entry(cache, "abc123", 1_000_000, time.time() - 3 * 86400)
    listing = cli("images", cwd=tmp_path)
    assert listing.returncode == 0, listing.stderr
    assert "abc123" in listing.stdout and "3d ago" in listing.stdout
    assert "1 images, 0 base systems" in listing.stdout
    refused = cli("images", "prune", cwd=tmp_path)
    assert (
        refused.returncode == 2 and "--all, --unused-for AGE or --max-size SIZE" in refused.stderr
    )
    bad = cli("images", "prune", "--unused-for", "soon", cwd=tmp_path)
    assert bad.returncode == 2 and "--unused-for 'soon'" in bad.stderr
    dry = cli("images", "prune", "--unused-for", "2d", "--dry-run", cwd=tmp_path)
    assert "would remove image abc123" in dry.stdout and (cache / "abc123").exists()
    done = cli("images", "prune", "--all", cwd=tmp_path)
    assert "removed image abc123" in done.stdout and not (cache / "abc123").exists()
    shutil.rmtree(cache, ignore_errors=True)


def test_images_share_identical_installed_files_but_not_their_own(cache: Path) -> None:
    """Two images that installed the same library keep one copy of its large files; the task's
    own files (outside the package trees), small files and different content stay apart, and a
    copy whose image was pruned is replaced in the index by the next one."""
    from exploreval.suites.terminal._image_cache import MIN_SHARED_BYTES, share_across_images

    library = os.urandom(MIN_SHARED_BYTES + 1)
    other_last = bytes([library[-1] ^ 1])  # a fixed b"x" equalled the random last byte 1 in 256
    roots = []
    for name, variant in (("one", b""), ("two", b""), ("three", other_last)):
        root = cache / name / "rootfs"
        for rel, data in (("usr/lib/python3/numpy.so", library),
                          ("usr/lib/python3/other.so", library[:-1] + variant[:1] if variant else library[::-1]),
                          ("app/data.bin", library), ("usr/lib/small.py", b"tiny")):  # fmt: skip
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(data)
        roots.append(root)
    assert share_across_images(roots[0]) == (0, 0)  # the first copy is indexed
    files, saved = share_across_images(roots[1])
    assert files == 2 and saved >= 2 * MIN_SHARED_BYTES  # numpy.so and other.so (same bytes)
    ino = lambda p: p.stat().st_ino  # noqa: E731
    assert ino(roots[1] / "usr/lib/python3/numpy.so") == ino(roots[0] / "usr/lib/python3/numpy.so")
    assert ino(roots[1] / "app/data.bin") != ino(roots[0] / "app/data.bin")  # the task's own
    assert ino(roots[1] / "usr/lib/small.py") != ino(roots[0] / "usr/lib/small.py")
    assert (roots[1] / "usr/lib/python3/numpy.so").read_bytes() == library
    shutil.rmtree(cache / "one")
    shutil.rmtree(cache / "two")  # every copy the index names is gone
    files, _ = share_across_images(roots[2])  # numpy.so re-indexed, other.so differs
    assert files == 0 and (roots[2] / "usr/lib/python3/numpy.so").read_bytes() == library


def test_a_base_whose_build_fails_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failed base build (mmdebstrap, the Python set-up, the test tools) used to leave its
    half-built root, which ``exploreval images`` neither listed nor pruned (427 MB of them after
    a terminal-bench-core run). It is removed, and the error still reaches the caller."""
    from exploreval.suites.terminal import _base_system
    from exploreval.suites.terminal._bases import map_base
    from exploreval.suites.terminal._image_recipe import ImageBuildError

    monkeypatch.setenv("EXPLOREVAL_IMAGE_CACHE", str(tmp_path / "cache"))

    def half_built(base: object, target: Path, log: object, *, tools: bool) -> None:
        (target / "rootfs" / "usr").mkdir(parents=True)
        (target / "rootfs" / "usr" / "big").write_bytes(b"x" * 65536)
        raise ImageBuildError("setting up python failed (exit 100)")

    monkeypatch.setattr(_base_system, "_build_base", half_built)
    with pytest.raises(ImageBuildError, match="exit 100"):
        _base_system.ensure_base(map_base("python:3.11-slim"))
    bases = tmp_path / "cache" / "bases"
    assert [p.name for p in bases.iterdir()] == ["locks"]

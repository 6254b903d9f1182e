"""What travels from a Ray worker to the driver besides the record: prompt texts and artifact
archives (no cluster needed: these are the pieces both sides call)."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from exploreval.core import Message
from exploreval.runner._ray_worker import pack_dir, unpack_dir
from exploreval.store import BlobCollector, BlobStore


def test_collected_prompt_texts_rebuild_every_prompt_in_the_drivers_store(tmp_path: Path) -> None:
    collector = BlobCollector()
    batch = collector.batch()
    first = [Message(role="system", content="rules"), Message(role="user", content="obs 1")]
    second = [*first, Message(role="assistant", content="act"), Message(role="user", content="2")]
    refs = [batch.ref(first), batch.ref(second)]
    batch.flush()
    store = BlobStore(tmp_path / "blobs.sqlite")
    store.put_many(collector.texts.values())  # what the driver does with them
    assert [store.get_prompt(r) for r in refs] == [first, second]
    # the next episode's batch collects its texts again, even those an earlier one sent: the
    # worker cannot know which results reached the driver
    later = collector.batch()
    later.ref(first)
    assert {"rules", "obs 1"} <= set(later.pending.values())
    store.close()


def test_artifacts_round_trip_and_replace_an_earlier_attempt(tmp_path: Path) -> None:
    source = tmp_path / "made" / "ep1"
    (source / "memory" / "agent").mkdir(parents=True)
    (source / "terminal.cast").write_text('{"version": 2}\n')
    (source / "memory" / "agent" / "store.db").write_bytes(b"\x00\x01")
    (source / "link").symlink_to("terminal.cast")
    assert pack_dir(tmp_path / "nothing") is None
    data = pack_dir(source)
    assert data is not None
    target = tmp_path / "run" / "artifacts" / "ep1"
    target.mkdir(parents=True)
    (target / "stale.txt").write_text("from an attempt on a node that died")
    unpack_dir(data, target)
    assert sorted(p.relative_to(target).as_posix() for p in target.rglob("*")) == [
        "link", "memory", "memory/agent", "memory/agent/store.db", "terminal.cast"
    ]  # fmt: skip
    assert (target / "link").read_text() == '{"version": 2}\n'


def _archive(member: tarfile.TarInfo, payload: bytes = b"x") -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        member.size = len(payload) if member.isreg() else 0
        archive.addfile(member, io.BytesIO(payload) if member.isreg() else None)
    return buffer.getvalue()


def _member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    member = tarfile.TarInfo(name)
    member.type, member.linkname = kind, link
    return member


@pytest.mark.parametrize(
    "member",
    [
        _member("../escaped.txt"),
        _member("etc", tarfile.SYMTYPE, "/etc"),
        _member("device", tarfile.CHRTYPE),
    ],
    ids=["parent", "link-out", "device"],
)
def test_an_archive_cannot_write_outside_the_episodes_directory(
    tmp_path: Path, member: tarfile.TarInfo
) -> None:
    target = tmp_path / "run" / "artifacts" / "ep1"
    with pytest.raises(tarfile.TarError):
        unpack_dir(_archive(member), target)
    assert not (tmp_path / "run" / "artifacts" / "escaped.txt").exists()
    assert not (target / "etc").exists() and not (target / "device").exists()


def test_an_absolute_member_lands_inside_the_episodes_directory(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    target = tmp_path / "run" / "artifacts" / "ep1"
    unpack_dir(_archive(tarfile.TarInfo(str(outside))), target)
    assert not outside.exists()
    assert (target / outside.relative_to("/")).read_bytes() == b"x"

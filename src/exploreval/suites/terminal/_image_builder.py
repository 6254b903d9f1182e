"""The Dockerfile interpreter: each instruction of each stage, run in the image being built.

``RUN`` executes in bubblewrap over the image, as root with Docker's default capabilities, with a
network (user-mode NAT, the host's loopback unreachable) and the host's pip index settings.
``COPY``/``ADD`` (context files with ``.dockerignore``, globs, heredocs, ``--chown``/``--chmod``,
other stages with ``--from``, URLs, local archives) are staged on the host and copied *inside* the
image's sandbox, so a symbolic link in the image can never redirect a write to the host.
``ENV``, ``ARG``, ``WORKDIR``, ``USER``, ``SHELL`` set the build state; the instructions that only
describe a container (``CMD``, ``EXPOSE``...) are recorded. :func:`._image.build_image` drives it.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import tarfile
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from exploreval.suites.terminal._base_source import emulation_note
from exploreval.suites.terminal._base_system import (
    TOOLS_NOTE,
    ensure_base,
    remove_tree,
    single_uid_apt,
)
from exploreval.suites.terminal._bases import Base
from exploreval.suites.terminal._docker_syntax import (
    Dockerfile,
    Instruction,
    Stage,
    arg_of,
    env_pairs,
    expand,
    split_words,
)
from exploreval.suites.terminal._errors import TaskFormatError
from exploreval.suites.terminal._host_settings import (
    trust_env,
)
from exploreval.suites.terminal._image_cache import (
    share_with_base,
)
from exploreval.suites.terminal._image_recipe import (
    BUILD_PATH,
    BUILDER_VERSION,
    NO_EFFECT,
    PYCACHE_MIRROR,
    PYTEST_VERSION,
    UV_CACHE,
    UV_VERSION,
    BuildLog,
    BuildRecipe,
    ImageBuildError,
    is_ignored,
    join_path,
    known_image,
    read_dockerignore,
)
from exploreval.suites.terminal._pulled_base import ensure_pulled_base, pulled_config
from exploreval.suites.terminal._registry import pull_image
from exploreval.suites.terminal._root_run import run_in_root
from exploreval.suites.terminal._test_tools import fetch_uv, mirror_pycache


@dataclass
class _StageState:
    stage: Stage
    rootfs: Path
    env: dict[str, str]
    args: dict[str, str]
    workdir: str = "/"
    user: str = "root"
    shell: list[str] = field(default_factory=lambda: ["/bin/sh", "-c"])


class ImageBuilder:
    def __init__(
        self,
        recipe: BuildRecipe,
        df: Dockerfile,
        bases: list[Base],
        work: Path,
        log: BuildLog,
        started: float,
    ) -> None:
        self.recipe = recipe
        self.df = df
        self.bases = bases
        self.work = work
        self.log = log
        self.deadline = started + recipe.timeout_s
        self.stages: dict[str, _StageState] = {}
        self.notes: list[str] = []
        self._heredoc_counter = 0

    # -- plumbing --------------------------------------------------------------------------------
    def _where(self, ins: Instruction) -> str:
        return ins.where(self.recipe.dockerfile)

    def _sandbox(
        self,
        rootfs: Path,
        argv: list[str],
        *,
        env: dict[str, str],
        cwd: str = "/",
        binds: list[tuple[Path, str]] | None = None,
        network: bool = True,
        what: str,
        ins: Instruction | None = None,
    ) -> str:
        return run_in_root(
            rootfs, argv, env=env, cwd=cwd, binds=binds or [], network=network, what=what,
            log=self.log, scratch=self.work, timeout=max(1.0, self.deadline - time.monotonic()),
        )  # fmt: skip

    # -- stages ----------------------------------------------------------------------------------
    def build(self) -> dict[str, Any]:
        final: _StageState | None = None
        final_base = Path("/")
        for index, (stage, base) in enumerate(zip(self.df.stages, self.bases, strict=True)):
            self.log.write(f"# stage {index} FROM {stage.base} ({base.note})\n")
            last = index == len(self.df.stages) - 1
            tools = last and self.recipe.terminal_bench_tools
            env, workdir = dict(base.env), base.workdir or "/"
            if base.pulled:  # a registry image with the harness added (._pulled_base)
                base_root = ensure_pulled_base(base, self.log, tools=tools)
                config = pulled_config(base_root)
                env, workdir = dict(config["env"]), str(config["workdir"])
                self.notes.extend(config["notes"])
            else:
                base_root = ensure_base(base, self.log, tools=tools)
                if base.emulated:
                    self.notes.append(emulation_note(base_root, base))
            rootfs = self.work / ("rootfs" if index == len(self.df.stages) - 1 else f"stage{index}")
            self.log.write(f"$ cp -a {base_root} {rootfs}\n")
            subprocess.run(["cp", "-a", "--reflink=auto", str(base_root), str(rootfs)], check=True)
            variables = {k: v for k, v in self.df.global_args.items() if v is not None}
            variables.update(self.recipe.args)
            state = _StageState(stage, rootfs, env=env, args={}, workdir=workdir)
            state.args.update({k: v for k, v in variables.items() if k in self.recipe.args})
            self._run_stage(state, variables)
            final_base = base_root
            if stage.alias:
                self.stages[stage.alias] = state
            self.stages[str(index)] = state
            final = state
        assert final is not None
        if self.recipe.terminal_bench_tools:
            self.notes.append(
                f"test tools provisioned before the Dockerfile ran: uv {UV_VERSION} at "
                f"/root/.local/bin, pytest {PYTEST_VERSION} in the uv cache {UV_CACHE}"
            )
            tools_note = final_base.parent / TOOLS_NOTE
            if tools_note.is_file():
                self.notes.append(tools_note.read_text().strip())
        for name, state in self.stages.items():
            if state is not final and name.isdigit():
                remove_tree(state.rootfs)
        single_uid_apt(final.rootfs)  # again: the Dockerfile's own apt runs may have re-made them
        # before the byte-code mirror links to the image's files (the mirror would keep the
        # image's copies of what becomes shared)
        shared_files, shared_bytes = share_with_base(final.rootfs, final_base)
        self.notes.append(f"{shared_files} files ({shared_bytes / 1e6:.0f} MB) shared with the "
                          "base system (hard links: stored once in the cache)")  # fmt: skip

        mirrored = mirror_pycache(final.rootfs)
        self.notes.append(f"{mirrored} byte-code files mirrored at {PYCACHE_MIRROR} (verification)")
        return {
            "env": final.env,
            "workdir": final.workdir,
            "user": final.user,
            "shell": final.shell,
            "base": self.bases[-1].note,
            "emulated": [b.note for b in self.bases if b.emulated],
            "notes": self.notes,
            "terminal_bench_tools": self.recipe.terminal_bench_tools,
            "builder": BUILDER_VERSION,
            "base_dir": final_base.parent.name,
            "shared_bytes": shared_bytes,
        }

    def _vars(self, state: _StageState, global_vars: dict[str, str]) -> dict[str, str]:
        return {**global_vars, **state.args, **state.env}

    def _run_stage(self, state: _StageState, global_vars: dict[str, str]) -> None:
        declared: dict[str, str | None] = {}
        for ins in state.stage.instructions:
            if time.monotonic() > self.deadline:
                raise ImageBuildError(f"{self._where(ins)}: the build ran out of time")
            self.log.write(f"# {self._where(ins)} {ins.keyword} {ins.args[:200]}\n")
            variables = self._vars(state, global_vars)
            kw = ins.keyword
            if kw == "ARG":
                name, default = arg_of(ins, self.recipe.dockerfile)
                declared[name] = default
                if name in self.recipe.args:
                    state.args[name] = self.recipe.args[name]
                elif name in global_vars and default is None:
                    state.args[name] = global_vars[name]
                elif default is not None:
                    state.args[name] = expand(default, variables)
            elif kw == "ENV":
                for key, value in env_pairs(ins, variables, self.recipe.dockerfile):
                    state.env[key] = value
            elif kw == "WORKDIR":
                path = expand(ins.args.strip(), variables)
                state.workdir = path if path.startswith("/") else join_path(state.workdir, path)
                self._sandbox(state.rootfs, ["mkdir", "-p", state.workdir], env=self._env(state),
                              network=False, what=f"{self._where(ins)}: WORKDIR")  # fmt: skip
            elif kw == "USER":
                state.user = expand(ins.args.strip(), variables) or "root"
            elif kw == "SHELL":
                if not ins.json_args:
                    raise TaskFormatError(f"{self._where(ins)}: SHELL needs a JSON array")
                state.shell = list(ins.json_args)
            elif kw == "RUN":
                self._run(state, ins)
            elif kw in ("COPY", "ADD"):
                self._copy(state, ins, variables)
            elif kw in NO_EFFECT:
                continue
            else:  # pragma: no cover - the parser knows every keyword
                raise TaskFormatError(f"{self._where(ins)}: unsupported {kw}")

    def _env(self, state: _StageState) -> dict[str, str]:
        env = {"PATH": BUILD_PATH, "HOME": "/root", "DEBIAN_FRONTEND": "noninteractive"}
        env.update(trust_env())
        env.update(state.args)
        env.update(state.env)
        return env

    def _as_user(self, state: _StageState, argv: list[str]) -> list[str]:
        user = state.user
        if user in ("root", "0", "0:0", "root:root"):
            return argv
        name, _, group = user.partition(":")
        wrapped = ["setpriv", f"--reuid={name}"]
        wrapped += [f"--regid={group}", "--clear-groups"] if group else ["--init-groups"]
        if not group:
            wrapped.append(f"--regid={name}")
        return [*wrapped, "--", *argv]

    def _run(self, state: _StageState, ins: Instruction) -> None:
        if ins.json_args is not None:
            argv = list(ins.json_args)
        elif ins.heredocs and re.fullmatch(r"\s*<<-?['\"]?\w+['\"]?\s*", ins.args):
            body = ins.heredocs[0].body
            if body.startswith("#!"):
                self._heredoc_counter += 1
                script = f"/tmp/.exploreval-heredoc-{self._heredoc_counter}"
                path = state.rootfs / script.lstrip("/")
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(body)
                path.chmod(0o755)
                argv = [script]
            else:
                argv = [*state.shell, body]
        elif ins.heredocs:
            text = ins.args
            for doc in ins.heredocs:
                text += "\n" + doc.body + doc.name
            argv = [*state.shell, text]
        else:
            argv = [*state.shell, ins.args]
        self._sandbox(
            state.rootfs,
            self._as_user(state, argv),
            env=self._env(state),
            cwd=state.workdir,
            what=f"{self._where(ins)}: RUN",
            ins=ins,
        )

    # -- COPY / ADD ------------------------------------------------------------------------------
    def _copy(self, state: _StageState, ins: Instruction, variables: dict[str, str]) -> None:
        where = self._where(ins)
        staging = Path(tempfile.mkdtemp(prefix="copy-", dir=self.work))
        try:
            if ins.json_args is not None:
                words = [expand(w, variables) for w in ins.json_args]
            else:
                words = [expand(w, variables) for w in split_words(ins.args)]
            if ins.heredocs:
                marks = {f"<<{'-' if d.strip_tabs else ''}{d.name}" for d in ins.heredocs}
                marks |= {f"<<-{d.name}" for d in ins.heredocs} | {
                    f'<<"{d.name}"' for d in ins.heredocs
                }
                marks |= {f"<<'{d.name}'" for d in ins.heredocs}
                dest_words = [w for w in words if w not in marks]
                if len(dest_words) != 1:
                    raise TaskFormatError(
                        f"{where}: {ins.keyword} with heredocs needs one destination"
                    )
                dest = dest_words[0]
                sources: list[Path] = []
                for doc in ins.heredocs:
                    body = doc.body if doc.quoted else expand(doc.body, variables)
                    name = doc.name if len(ins.heredocs) > 1 or dest.endswith("/") else "content"
                    target = staging / name
                    target.write_text(body)
                    target.chmod(0o644)
                    sources.append(target)
                if len(ins.heredocs) == 1 and not dest.endswith("/"):
                    self._install(state, ins, [(sources[0], False)], dest, single_file=True)
                else:
                    self._install(state, ins, [(s, False) for s in sources], dest)
                return
            if len(words) < 2:
                raise TaskFormatError(f"{where}: {ins.keyword} needs a source and a destination")
            *srcs, dest = words
            origin = ins.flags.get("from")
            items: list[tuple[Path, bool]] = []
            if origin is not None:
                origin = expand(origin, variables)
                items = self._from_origin(origin, srcs, staging, ins)
            else:
                for src in srcs:
                    if ins.keyword == "ADD" and re.match(r"^https?://", src):
                        items.append((self._download(src, staging, ins), False))
                        continue
                    items += [(p, ins.keyword == "ADD" and _is_archive(p)) for p in
                              self._context_sources(src, ins)]  # fmt: skip
            if not items:
                raise TaskFormatError(f"{where}: {ins.keyword} source(s) {srcs} match nothing")
            single = (
                len(items) == 1
                and not items[0][0].is_dir()
                and not items[0][1]
                and not dest.endswith("/")
            )
            self._install(state, ins, items, dest, single_file=single)
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def _context_sources(self, src: str, ins: Instruction) -> list[Path]:
        context = self.recipe.context.resolve()
        ignore = read_dockerignore(context)
        pattern = src.lstrip("/")
        if pattern in ("", "."):
            matches = [context]
        else:
            matches = sorted(context.glob(pattern)) if any(c in pattern for c in "*?[") else [
                context / pattern]  # fmt: skip
        out = []
        for path in matches:
            resolved = path.resolve()
            if resolved != context and context not in resolved.parents:
                raise TaskFormatError(
                    f"{self._where(ins)}: {ins.keyword} source {src} lies outside the build context"
                )
            if not path.exists():
                raise TaskFormatError(
                    f"{self._where(ins)}: {ins.keyword} source {src} does not exist in {context}"
                )
            rel = path.relative_to(context).as_posix() if path != context else ""
            if rel and is_ignored(rel, ignore):
                continue
            out.append(path)
        return out

    def _from_origin(
        self, origin: str, srcs: list[str], staging: Path, ins: Instruction
    ) -> list[tuple[Path, bool]]:
        version = known_image(origin)
        if version is not None:
            uv = fetch_uv(version)
            out = []
            for src in srcs:
                name = src.strip("/").rsplit("/", 1)[-1]
                if name not in ("uv", "uvx"):
                    raise TaskFormatError(
                        f"{self._where(ins)}: COPY --from={origin} {src}: only /uv and /uvx are "
                        "known in the uv image"
                    )
                out.append((uv / name, False))
            return out
        state = self.stages.get(origin)
        if state is not None:
            root, bind, mount_at = state.rootfs, "--bind", "/.exploreval-out"
        elif origin.isdigit():
            raise TaskFormatError(f"{self._where(ins)}: COPY --from={origin}: no such stage")
        else:  # a registry image, pulled as Docker would (its cache entry is never written:
            # read-only, the copy lands on the /tmp it has, as every Debian-like image has)
            pulled = pull_image(origin)
            self.notes.append(f"{self._where(ins)}: COPY --from={origin}: {pulled.notes[0]}")
            root, bind, mount_at = pulled.rootfs, "--ro-bind", "/tmp"
            if not (root / "tmp").is_dir() or any(s.startswith("/tmp") for s in srcs):
                raise ImageBuildError(f"{self._where(ins)}: COPY --from={origin}: the image "
                                      "needs a /tmp to copy through, outside what is copied")  # fmt: skip
        out_dir = staging / "from"
        out_dir.mkdir()
        script = "set -e\n" + "".join(
            f"cp -a {shlex.quote(s)} {mount_at}/{i}\n" for i, s in enumerate(srcs)
        )
        # Copy out *inside* the source's root, so its links resolve within it.
        command = ["bwrap", bind, str(root), "/", "--bind", str(out_dir),
                   mount_at, "--proc", "/proc", "--dev", "/dev", "--unshare-all",
                   "--die-with-parent", "--cap-drop", "ALL", "--cap-add", "CAP_DAC_OVERRIDE",
                   "--cap-add", "CAP_FOWNER", "--cap-add", "CAP_CHOWN", "--",
                   "/bin/sh", "-c", script]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            raise ImageBuildError(f"{self._where(ins)}: COPY --from={origin} failed: {done.stderr}")
        return [(out_dir / str(i), False) for i in range(len(srcs))]

    def _download(self, url: str, staging: Path, ins: Instruction) -> Path:
        name = url.rstrip("/").rsplit("/", 1)[-1].split("?")[0] or "download"
        target = staging / name
        try:
            with urllib.request.urlopen(url, timeout=120) as response, open(target, "wb") as fh:  # noqa: S310
                shutil.copyfileobj(response, fh)
        except (urllib.error.URLError, OSError) as exc:
            host = urllib.parse.urlparse(url).hostname
            raise ImageBuildError(
                f"{self._where(ins)}: ADD {url}: the download failed ({exc}); it needs {host}, "
                "which this machine cannot reach",
                unreachable=host,
            ) from exc
        target.chmod(0o600)
        return target

    def _install(
        self,
        state: _StageState,
        ins: Instruction,
        items: list[tuple[Path, bool]],
        dest: str,
        *,
        single_file: bool = False,
    ) -> None:
        """Copy staged sources into the image, inside the image's own sandbox (its links resolve
        within it), as Docker does: a directory's contents; a file into an existing directory
        under its own name; archives extracted (``ADD``); ownership root or ``--chown``."""
        dest_path = dest if dest.startswith("/") else join_path(state.workdir, dest)
        into_dir = dest.endswith("/") or len(items) > 1 or dest in (".", "./")
        q_dest = shlex.quote(dest_path)
        binds: list[tuple[Path, str]] = []
        lines = ["set -e", "copied=''"]
        for i, (source, extract) in enumerate(items):
            if extract:
                extracted = source.parent / f"x{i}"
                extracted.mkdir()
                with tarfile.open(source) as archive:
                    archive.extractall(extracted, filter="data")
                source = extracted
            name = source.name if source.name else "content"
            mount = f"/.exploreval-src/{i}/{name}"
            binds.append((source, mount))
            q_name = shlex.quote(name)
            if source.is_dir():
                lines += [f"mkdir -p {q_dest}", f"cp -a {mount}/. {q_dest}/",
                          f"for e in {mount}/* {mount}/.[!.]*; do [ -e \"$e\" ] && "
                          f"copied=\"$copied {q_dest}/$(basename \"$e\")\"; done; true"]  # fmt: skip
            elif into_dir or not single_file:
                lines += [f"mkdir -p {q_dest}", f"cp -a {mount} {q_dest}/{q_name}",
                          f"copied=\"$copied {q_dest}/{q_name}\""]  # fmt: skip
            else:
                lines += [f"t={q_dest}", f'if [ -d "$t" ]; then t="$t"/{q_name}; '
                          f'else mkdir -p "$(dirname "$t")"; fi',
                          f'cp -a {mount} "$t"', 'copied="$copied $t"']  # fmt: skip
        chown = ins.flags.get("chown")
        chmod = ins.flags.get("chmod")
        lines.append(f'[ -z "$copied" ] || chown -R {shlex.quote(_owner(chown or "0:0"))} $copied')
        if chmod:
            lines.append(f'[ -z "$copied" ] || chmod -R {shlex.quote(chmod)} $copied')
        self._sandbox(state.rootfs, ["/bin/sh", "-c", "\n".join(lines)], env=self._env(state),
                      binds=binds, network=False, what=f"{self._where(ins)}: {ins.keyword}")  # fmt: skip


def _owner(spec: str) -> str:
    """``--chown=user`` means user:user's group, as in Docker (chown would leave the group)."""
    return spec if ":" in spec else f"{spec}:{spec}" if spec.isdigit() else f"{spec}:"


def _is_archive(path: Path) -> bool:
    if not path.is_file():
        return False
    try:
        return tarfile.is_tarfile(path)
    except OSError:
        return False

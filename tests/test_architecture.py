"""The package's shape holds: import-linter's layer contracts, lazy re-exports that agree with
what type checkers see, and a cheap ``import exploreval`` (no pandas, matplotlib, openai or
pydantic models of the suites until they are used)."""

from __future__ import annotations

import ast
import importlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).parent.parent / "src" / "exploreval"
LAZY_PACKAGES = sorted(
    p.parent for p in SRC.rglob("__init__.py") if "lazy_exports(" in p.read_text(encoding="utf-8")
)


def test_import_linter_contracts_hold() -> None:
    exe = shutil.which("lint-imports") or str(Path(sys.executable).parent / "lint-imports")
    done = subprocess.run([exe], capture_output=True, text=True, cwd=SRC.parent.parent, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def _static_names(init: Path) -> tuple[set[str], set[str], set[str]]:
    tree = ast.parse(init.read_text(encoding="utf-8"))
    typed: set[str] = set()
    exports: set[str] = set()
    declared: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.If):  # if TYPE_CHECKING:
            for sub in node.body:
                if isinstance(sub, ast.ImportFrom):
                    typed |= {a.asname or a.name for a in sub.names}
        target = getattr(node, "target", None) or (
            node.targets[0] if isinstance(node, ast.Assign) else None
        )
        name = getattr(target, "id", None)
        if name == "_EXPORTS":
            exports = set(ast.literal_eval(node.value))  # type: ignore[arg-type]
        elif name == "__all__":
            declared = set(ast.literal_eval(node.value))  # type: ignore[arg-type]
    return typed, exports, declared


@pytest.mark.parametrize("package", LAZY_PACKAGES, ids=lambda p: str(p.relative_to(SRC.parent)))
def test_lazy_exports_agree_with_type_checking_imports(package: Path) -> None:
    typed, exports, declared = _static_names(package / "__init__.py")
    assert exports, "no _EXPORTS table"
    assert typed == exports, f"TYPE_CHECKING imports and _EXPORTS differ: {typed ^ exports}"
    assert exports <= declared, f"not in __all__: {exports - declared}"
    module_name = ".".join(package.relative_to(SRC.parent).parts)
    module = importlib.import_module(module_name)
    for name in sorted(declared):
        assert getattr(module, name) is not None, name


def test_import_exploreval_stays_cheap() -> None:
    code = (
        "import sys, exploreval; from exploreval.core import list_envs; list_envs();"
        "heavy = sorted(m for m in ('pandas', 'matplotlib', 'openai', 'pyarrow', 'exploreval.suites.grid._env',"
        " 'exploreval.core._records', 'exploreval.agents._base', 'numpy', 'gymnasium') if m in sys.modules);"
        " print(heavy)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout


def test_every_suite_package_is_in_the_independence_contract() -> None:
    import tomllib

    config = tomllib.loads((SRC.parent.parent / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    (independent,) = [c for c in contracts if c["type"] == "independence"]
    suites = {
        f"exploreval.suites.{p.name}"
        for p in (SRC / "suites").iterdir()
        if (p / "__init__.py").exists()
    }
    assert set(independent["modules"]) == suites


def _private_modules(package: Path) -> set[str]:
    """The private modules and subpackages directly under ``package`` (dotted names)."""
    dotted = ".".join(package.relative_to(SRC.parent).parts)
    return {
        f"{dotted}.{child.stem}"
        for child in package.iterdir()
        if child.name.startswith("_")
        and not child.name.startswith("__")
        and (child.suffix == ".py" or (child / "__init__.py").exists())
    }


def test_one_door_contracts_name_every_private_module() -> None:
    """Issue 45: each package's ``__init__`` is its only door. import-linter's forbidden contracts
    take whole module names (no ``_*``), so they list the private modules; this keeps the lists
    complete (a new private module is protected the day it is added) and the sources whole."""
    import tomllib

    config = tomllib.loads((SRC.parent.parent / "pyproject.toml").read_text(encoding="utf-8"))
    doors = {c["name"].removeprefix("One door: "): c for c in config["tool"]["importlinter"][
        "contracts"] if c["name"].startswith("One door: ")}  # fmt: skip
    packages = [p for p in sorted(SRC.iterdir()) if (p / "__init__.py").exists()]
    packages = [p for p in packages if p.name != "suites"] + [
        p for p in sorted((SRC / "suites").iterdir()) if (p / "__init__.py").exists()]  # fmt: skip
    units = {".".join(p.relative_to(SRC.parent).parts) for p in packages} | {"exploreval._api"}
    for package in packages:
        name = ".".join(package.relative_to(SRC.parent).parts)
        private = _private_modules(package)
        if not private:
            continue
        contract = doors[name]
        fix = "run: python scripts/one_door_contracts.py"
        assert set(contract["forbidden_modules"]) == private, f"{name}: {fix}"
        assert set(contract["source_modules"]) == units - {name}, name
        assert contract.get("allow_indirect_imports") is True  # the door itself imports them


#: What `exploreval --help` and `exploreval envs` must not import (each costs tens of ms).
HEAVY_FOR_THE_CLI = (
    "numpy",
    "pandas",
    "matplotlib",
    "pyarrow",
    "scipy",
    "openai",
    "httpx",
    "gymnasium",
    "yaml",
    "asyncio",
    "rich.progress",
    "exploreval.core._records",
    "exploreval.runner._spec",
    "exploreval.analysis",
)


@pytest.mark.parametrize(
    ("command", "allowed"),
    [
        ("--help", ()),
        # typer itself imports pydantic to coerce a command's options (typer._adapters)
        ("envs", ("pydantic",)),
    ],
)
def test_cli_start_up_imports_no_heavy_module(command: str, allowed: tuple[str, ...]) -> None:
    """Module-set based (not timing based): `exploreval --help` and `exploreval envs` answer
    without numpy, pandas, Gymnasium, the SDK or the runner (bench/bench_cli.py times them)."""
    import json

    code = (
        "import json, sys\n"
        f"sys.argv = ['exploreval', {command!r}]\n"
        "from exploreval.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(json.dumps(sorted(sys.modules)), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    modules = set(json.loads(done.stderr.strip().splitlines()[-1]))
    assert "exploreval.cli._app" in modules  # it really ran the CLI
    heavy = {"pydantic", *HEAVY_FOR_THE_CLI} - set(allowed)
    loaded = sorted(m for m in modules if m.split(".")[0] in heavy or m in heavy)
    assert loaded == [], loaded


def test_gymnasium_make_works_after_a_bare_import_exploreval() -> None:
    """Registration with Gymnasium is lazy: `import exploreval` imports no Gymnasium, and the
    first `import gymnasium` registers every env (an import hook)."""
    code = (
        "import sys, exploreval\n"
        "assert 'gymnasium' not in sys.modules and 'numpy' not in sys.modules\n"
        "import gymnasium\n"
        "for env_id in ('exploreval/GridDAG-v0', 'exploreval/Bandit-v0', 'exploreval/Sudoku-v0'):\n"
        "    env = gymnasium.make(env_id)\n"
        "    obs, _ = env.reset(seed=0)\n"
        "    assert isinstance(obs, str) and obs, env_id\n"
        "    env.close()\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_gymnasium_first_imported_by_an_env_module_still_registers_every_env() -> None:
    """Importing an env class imports Gymnasium from inside exploreval.core._env: registration
    is deferred to the end of that module, and still covers every suite."""
    code = (
        "import exploreval\n"
        "from exploreval.suites.grid import GridDAGEnv\n"
        "import gymnasium\n"
        "assert gymnasium.make('exploreval/FrozenLake-v0').reset(seed=1)[0]\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_every_any_return_says_why() -> None:
    """Issue 23: ``-> Any`` only where a comment right above the function says why."""
    import re

    root = Path(__file__).parents[1] / "src" / "exploreval"
    unexplained = []
    for path in root.rglob("*.py"):
        if "tasks" in path.relative_to(root).parts[:3] and "terminal" in path.parts:
            continue  # task data, not package code
        lines = path.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            if "-> Any:" not in line or "#" in line:
                continue
            j = i
            while j > 0 and not re.match(r"\s*(async\s+)?def ", lines[j]):
                j -= 1
            while j > 0 and lines[j - 1].strip().startswith("@"):
                j -= 1
            if not lines[j - 1].strip().startswith("# -> Any:"):
                unexplained.append(f"{path.relative_to(root)}:{i + 1}")
    assert unexplained == []


#: One concept per file (issue 45): the largest module a reader must hold at once.
MAX_SOURCE_LINES = 700


def test_no_source_file_is_above_700_lines() -> None:
    sizes = {
        str(path.relative_to(SRC)): len(path.read_text(encoding="utf-8").splitlines())
        for path in SRC.rglob("*.py")
    }
    over = {name: n for name, n in sizes.items() if n > MAX_SOURCE_LINES}
    assert not over, f"split these along their seams: {over}"
    assert len(sizes) > 250  # really the whole tree


def _module_imports() -> dict[str, set[str]]:
    """Every module of ``src/`` and the modules it imports: anywhere in the file, lazily in a
    function or for types only (a circle through a type annotation is still a circle to read)."""
    root = SRC.parent
    modules: dict[str, Path] = {}
    for path in SRC.rglob("*.py"):
        parts = list(path.relative_to(root).with_suffix("").parts)
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join([*up, base] if base else up)
                targets = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                    for alias in node.names
                ]
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    circles.append(sorted(component))
    return circles


def test_the_circle_finder_finds_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _circles(graph) == [["a", "b", "c"]]


def test_no_two_modules_import_each_other() -> None:
    """Issue 45: no module circle, not even through a lazy or a type-only import; the shared
    part goes down a level (``core/_hooks.py``) or becomes a protocol (``RunState``)."""
    graph = _module_imports()
    assert sum(len(targets) for targets in graph.values()) > 800  # the imports were read
    assert "exploreval.core._envs" in graph["exploreval.core._gym"]
    assert _circles(graph) == []

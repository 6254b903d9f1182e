"""The front door (issue 23): ``docs/python-api.md`` runs as written, the README's CLI example
and its Python twin give the same ``score`` output, and ``import exploreval`` shows the API."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).parents[1]


def test_the_front_door_is_small_documented_and_lazy() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "import sys, exploreval; print(sorted(exploreval.__all__)); "
         "print('exploreval.analysis' in sys.modules, 'pandas' in sys.modules)"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    names, loaded = done.stdout.splitlines()
    assert "'run'" in names and "'open_run'" in names and "'write_report'" in names
    assert loaded == "False False"  # importing the package loads none of it
    import exploreval

    for name in exploreval.__all__:
        if name == "__version__":
            continue
        value = getattr(exploreval, name)
        assert value.__doc__ and value.__doc__.strip(), f"{name} has no docstring"


@pytest.mark.slow
def test_the_python_api_page_runs(tmp_path: Path) -> None:
    text = (ROOT / "docs" / "python-api.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) >= 5
    code = "\n".join(blocks)
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, timeout=900)  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert (tmp_path / "runs" / "nb" / "report" / "index.html").exists()


@pytest.mark.slow
def test_the_cli_and_its_python_twin_score_the_same(tmp_path: Path) -> None:
    import exploreval as ev

    exe = Path(sys.executable).with_name("exploreval")
    subprocess.run(
        [str(exe), "run", "exploreval/GridDAG-v0", "--preset", "explore-low/dag-small",
         "--seeds", "0-2", "--agent", "frontier", "--agent", "random", "--out",
         str(tmp_path / "cli"), "-q", "--no-report"],
        check=True, capture_output=True, env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip
    ev.run(env="exploreval/GridDAG-v0", presets="explore-low/dag-small", seeds="0-2",
           agents=["frontier", "random"], out=tmp_path / "api")  # fmt: skip
    subprocess.run([str(exe), "score", str(tmp_path / "cli")], check=True, capture_output=True)
    cli = pd.read_parquet(tmp_path / "cli" / "results.parquet")
    api = ev.score(tmp_path / "api")
    drop = ["run_id", "latency_s"]
    cli = cli.drop(columns=drop).sort_values("episode_id").reset_index(drop=True)
    api = api.drop(columns=drop).sort_values("episode_id").reset_index(drop=True)
    pd.testing.assert_frame_equal(cli, api, check_dtype=False)


def test_run_options_are_the_option_table_minus_the_command_lines_own() -> None:
    """Issue 45: ``run(**options: Unpack[RunOptions])``; the TypedDict names exactly the table's
    options a Python caller may give (the command line's own, ``out``, ``config``, ``force``,
    ``report``..., are not options of ``run``)."""
    from typing import get_type_hints

    from exploreval.core import RUN_OPTIONS, RunOptions

    hints = get_type_hints(RunOptions)
    assert set(hints) == {o.name for o in RUN_OPTIONS if o.role != "command"}
    assert RunOptions.__total__ is False


@pytest.mark.slow
def test_type_checkers_read_the_front_door(tmp_path: Path) -> None:
    """mypy sees the lazy names and the typed keywords: a wrong option type and an unknown
    option are errors, a right call is not."""
    good = tmp_path / "good.py"
    good.write_text(
        "import exploreval as ev\n"
        "s = ev.run(env='exploreval/Bandit-v0', agents=['ucb'], seeds='0-1', temperature=0.2,"
        " out='runs/x')\n"
        "reveal_type(s.status)\n"
    )
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import exploreval as ev\n"
        "ev.run(env='exploreval/Bandit-v0', temperature='hot', out='runs/x')\n"
        "ev.run(env='exploreval/Bandit-v0', temprature=0.2, out='runs/x')\n"
    )
    mypy = [sys.executable, "-m", "mypy", "--no-incremental", "--follow-imports=silent"]
    ok = subprocess.run([*mypy, str(good)], capture_output=True, text=True, check=False)
    assert ok.returncode == 0, ok.stdout
    assert re.search(r'Revealed type is "(builtins\.)?str"', ok.stdout), ok.stdout
    wrong = subprocess.run([*mypy, str(bad)], capture_output=True, text=True, check=False)
    assert wrong.returncode == 1, wrong.stdout
    assert 'bad.py:2: error: Argument "temperature" to "run" has incompatible type' in wrong.stdout
    assert 'bad.py:3: error: Unexpected keyword argument "temprature"' in wrong.stdout

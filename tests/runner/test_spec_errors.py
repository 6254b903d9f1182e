"""Config-file errors in the CLI's own voice (issue 42 §7): an unknown key names the file's
line, the keys that place takes and the closest one; the "different experiment" refusal names
each field that differs, stored -> this command."""

from __future__ import annotations

from pathlib import Path

import pytest

from exploreval.runner import (
    ConfigMismatchError,
    SpecError,
    load_spec,
    run_experiment,
    spec_from_dict,
)


def test_an_unknown_key_names_its_line_the_keys_there_and_the_closest(tmp_path: Path) -> None:
    config = tmp_path / "experiment.yaml"
    config.write_text(
        "suites:\n  - env_id: exploreval/GridDAG-v0\n    sedes: 0-2\nagnets:\n  - agent: random\n"
    )
    with pytest.raises(SpecError) as caught:
        load_spec(config)
    message = str(caught.value)
    assert f"invalid experiment spec in {config}" in message
    assert "unknown key 'sedes' in suites.0 (line 3); did you mean 'seeds'?" in message
    assert "unknown key 'agnets' at the top level (line 4); did you mean 'agents'?" in message
    assert "field agents: required, and not given" in message
    assert "Extra inputs are not permitted" not in message  # pydantic's words stay inside


def test_a_toml_file_and_a_dict_still_name_the_key(tmp_path: Path) -> None:
    config = tmp_path / "experiment.toml"
    config.write_text('[[suites]]\nenv_id = "exploreval/GridDAG-v0"\n\n[[agents]]\nagnet = "x"\n')
    with pytest.raises(SpecError, match=r"unknown key 'agnet' in agents\.0; did you mean 'agent'"):
        load_spec(config)
    with pytest.raises(SpecError, match=r"unknown key 'budjet' at the top level"):
        spec_from_dict(
            {
                "suites": [{"env_id": "exploreval/GridDAG-v0"}],
                "agents": [{"agent": "random"}],
                "budjet": {},
            }  # fmt: skip
        )


def test_a_different_experiment_names_each_field_that_differs(tmp_path: Path) -> None:
    first = {
        "suites": [
            {
                "env_id": "exploreval/GridDAG-v0",
                "presets": ["explore-low/dag-small"],
                "seeds": [0, 1],
            }
        ],  # fmt: skip
        "agents": [{"agent": "random"}],
    }
    run_experiment(spec_from_dict(first), str(tmp_path / "run"))
    second = {
        **first,
        "agents": [{"agent": "frontier"}],
        "max_steps": 9,
    }
    with pytest.raises(ConfigMismatchError) as caught:
        run_experiment(spec_from_dict(second), str(tmp_path / "run"))
    lines = str(caught.value).splitlines()
    assert "  - agents.0.agent: 'random' -> 'frontier'" in lines
    assert "  - max_steps: (absent) -> 9" in lines
    assert len([line for line in lines if line.startswith("  - ")]) == 2  # nothing else differs

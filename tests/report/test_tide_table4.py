"""TIDE's Table 4 on the paper's whole Table 1: every one of its 25 rows accounted for.

Table 4 lists "all model pairs (A, B) satisfying SR(A) >= SR(B) and AUV(A) <= AUV(B)". Fed the
paper's own Table 1 (17 models x 5 environments, transcribed below), the report's pair finder
lists 34 pairs: 24 of Table 4's rows, and 10 that satisfy the stated rule but that the table
leaves out. Its 25th row (WebShop, Llama-3.3-70B-Instruct vs gpt-oss-120b: SR 26.8 >= 26.2 but
AUV 17.6 > 11.1) does not satisfy the rule in either order, so no finder of that rule lists it.
"""

from __future__ import annotations

import pandas as pd

from exploreval.report._tide_frames import sr_auv_pairs

ENVIRONMENTS = ("BlocksWorld", "FrozenLake", "Sudoku", "AlfWorld", "WebShop")

#: Table 1: per model, (SR, AUV) for each environment in ENVIRONMENTS order (percent).
TABLE1: dict[str, tuple[float, ...]] = {
    "Qwen3-4B-Instruct": (40.0, 30.8, 59.0, 46.1, 29.0, 19.3, 52.1, 38.3, 15.0, 9.6),
    "Qwen3-30B-A3B-Instruct": (64.0, 45.4, 61.0, 49.0, 77.0, 48.8, 62.1, 48.1, 20.8, 13.7),
    "Llama-3.1-8B-Instruct": (32.0, 21.9, 12.0, 8.4, 4.0, 2.1, 16.4, 12.8, 20.8, 13.1),
    "Llama-3.3-70B-Instruct": (96.0, 68.2, 44.0, 34.7, 40.0, 24.9, 59.3, 46.7, 26.8, 17.6),
    "GLM-4-9B-Chat": (23.0, 18.2, 10.0, 7.2, 4.0, 2.0, 25.7, 21.8, 16.4, 11.5),
    "GLM-4-32B-0414": (83.0, 57.5, 67.0, 49.9, 55.0, 34.4, 37.9, 29.0, 25.4, 17.2),
    "Mistral-7B-Instruct": (7.0, 5.0, 6.0, 4.6, 1.0, 0.4, 8.6, 7.6, 6.6, 4.4),
    "Ministral-3-14B-Instruct": (72.0, 39.0, 56.0, 35.8, 18.0, 13.3, 22.1, 15.8, 15.2, 5.4),
    "Phi-4": (56.0, 41.2, 66.0, 50.8, 33.0, 21.4, 25.0, 18.6, 18.8, 12.2),
    "DeepSeek-V3.2": (98.0, 71.1, 97.0, 73.1, 93.0, 56.8, 80.7, 59.0, 41.0, 24.8),
    "Gemini 2.5 Flash": (99.0, 72.0, 97.0, 70.7, 97.0, 60.4, 78.6, 58.1, 35.0, 21.6),
    "Qwen3-4B-Thinking": (77.0, 47.9, 91.0, 66.7, 55.0, 30.7, 57.1, 40.9, 12.2, 8.2),
    "Qwen3-30B-A3B-Thinking": (98.0, 69.8, 93.0, 68.0, 95.0, 55.6, 66.4, 50.7, 21.0, 14.6),
    "Phi-4-reasoning": (68.0, 51.3, 62.0, 48.8, 51.0, 37.4, 15.7, 9.8, 22.6, 14.3),
    "gpt-oss-120b": (100.0, 73.7, 99.0, 73.8, 97.0, 60.2, 50.7, 29.0, 26.2, 11.1),
    "DeepSeek-R1": (100.0, 74.9, 96.0, 72.6, 95.0, 59.4, 83.6, 64.1, 38.4, 24.1),
    "Gemini 2.5 Pro": (100.0, 75.2, 100.0, 75.0, 99.0, 60.2, 80.7, 62.9, 43.2, 27.1),
}

#: Table 4 as printed: (environment, A, B, SR_A, SR_B, AUV_A, AUV_B).
TABLE4 = [
    ("BlocksWorld", "Qwen3-4B-Thinking", "Phi-4-reasoning", 77.0, 68.0, 47.9, 51.3),
    ("BlocksWorld", "Qwen3-30B-A3B-Thinking", "DeepSeek-V3.2", 98.0, 98.0, 69.8, 71.1),
    ("BlocksWorld", "gpt-oss-120b", "DeepSeek-R1", 100.0, 100.0, 73.7, 74.9),
    ("BlocksWorld", "gpt-oss-120b", "Gemini 2.5 Pro", 100.0, 100.0, 73.7, 75.2),
    ("BlocksWorld", "DeepSeek-R1", "Gemini 2.5 Pro", 100.0, 100.0, 74.9, 75.2),
    ("FrozenLake", "Gemini 2.5 Flash", "DeepSeek-V3.2", 97.0, 97.0, 70.7, 73.1),
    ("FrozenLake", "Gemini 2.5 Flash", "DeepSeek-R1", 97.0, 96.0, 70.7, 72.6),
    ("FrozenLake", "Phi-4-reasoning", "Qwen3-30B-A3B-Instruct", 62.0, 61.0, 48.8, 49.0),
    ("Sudoku", "GLM-4-9B-Chat", "Llama-3.1-8B-Instruct", 4.0, 4.0, 2.0, 2.1),
    ("Sudoku", "GLM-4-32B-0414", "Phi-4-reasoning", 55.0, 51.0, 34.4, 37.4),
    ("Sudoku", "Qwen3-4B-Thinking", "GLM-4-32B-0414", 55.0, 55.0, 30.7, 34.4),
    ("Sudoku", "Qwen3-4B-Thinking", "Phi-4-reasoning", 55.0, 51.0, 30.7, 37.4),
    ("Sudoku", "Qwen3-30B-A3B-Thinking", "DeepSeek-V3.2", 95.0, 93.0, 55.6, 56.8),
    ("AlfWorld", "DeepSeek-V3.2", "Gemini 2.5 Pro", 80.7, 80.7, 59.0, 62.9),
    ("AlfWorld", "gpt-oss-120b", "GLM-4-32B-0414", 50.7, 37.9, 29.0, 29.0),
    ("WebShop", "Ministral-3-14B-Instruct", "Qwen3-4B-Instruct", 15.2, 15.0, 5.4, 9.6),
    ("WebShop", "Ministral-3-14B-Instruct", "Qwen3-4B-Thinking", 15.2, 12.2, 5.4, 8.2),
    ("WebShop", "Llama-3.1-8B-Instruct", "Qwen3-30B-A3B-Instruct", 20.8, 20.8, 13.1, 13.7),
    ("WebShop", "Phi-4-reasoning", "Qwen3-30B-A3B-Thinking", 22.6, 21.0, 14.3, 14.6),
    ("WebShop", "gpt-oss-120b", "Qwen3-30B-A3B-Instruct", 26.2, 20.8, 11.1, 13.7),
    ("WebShop", "Llama-3.3-70B-Instruct", "gpt-oss-120b", 26.8, 26.2, 17.6, 11.1),
    ("WebShop", "gpt-oss-120b", "GLM-4-9B-Chat", 26.2, 16.4, 11.1, 11.5),
    ("WebShop", "gpt-oss-120b", "GLM-4-32B-0414", 26.2, 25.4, 11.1, 17.2),
    ("WebShop", "gpt-oss-120b", "Phi-4", 26.2, 18.8, 11.1, 12.2),
    ("WebShop", "gpt-oss-120b", "Phi-4-reasoning", 26.2, 22.6, 11.1, 14.3),
]

#: The one printed row the rule does not admit (in either order).
NOT_BY_THE_RULE = {("WebShop", "Llama-3.3-70B-Instruct", "gpt-oss-120b")}

#: Pairs the rule admits that Table 4 leaves out.
LEFT_OUT = {
    ("BlocksWorld", "Ministral-3-14B-Instruct", "Phi-4"),
    ("BlocksWorld", "Ministral-3-14B-Instruct", "Phi-4-reasoning"),
    ("BlocksWorld", "Ministral-3-14B-Instruct", "Qwen3-30B-A3B-Instruct"),
    ("FrozenLake", "GLM-4-32B-0414", "Phi-4"),
    ("Sudoku", "Gemini 2.5 Pro", "Gemini 2.5 Flash"),
    ("Sudoku", "Gemini 2.5 Pro", "gpt-oss-120b"),
    ("Sudoku", "Qwen3-30B-A3B-Thinking", "DeepSeek-R1"),
    ("Sudoku", "gpt-oss-120b", "Gemini 2.5 Flash"),
    ("WebShop", "gpt-oss-120b", "Llama-3.1-8B-Instruct"),
    ("WebShop", "gpt-oss-120b", "Qwen3-30B-A3B-Thinking"),
}


def _table1_summary() -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "env_id": env,
                "preset": "paper",
                "agent": model,
                "success_rate": values[2 * i],
                "auv": values[2 * i + 1],
            }
            for model, values in TABLE1.items()
            for i, env in enumerate(ENVIRONMENTS)
        ]
    )


def _admitted(env: str, a: str, b: str) -> bool:
    i = ENVIRONMENTS.index(env)
    sr_a, auv_a = TABLE1[a][2 * i], TABLE1[a][2 * i + 1]
    sr_b, auv_b = TABLE1[b][2 * i], TABLE1[b][2 * i + 1]
    return sr_a >= sr_b and auv_a <= auv_b and (sr_a, auv_a) != (sr_b, auv_b)


def test_table4_prints_table1s_numbers() -> None:
    for env, a, b, sr_a, sr_b, auv_a, auv_b in TABLE4:
        i = ENVIRONMENTS.index(env)
        assert (TABLE1[a][2 * i], TABLE1[b][2 * i]) == (sr_a, sr_b), (env, a, b)
        assert (TABLE1[a][2 * i + 1], TABLE1[b][2 * i + 1]) == (auv_a, auv_b), (env, a, b)


def test_every_table4_row_is_found_or_is_outside_its_own_rule() -> None:
    pairs = sr_auv_pairs(_table1_summary())
    found = {(r.env_id, r.agent_a, r.agent_b) for r in pairs.itertuples()}
    printed = {(env, a, b) for env, a, b, *_ in TABLE4}
    assert len(TABLE4) == len(printed) == 25
    assert printed - found == NOT_BY_THE_RULE
    for env, a, b in NOT_BY_THE_RULE:
        assert not _admitted(env, a, b) and not _admitted(env, b, a)
    assert found - printed == LEFT_OUT and len(found) == 34
    assert all(_admitted(*pair) for pair in found)
    # and the finder lists every pair the rule admits, nothing else
    every = {
        (env, a, b)
        for env in ENVIRONMENTS
        for a in TABLE1
        for b in TABLE1
        if a != b and _admitted(env, a, b)
    }
    assert found == every
    row = pairs[(pairs["env_id"] == "AlfWorld") & (pairs["agent_a"] == "gpt-oss-120b")]
    assert row[["sr_a", "sr_b", "auv_a", "auv_b"]].iloc[0].tolist() == [50.7, 37.9, 29.0, 29.0]

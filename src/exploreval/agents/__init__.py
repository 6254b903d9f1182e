"""Agents: scripted baselines and LLM agents (model client + harness).

Names load on first use (``exploreval.core._lazy``), so importing the package is cheap."""

from typing import TYPE_CHECKING

from exploreval.core import lazy_exports

if TYPE_CHECKING:
    from exploreval.agents._base import (
        Agent,
        Decision,
        EpisodeContext,
        ScriptedAgent,
    )
    from exploreval.agents._grammar import (
        gbnf_choice,
        gbnf_free_text,
        gbnf_grammar,
        gbnf_literal,
        json_enum_object,
    )
    from exploreval.agents._harness import (
        Harness,
        HistoryPolicy,
        ParsedAction,
        Turn,
    )
    from exploreval.agents._llm import (
        LLMAgent,
    )
    from exploreval.agents._memory import (
        MEMORY_BACKENDS,
        MemoryBackend,
        MemoryLog,
        make_memory,
    )
    from exploreval.agents._registry import (
        AGENT_REGISTRY,
        HARNESS_REGISTRY,
        AgentEntry,
        HarnessEntry,
        agent_names,
        check_agent,
        check_harness,
        harness_names,
        make_agent,
        make_harness,
        register_agent,
        register_harness,
    )

_EXPORTS: dict[str, str] = {
    "gbnf_choice": "._grammar",
    "gbnf_free_text": "._grammar",
    "gbnf_grammar": "._grammar",
    "gbnf_literal": "._grammar",
    "json_enum_object": "._grammar",
    "AGENT_REGISTRY": "._registry",
    "Agent": "._base",
    "AgentEntry": "._registry",
    "Decision": "._base",
    "EpisodeContext": "._base",
    "HARNESS_REGISTRY": "._registry",
    "Harness": "._harness",
    "HarnessEntry": "._registry",
    "HistoryPolicy": "._harness",
    "LLMAgent": "._llm",
    "MEMORY_BACKENDS": "._memory",
    "MemoryBackend": "._memory",
    "MemoryLog": "._memory",
    "make_memory": "._memory",
    "ParsedAction": "._harness",
    "ScriptedAgent": "._base",
    "Turn": "._harness",
    "agent_names": "._registry",
    "check_agent": "._registry",
    "check_harness": "._registry",
    "harness_names": "._registry",
    "make_agent": "._registry",
    "make_harness": "._registry",
    "register_agent": "._registry",
    "register_harness": "._registry",
}


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
__all__ = [
    "MEMORY_BACKENDS",
    "MemoryBackend",
    "MemoryLog",
    "make_memory",
    "gbnf_choice",
    "gbnf_free_text",
    "gbnf_grammar",
    "gbnf_literal",
    "json_enum_object",
    "AGENT_REGISTRY",
    "Agent",
    "AgentEntry",
    "Decision",
    "EpisodeContext",
    "HARNESS_REGISTRY",
    "Harness",
    "HarnessEntry",
    "HistoryPolicy",
    "LLMAgent",
    "ParsedAction",
    "ScriptedAgent",
    "Turn",
    "agent_names",
    "check_agent",
    "check_harness",
    "harness_names",
    "make_agent",
    "make_harness",
    "register_agent",
    "register_harness",
]

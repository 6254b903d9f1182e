import atexit
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

# Every figure a test draws is checked: a title, axis label or legend drawn over another fails
# the test that drew it (exploreval.report._plotting.text_collisions).
os.environ.setdefault("EXPLOREVAL_CHECK_FIGURES", "1")
# Scores keep their chunks in the user's cache: the session's own, never the home's.
_SCORE_CACHE = tempfile.mkdtemp(prefix="exploreval-score-cache-")
os.environ["EXPLOREVAL_SCORE_CACHE"] = _SCORE_CACHE
atexit.register(shutil.rmtree, _SCORE_CACHE, True)

import _toy  # noqa: E402,F401 - registers the toy env used by spine tests


@pytest.fixture(scope="session")
def local_llm_base_url() -> Iterator[str]:
    """One real llama.cpp server with SmolLM2-135M for the whole test session.

    Tests using it are real-path tests: HTTP, the openai SDK, retries and the cache all run.
    It needs the [local] extra, which the README's install command includes.
    """
    from exploreval.models import LocalServer

    with LocalServer("local:smollm2") as server:
        yield server.base_url

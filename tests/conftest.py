"""Shared fixtures."""

import os
from pathlib import Path

import pytest

SITE = Path(__file__).resolve().parent.parent / "_build" / "html"


@pytest.fixture(scope="session")
def site() -> Path:
    """The built HTML. `make test` builds it first; a bare `pytest -m site` may not have."""
    if not (SITE / "index.html").is_file():
        message = f"{SITE / 'index.html'} is missing: build the book first (make html)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return SITE

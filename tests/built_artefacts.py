"""What `make test` builds before the tests read it (the site, the PDF, the singlehtml build):
required in CI, where its absence is a fault of the run; skipped in a bare local `pytest`,
where the author may not have built it yet."""

import os
from pathlib import Path

import pytest


def require_built(path: Path, make_target: str) -> Path:
    """``path``, or the test fails (in CI) or is skipped (elsewhere) saying which target makes it."""
    if not path.exists():
        message = f"{path} is missing: build it first (make {make_target})"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path

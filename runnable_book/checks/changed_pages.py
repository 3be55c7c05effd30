"""The pages `make check` runs under nbval: those not yet checked as they are now.

    python -m runnable_book.checks.changed_pages      # the stored notebooks to run, one a line
    pytest -p runnable_book.checks.changed_pages ...  # records each notebook that passed nbval

`make test` runs every page under nbval; `make check`, the quick loop, only the pages whose run
could differ from one that already passed. Content-addressed: a page is named by the digest of
what nbval's run of it depends on (its stored notebook's bytes, the chapter_lib definitions its
code reaches as the library is now, runnable_book/pipeline/page_inputs.py, and the kernel's setup: the
files that configure it, Python's version and the pinned packages), and each digest that passed
is recorded in _build/check/nbval-passed.json. A page whose digest is there is not run again;
an edit undone finds its digest again. A page fails, nothing is recorded for it, and it runs at
the next check.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from runnable_book.common.files import write_atomically
from runnable_book.pipeline.pages import notebook_pages, read_page, shown
from runnable_book.repository import ROOT, TOOL

RECORD = ROOT / "_build" / "check" / "nbval-passed.json"
# What sets up nbval's kernel and its comparison, beside the page and the library.
KERNEL_SETUP = [ROOT / "conftest.py", TOOL / "checks" / "nbval_run.py",
                TOOL / "pipeline" / "execute_pages.py", ROOT / "requirements.txt"]
KEPT = 1000  # digests recorded, the newest (pages a few hundred edits back are run again)


def page_digest(md: Path) -> str:
    from runnable_book.pipeline.page_inputs import inputs_digest

    sha = hashlib.sha256(sys.version.encode())
    for path in [md.with_suffix(".ipynb"), *KERNEL_SETUP]:
        sha.update(path.read_bytes() if path.is_file() else b"(none)")
    sha.update(inputs_digest(read_page(md)).encode())
    return sha.hexdigest()


def recorded() -> dict[str, str]:
    """Digest -> the page it was recorded for, oldest first."""
    return json.loads(RECORD.read_text()) if RECORD.is_file() else {}


def has_code(notebook: Path) -> bool:
    """Whether nbval has a cell to run (a page of prose alone, 15.10's, gives it none, so it
    would never pass, and never be recorded)."""
    return any(cell.get("cell_type") == "code" for cell in json.loads(notebook.read_text())["cells"])


def unchecked() -> list[Path]:
    """The stored notebooks whose page, as it is now, has not passed nbval."""
    passed = recorded()
    return [md.with_suffix(".ipynb") for md in notebook_pages()
            if md.with_suffix(".ipynb").is_file() and has_code(md.with_suffix(".ipynb"))
            and page_digest(md) not in passed]


def record(notebooks: list[Path]) -> None:
    if not notebooks:
        return
    passed = recorded()
    for notebook in notebooks:
        digest = page_digest(notebook.with_suffix(".md"))
        passed.pop(digest, None)
        passed[digest] = shown(notebook)
    write_atomically(RECORD, json.dumps(dict(list(passed.items())[-KEPT:]), indent=0) + "\n")


# ---- the pytest plugin: what passed, recorded once the session ends ---------------------

_OUTCOMES: dict[str, set[str]] = {}


def pytest_runtest_logreport(report):
    path = report.nodeid.split("::", 1)[0]
    if path.endswith(".ipynb"):
        _OUTCOMES.setdefault(path, set()).add("failed" if report.failed else report.outcome)


def pytest_sessionfinish(session):
    if hasattr(session.config, "workerinput"):  # (a pytest-xdist worker: the controller records)
        return
    record([(Path(session.config.rootpath) / path).resolve() for path, outcomes in _OUTCOMES.items()
            if "failed" not in outcomes and "passed" in outcomes])


if __name__ == "__main__":
    print("\n".join(shown(notebook) for notebook in unchecked()))

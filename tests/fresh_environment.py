"""A Python as a reader's is (Colab, a bare Jupyter): a fresh venv without chapter_lib, and a
notebook's code cells run in it as its kernel would. Shared by the tests of the launch story
(tests/test_binder.py, tests/test_two_editions.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path


MARKER = "--- next cell ---"


def made_venv(tmp_path_factory) -> Path:
    """A venv made from the interpreter .venv was made from (as Colab's Python is outside this
    environment), never used: each test gets a copy (fresh_environment). Made once a module
    (its fixture ``new_venv``): making one installs pip into it, a copy costs next to nothing."""
    made = tmp_path_factory.mktemp("new-venv") / "venv"
    base_python = Path(sys.base_prefix) / "bin" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    subprocess.run([str(base_python), "-m", "venv", str(made)], check=True)
    return made


def fresh_environment(new_venv: Path, where: Path) -> Path:
    """A copy of the new venv (it finds its prefix from where its python is, so a copy is a venv
    of its own; pip is run as `python -m pip`): no chapter_lib in it. Returns its python."""
    shutil.copytree(new_venv, where / "venv", symlinks=True)
    return where / "venv" / "bin" / "python"


def run_as_kernel(python: Path, cells: list[str], cwd: Path, marker: str = MARKER):
    """Run code cells in one process as a kernel would (a marker printed between cells)."""
    program = f"\nprint({marker!r})\n".join(cells)
    (cwd / "notebook.py").write_text(program)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run([str(python), "notebook.py"], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)


def code_of(notebook) -> list[str]:
    """The notebook's code cells' sources (an nbformat notebook or its JSON as a dict)."""
    return ["".join(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "code"]


def stored_stdout(notebook) -> list[str]:
    """What each code cell printed, as the notebook stores it."""
    return ["".join("".join(output["text"]) for output in cell["outputs"]
                    if output["output_type"] == "stream" and output["name"] == "stdout")
            for cell in notebook["cells"] if cell["cell_type"] == "code"]


def installed_from(python: Path, distribution: str = "chapter-lib") -> dict:
    """Where pip installed ``distribution`` from (PEP 610's direct_url.json: url, vcs_info)."""
    import json

    program = (f"import importlib.metadata, json; print(importlib.metadata.distribution({distribution!r})"
               ".read_text('direct_url.json') or '{}')")
    # (in the venv's folder, not here: the repository's own chapter_lib.egg-info is found first)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run([str(python), "-c", program], cwd=python.parent, env=env, capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout)

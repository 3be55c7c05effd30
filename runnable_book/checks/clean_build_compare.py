"""Does an incremental build equal a clean one? Copies of the sources, built and compared.

    python -m runnable_book.checks.clean_build_compare     # three real edits, each compared (a few minutes)

The contract of the build graph (runnable_book/pipeline/artefact_graph.py): after any sequence of edits,
`make book` leaves `_build/html` as a clean build of the same sources would, byte for byte.
tests/test_incremental_build.py holds it for a sequence of edits with one clean build at the
end; this command shows it edit by edit, for the closing note of a change to the graph: for
each of a saved-code edit, a prose edit and the revert of the prose edit, the incremental
build of a scratch copy beside a clean build of a copy of the same sources, and the files
that differ (none, if the contract holds). Copies live in _build/compare/ (removed after).
"""

from __future__ import annotations

import filecmp
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from runnable_book.pipeline import npm_assets
from runnable_book.repository import ROOT

# What the package managers installed, which a copy links or copies rather than rebuilds.
MADE_BY_MAKE = ["pyodide", "runner/editor.mjs", "runner/markup.mjs", "runner/latex.mjs"]
SCRATCH = ROOT / "_build" / "compare"
# What a build leaves that the next build reads (runnable_book/pipeline/artefact_steps.py): the graph's
# record, the digest files, the made assets and the site. Not the PDF nor its print build (a
# copy of the sources has none; the graph rebuilds a site that links one: site_serves_the_pdf),
# nor Sphinx's environment (.doctrees: it records the source folder, so in a folder of another
# name Sphinx reads every page again whatever it holds).
BUILD_STATE = [".build-graph.json", "digests", "static", "html", "failed"]


def sources_copy(source: Path, to: Path) -> Path:
    """``source``'s sources (no environment, no builds), with what the package managers
    installed: node_modules linked, and the files Make copies from it (Pyodide's, the editor)."""
    shutil.copytree(source, to, ignore=shutil.ignore_patterns(
        ".venv", "_build", "node_modules", ".git", "__pycache__", ".pytest_cache", ".hypothesis", "*.egg-info",
        ".ipynb_checkpoints"))
    (to / "node_modules").symlink_to(ROOT / "node_modules")
    for made_by_make in MADE_BY_MAKE:
        made, target = ROOT / "_build" / "static" / made_by_make, to / "_build" / "static" / made_by_make
        target.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if made.is_dir() else shutil.copyfile)(made, target)
    # (and the record of what they were made from, so a `make` in the copy takes them as made)
    if npm_assets.RECORD.is_file():
        (to / npm_assets.RECORD.relative_to(ROOT)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(npm_assets.RECORD, to / npm_assets.RECORD.relative_to(ROOT))
    return to


def built_copy(source: Path, to: Path) -> Path:
    """``source``'s sources and what its last build left (BUILD_STATE), as if built at ``to``:
    the graph's record names every input by its absolute path, so those under ``source`` are
    moved. The next build of the copy is an incremental one, from whatever state that was."""
    sources_copy(source, to)
    for name in BUILD_STATE:
        made, target = source / "_build" / name, to / "_build" / name
        if made.is_dir():
            shutil.copytree(made, target, symlinks=True, dirs_exist_ok=True, ignore=already_in(made, target))
        elif made.is_file():
            shutil.copy2(made, target)
    record = to / "_build" / ".build-graph.json"
    if record.is_file():
        record.write_text(json.dumps(moved(json.loads(record.read_text()), f"{source}/", f"{to}/")))
    return to


def already_in(made: Path, target: Path):
    """copytree's ignore: files already at ``target`` (what sources_copy put there: Pyodide's
    files, the editor) are not copied again. Files only: a folder that is there already (the
    editor's, runner/) is merged into, or what the build left beside the editor (the wheel, the
    snapshot, the first figure's bytecode) would be missing from the copy and made again."""
    return lambda folder, names: [n for n in names
                                  if (target / Path(folder).relative_to(made) / n).is_file()]


def moved(record, old: str, new: str):
    """doit's record (JSON) with every path (a key or a string) under ``old`` put under ``new``."""
    if isinstance(record, dict):
        return {moved(key, old, new): moved(value, old, new) for key, value in record.items()}
    if isinstance(record, list):
        return [moved(item, old, new) for item in record]
    if isinstance(record, str) and record.startswith(old):
        return new + record[len(old):]
    return record


def differing(one: Path, other: Path) -> list[str]:
    """Files present in one site only, or with other bytes, as paths relative to the site."""
    found = []

    def walk(comparison: filecmp.dircmp, prefix: str) -> None:
        found.extend(prefix + name for name in comparison.left_only + comparison.right_only + comparison.funny_files)
        _, mismatch, errors = filecmp.cmpfiles(comparison.left, comparison.right, comparison.common_files, shallow=False)
        found.extend(prefix + name for name in mismatch + errors)
        for name, sub in comparison.subdirs.items():
            walk(sub, f"{prefix}{name}/")

    walk(filecmp.dircmp(one, other), "")
    return sorted(found)


def python_in(copy: Path, *args: str) -> subprocess.CompletedProcess:
    """``python *args`` in a copy of the repository, with this environment's interpreter, its
    output captured. PYTHONPATH: the kernels that execute the copy's pages import the copy's
    chapter_lib too (this environment's editable install would give them the repository's)."""
    return subprocess.run([sys.executable, *args], cwd=copy, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(copy)})


def build(copy: Path) -> float:
    """`make book`'s graph in ``copy`` (its pages import its own chapter_lib); seconds."""
    started = time.monotonic()
    done = python_in(copy, "-m", "runnable_book.pipeline.artefact_graph", "book")
    if done.returncode:
        raise SystemExit(f"the build failed in {copy}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return time.monotonic() - started


EDITS = [
    ("saved code: a function added to 15.1's first `# @save` cell", "book/15_01_corpus_and_search_stub.md",
     "# @save\nfrom dataclasses import dataclass\n",
     "# @save\nfrom dataclasses import dataclass\n\n\ndef probe_marker():\n    return 'probe'\n"),
    ("prose: a sentence added to 15.5", "book/15_05_self_correcting_retrieval.md", "\n\n", "\n\nAn added sentence.\n\n"),
    ("a revert: 15.5's sentence taken out again", "book/15_05_self_correcting_retrieval.md",
     "\n\nAn added sentence.\n\n", "\n\n"),
]


def main() -> int:
    shutil.rmtree(SCRATCH, ignore_errors=True)
    incremental = sources_copy(ROOT, SCRATCH / "incremental")
    print(f"clean build of the committed book: {build(incremental):.0f} s")
    for what, page, old, new in EDITS:
        path = incremental / page
        path.write_text(path.read_text().replace(old, new, 1))
        seconds = build(incremental)
        clean = sources_copy(incremental, SCRATCH / "clean")
        clean_seconds = build(clean)
        found = differing(incremental / "_build" / "html", clean / "_build" / "html")
        files = sum(1 for p in (clean / "_build" / "html").rglob("*") if p.is_file())
        print(f"{what}: incremental {seconds:.0f} s, clean {clean_seconds:.0f} s; "
              f"{len(found)} of {files} files differ{': ' + ', '.join(found) if found else ''}")
        shutil.rmtree(clean)
    shutil.rmtree(SCRATCH, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

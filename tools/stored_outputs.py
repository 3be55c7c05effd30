"""Keep each page's executed notebook (book/X.ipynb) paired with its source (book/X.md).

    python -m tools.stored_outputs sync           # what `make outputs` runs
    python -m tools.stored_outputs sync --force   # re-execute every page
    python -m tools.stored_outputs check          # fail if a .md and its .ipynb disagree

The .md is what people edit; the .ipynb is generated from it and stores the outputs the
book shows, which nbval re-checks on every `make test`. ``sync`` rewrites each .ipynb
from its .md and re-executes a page only when its inputs changed: its code cells, or
the ``chapter_lib`` modules it imports (jupyter-cache keys on a page's own cells only,
and would miss a change made in an earlier section). The inputs' digest
is stored in the notebook's metadata. Stored notebooks hold no timestamps, timings or
random cell ids, so an unchanged page rewrites to the same bytes.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from tools.build_lib import write_atomically
from tools.pages import ROOT, BookError, shown, code_cells, notebook_pages, read_page

LIBRARY = ROOT / "chapter_lib"
DIGEST_KEY = "chapter15"  # notebook metadata key holding {"inputs_sha256": ...}
REGENERATE = "make outputs"
TIMEOUT_S = 120


def stored_path(md: Path) -> Path:
    return md.with_suffix(".ipynb")


def imported_library_modules(code: list[str]) -> list[str]:
    """The chapter_lib modules a page's code imports (the package itself loads chapter15)."""
    modules = set()
    for source in code:
        try:
            tree = ast.parse(source)
        except SyntaxError:  # IPython syntax: fall back to every module, never to none
            return sorted(p.stem for p in LIBRARY.glob("*.py")) if "chapter_lib" in source else []
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            for name in names:
                parts = name.split(".")
                if parts[0] == "chapter_lib":
                    modules |= {"__init__", "chapter15"}
                    if len(parts) > 1 and (LIBRARY / f"{parts[1]}.py").exists():
                        modules.add(parts[1])
    return sorted(modules)


def library_digest(modules: list[str]) -> str:
    h = hashlib.sha256()
    for module in modules:
        h.update(module.encode() + b"\0" + (LIBRARY / f"{module}.py").read_bytes() + b"\0")
    return h.hexdigest()


def inputs_digest(nb) -> str:
    """What a page's outputs depend on: its code, and the chapter_lib modules it imports."""
    h = hashlib.sha256(nb.metadata.get("kernelspec", {}).get("name", "").encode())
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    for source in code:
        h.update(b"\0cell\0" + source.encode())
    modules = imported_library_modules(code)
    if modules:
        h.update(b"\0lib\0" + library_digest(modules).encode())
    return h.hexdigest()


def normalized(nb, digest: str):
    """Strip what differs between runs and machines; keep every output."""
    nb.nbformat, nb.nbformat_minor = 4, 5
    nb.metadata = nbformat.from_dict({
        "kernelspec": nb.metadata.get("kernelspec", {}),
        "language_info": {"name": "python"},
        DIGEST_KEY: {"inputs_sha256": digest},
    })
    for number, cell in enumerate(nb.cells, start=1):
        cell.id = f"cell-{number:02d}"  # deterministic: pairs with the .md cell of that rank
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            cell.outputs = merged_streams(cell.outputs)
            for output in cell.outputs:
                output.get("metadata", {}).pop("execution", None)
    return nb


def merged_streams(outputs: list) -> list:
    """Consecutive stream outputs of the same name as one output (what a reader sees).

    The kernel flushes stdout in chunks whose boundaries vary from run to run, so storing
    the chunks would make an unchanged page rewrite its notebook; nbval coalesces them too.
    """
    merged = []
    for output in outputs:
        previous = merged[-1] if merged else None
        if (output.get("output_type") == "stream" and previous is not None
                and previous.get("output_type") == "stream" and previous.get("name") == output.get("name")):
            previous["text"] += output["text"]
        else:
            merged.append(output)
    return merged


def cell_sources(nb) -> list[tuple[str, str]]:
    return [(c.cell_type, c.source) for c in nb.cells]


def reuse_outputs(fresh, stored) -> bool:
    """Copy outputs from the stored notebook if it was executed from the same inputs."""
    if stored is None or stored.metadata.get(DIGEST_KEY, {}).get("inputs_sha256") != inputs_digest(fresh):
        return False
    old = [c for c in stored.cells if c.cell_type == "code"]
    new = [c for c in fresh.cells if c.cell_type == "code"]
    if [c.source for c in old] != [c.source for c in new]:
        return False
    for o, n in zip(old, new):
        n.outputs, n.execution_count = o.outputs, o.execution_count
    return True


def execute(md: Path, nb) -> None:
    """Run the page top to bottom in its own folder, as a reader's kernel would."""
    client = NotebookClient(
        nb, timeout=TIMEOUT_S, kernel_name="python3", record_timing=False,
        resources={"metadata": {"path": str(md.parent)}},
    )
    try:
        client.execute()
    except CellExecutionError as err:
        cell = next((c for c in code_cells(md) if c.source.strip() and c.source in str(err)), None)
        where = cell.where if cell else str(shown(md))
        error = BookError(f"{where}: the cell raised an error; {stored_path(md).name} was not changed.\n{err}")
        error.notebook = nb  # outputs up to the error: tools/build_book.py shows them in the page
        raise error from None


def sync_page(md: Path, force: bool = False) -> str:
    """Rewrite md's stored notebook; return 'executed', 'updated' or 'unchanged'."""
    fresh = read_page(md)
    target = stored_path(md)
    stored = nbformat.read(target, as_version=4) if target.exists() else None
    ran = force or not reuse_outputs(fresh, stored)
    if ran:
        execute(md, fresh)
    text = nbformat.writes(normalized(fresh, inputs_digest(fresh))) + "\n"
    if target.exists() and target.read_text() == text:
        return "unchanged"
    write_atomically(target, text)
    return "executed" if ran else "updated"


def pairing_problems(md: Path) -> list[str]:
    """How a page's .md and its stored .ipynb disagree on cells (empty when they agree)."""
    target = stored_path(md)
    if not target.exists():
        return [f"{shown(target)} is missing"]
    source = cell_sources(read_page(md))
    stored = cell_sources(nbformat.read(target, as_version=4))
    problems = []
    for number, (a, b) in enumerate(zip(source, stored), start=1):
        if a != b:
            problems.append(f"cell {number} ({a[0]}) differs: the .md has {a[1][:60]!r}…, the .ipynb {b[1][:60]!r}…")
    if len(source) != len(stored):
        problems.append(f"the .md has {len(source)} cells, the .ipynb {len(stored)}")
    return [f"{shown(md)} and {target.name}: {p}" for p in problems]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["sync", "check"])
    parser.add_argument("--force", action="store_true", help="re-execute every page")
    parser.add_argument("pages", nargs="*", type=Path, help="only these .md pages")
    args = parser.parse_args(argv)
    pages = [p.resolve() for p in args.pages] or notebook_pages()
    if args.command == "check":
        problems = [p for md in pages for p in pairing_problems(md)]
        for p in problems:
            print(p, file=sys.stderr)
        if problems:
            print(f"Run `{REGENERATE}` to regenerate the stored notebooks.", file=sys.stderr)
        return 1 if problems else 0
    try:
        for md in pages:
            print(f"{sync_page(md, force=args.force):>9}  {shown(stored_path(md))}", flush=True)
    except BookError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

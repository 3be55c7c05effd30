"""A large book's pages executed on several machines: ``make outputs SHARD=k/N``, then ``make outputs-merge``.

    python -m runnable_book.pipeline.execute_shards run 2/3 [--out _build/output-shards]
    python -m runnable_book.pipeline.execute_shards merge [--shards _build/output-shards]

Each page executes in a kernel of its own, from its cells and the library definitions it
reaches (runnable_book/pipeline/page_inputs.py), so where it executes does not change its stored
notebook: the pages may be split among machines and their notebooks joined, as grading a class
is (runnable_book/grade/shards.py). Nothing here schedules anything: a CI matrix's job, a batch
array's task each run one shard.

``run k/N`` executes the k-th of the N shares of the pages that need it (those whose stored
notebook is not up to date, in reading order, every N-th from the k-th: the shares are as
even as the pages allow, and the same on every machine of one checkout), writes their stored
notebooks as ``make outputs`` does, and copies them into ``OUT/shard-k-of-N/`` with
``shard.json``: which pages, and the digest of every page's inputs the shard saw.

``merge`` reads every ``shard-*-of-N`` folder under ``SHARDS``, checks that they are the N
shards of one checkout (the same inputs digest, the one this checkout has), copies their
notebooks into ``book/``, and checks that every page's stored notebook is then up to date:
the same stored notebooks as one ``make outputs``. A shard missing, made from other sources, or
a page still out of date after the merge stops it, saying which; nothing is copied then.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
from pathlib import Path

import nbformat

from runnable_book.common.files import write_atomically
from runnable_book.common.shards import ShardProblem, folder_name, parse
from runnable_book.pipeline import change_report, execute_pages
from runnable_book.pipeline.pages import BookError, notebook_pages, read_page, shown
from runnable_book.pipeline.page_inputs import inputs_digest
from runnable_book.repository import ROOT

OUT = ROOT / "_build" / "output-shards"
MANIFEST = "shard.json"


def stale_pages(pages: list[Path]) -> list[Path]:
    """The pages whose stored notebook is not up to date, in reading order."""
    stale = []
    for md in pages:
        target = execute_pages.stored_path(md)
        stored = nbformat.read(target, as_version=4) if target.exists() else None
        if execute_pages.stale_reasons(md, read_page(md), stored):
            stale.append(md)
    return stale


def book_digest(pages: list[Path], root: Path) -> str:
    """One digest of every page's inputs (its cells, kernel, library uses), by its path in the book."""
    each = {md.relative_to(root).as_posix(): inputs_digest(read_page(md)) for md in pages}
    return hashlib.sha256(json.dumps(each, sort_keys=True).encode()).hexdigest()


def share(pages: list[Path], k: int, n: int) -> list[Path]:
    """Shard k of n's pages: every n-th from the k-th."""
    return pages[k - 1::n]


def run(k: int, n: int, out: Path = OUT, pages: list[Path] | None = None, root: Path = ROOT) -> int:
    pages = pages or notebook_pages()
    mine = share(stale_pages(pages), k, n)
    digest = book_digest(pages, root)
    runs = []
    try:
        for md in mine:
            runs.append(execute_pages.sync_page(md))
            print(f"{runs[-1].status:>9}  {shown(execute_pages.stored_path(md))}", flush=True)
    except BookError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    folder = out / folder_name(k, n)
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    for md in mine:
        relative = execute_pages.stored_path(md).relative_to(root)
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(execute_pages.stored_path(md), folder / relative)
    write_atomically(folder / MANIFEST, json.dumps({
        "shard": [k, n], "inputs_sha256": digest,
        "notebooks": [execute_pages.stored_path(md).relative_to(root).as_posix() for md in mine]}, indent=1) + "\n")
    print(change_report.report(runs, execute_pages.stored_path, len(pages)))
    change_report.forget_unreported([r.page for r in runs])
    print(f"shard {k} of {n}: {len(mine)} of the {len(pages)} pages' notebooks in {shown(folder)}")
    return 0


def shards_found(folder: Path) -> dict[int, tuple[int, dict]]:
    """{k: (n, manifest)} for every shard folder under ``folder`` (as downloaded: at any depth)."""
    found: dict[int, tuple[int, dict]] = {}
    for manifest_path in sorted(folder.rglob(MANIFEST)):
        manifest = json.loads(manifest_path.read_text())
        k, n = manifest["shard"]
        if k in found:
            raise ShardProblem(f"shard {k} of {n} is there twice (the second: {shown(manifest_path.parent)})")
        found[k] = (n, {**manifest, "folder": manifest_path.parent})
    return found


def merge(shards: Path = OUT, pages: list[Path] | None = None, root: Path = ROOT) -> list[Path]:
    """Copy the shards' notebooks into the book; returns them. ShardProblem when they are not
    the N shards of this checkout, or when a page is still out of date after them."""
    pages = pages or notebook_pages()
    found = shards_found(shards)
    if not found:
        raise ShardProblem(f"no shard under {shown(shards)} (each `make outputs SHARD=k/N` writes one, "
                           f"{folder_name(1, 2)}/{MANIFEST} and its notebooks)")
    counts = {n for n, _ in found.values()}
    if len(counts) != 1:
        raise ShardProblem(f"the shards under {shown(shards)} are of different splits ({sorted(counts)} shards)")
    n = counts.pop()
    missing = [k for k in range(1, n + 1) if k not in found]
    if missing:
        raise ShardProblem(f"shard {', '.join(map(str, missing))} of {n} is missing under {shown(shards)}")
    digest = book_digest(pages, root)
    other = [k for k, (_, manifest) in found.items() if manifest["inputs_sha256"] != digest]
    if other:
        raise ShardProblem(f"shard {', '.join(map(str, sorted(other)))} of {n} executed other pages or another "
                           f"library than this checkout's: run every shard on the same commit")
    copied = []
    for k in sorted(found):
        manifest = found[k][1]
        for relative in manifest["notebooks"]:
            copied.append((manifest["folder"] / relative, root / relative))
    still = stale_pages([md for md in pages if execute_pages.stored_path(md) not in {t for _, t in copied}])
    if still:
        raise ShardProblem("no shard executed " + ", ".join(shown(md) for md in still) + ", which need it: "
                           "were the shards run on this commit's stored notebooks?")
    for source, target in copied:
        write_atomically(target, source.read_text())
    return [target for _, target in copied]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    one = commands.add_parser("run", help="execute shard k of N of the pages that need it")
    one.add_argument("shard", help="k/N, e.g. 2/3")
    one.add_argument("--out", type=Path, default=OUT)
    joined = commands.add_parser("merge", help="join the shards' notebooks into book/")
    joined.add_argument("--shards", type=Path, default=OUT)
    args = parser.parse_args(argv)
    try:
        if args.command == "run":
            return run(*parse(args.shard), out=args.out.resolve())
        copied = merge(args.shards.resolve())
    except (ShardProblem, BookError) as problem:
        print(f"error: {problem}", file=sys.stderr)
        return 1
    print(f"merged {len(copied)} stored notebooks from {shown(args.shards.resolve())}; every page is up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())

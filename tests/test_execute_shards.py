"""runnable_book/pipeline/execute_shards.py: a book's pages executed on N machines and merged give the
stored notebooks one run gives, and a merge of shards that do not belong together stops."""

import shutil

import pytest
from scratch_book import MYST_NOTEBOOK_HEADER

from runnable_book.common.shards import ShardProblem
from runnable_book.pipeline import change_report, execute_pages, execute_shards

pytestmark = pytest.mark.kernel  # (scratch pages executed, as `make outputs` executes them)

PAGE = MYST_NOTEBOOK_HEADER + """
# {title}

```{{code-cell}} ipython3
import hashlib
print(hashlib.sha256(b"{title}").hexdigest()[:12])
```
"""
TITLES = ["15.1 One", "15.2 Two", "15.3 Three"]


def machine(root):
    """A checkout of a scratch book of three pages, none executed yet."""
    root.mkdir()
    pages = []
    for number, title in enumerate(TITLES, start=1):
        page = root / f"page_{number}.md"
        page.write_text(PAGE.format(title=title))
        pages.append(page)
    return pages


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    monkeypatch.setattr(execute_pages, "FAILED_RUNS", tmp_path / "failed")
    monkeypatch.setattr(change_report, "UNREPORTED", tmp_path / "unreported")
    return tmp_path


def test_two_shards_merged_store_what_one_run_stores(scratch, capsys):
    one_run = machine(scratch / "one")
    for page in one_run:
        execute_pages.sync_page(page)
    # Two machines, each a checkout of the same book, each running its shard.
    shards = scratch / "shards"
    for k in (1, 2):
        pages = machine(scratch / f"machine_{k}")
        assert execute_shards.run(k, 2, out=shards / f"artifact-{k}", pages=pages, root=pages[0].parent) == 0
        assert f"shard {k} of 2: {2 if k == 1 else 1} of the 3 pages' notebooks" in capsys.readouterr().out
    # A third checkout merges them (the artifacts as downloaded: one folder each).
    merged = machine(scratch / "merged")
    written = execute_shards.merge(shards, pages=merged, root=merged[0].parent)
    assert sorted(p.name for p in written) == ["page_1.ipynb", "page_2.ipynb", "page_3.ipynb"]
    for mine, theirs in zip(merged, one_run):
        assert execute_pages.stored_path(mine).read_bytes() == execute_pages.stored_path(theirs).read_bytes()
    assert execute_shards.stale_pages(merged) == []
    # Run again on the merged checkout: nothing needs executing, each shard is empty.
    assert execute_shards.run(1, 2, out=scratch / "again", pages=merged, root=merged[0].parent) == 0
    assert "shard 1 of 2: 0 of the 3 pages' notebooks" in capsys.readouterr().out


def test_a_merge_of_shards_that_do_not_belong_together_stops_and_copies_nothing(scratch):
    shards = scratch / "shards"
    first = machine(scratch / "machine_1")
    assert execute_shards.run(1, 2, out=shards, pages=first, root=first[0].parent) == 0
    merged = machine(scratch / "merged")
    with pytest.raises(ShardProblem, match=r"shard 2 of 2 is missing"):
        execute_shards.merge(shards, pages=merged, root=merged[0].parent)
    # The second shard made from an edited page: another checkout's.
    second = machine(scratch / "machine_2")
    second[1].write_text(second[1].read_text().replace("b\"15.2", "b\"15.2 edited"))
    assert execute_shards.run(2, 2, out=shards, pages=second, root=second[0].parent) == 0
    with pytest.raises(ShardProblem, match=r"shard 2 of 2 executed other pages or another library"):
        execute_shards.merge(shards, pages=merged, root=merged[0].parent)
    assert not list((scratch / "merged").glob("*.ipynb")), "nothing copied"
    shutil.copytree(shards / "shard-1-of-2", shards / "copy" / "shard-1-of-2")
    with pytest.raises(ShardProblem, match=r"shard 1 of 2 is there twice"):
        execute_shards.merge(shards, pages=merged, root=merged[0].parent)


def test_a_shard_written_wrong_is_named(capsys):
    assert execute_shards.main(["run", "3/2"]) == 1
    assert "SHARD='3/2': write it as k/N, with 1 <= k <= N" in capsys.readouterr().err

"""The benchmarks' own plumbing (their numbers are not checked: timings live in benchmarks)."""

import json
import subprocess
import sys

from runnable_book.bench.cpu_by_process import NO_COMMAND_LINE, SAMPLER, CpuByProcess, kind_of
from runnable_book.bench.cpu_per_test import OUT_VARIABLE
from runnable_book.bench.suite_modules import floor
from runnable_book.repository import ROOT


def test_cpu_per_test_writes_one_row_per_test_with_its_seconds_and_cpu(tmp_path):
    (tmp_path / "test_two.py").write_text("def test_busy():\n    sum(range(10**6))\n\n\ndef test_idle():\n    pass\n")
    rows = tmp_path / "rows.jsonl"
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "runnable_book.bench.cpu_per_test",
                           str(tmp_path / "test_two.py")], cwd=ROOT, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), OUT_VARIABLE: str(rows)})
    assert done.returncode == 0, done.stdout + done.stderr
    found = [json.loads(line) for line in rows.read_text().splitlines()]
    assert [row["test"].rsplit("::", 1)[1] for row in found] == ["test_busy", "test_idle"]
    assert all(row["seconds"] >= 0 and row["cpu_seconds"] >= 0 for row in found)


def test_cpu_by_process_names_each_kind_from_its_command_line():
    assert kind_of("/usr/lib/chromium/chromium --type=renderer --no-sandbox --headless") == "chromium renderer"
    assert kind_of("/usr/bin/chromium-headless-shell\0--headless\0--no-sandbox") == "chromium browser process"
    assert kind_of("/repo/.venv/bin/python\0-u\0-c\0import sys;exec(eval(sys.stdin.readline()))") == "pytest workers"
    assert kind_of("python\0-m\0ipykernel_launcher\0-f\0k.json") == "Jupyter kernels"
    assert kind_of("node\0--experimental-permission\0/box/code/child.mjs\0/box/") == "grader's sandboxes (Node, Pyodide)"
    assert kind_of("/usr/bin/pdftotext\0x.pdf") == "other: pdftotext"
    assert kind_of("") == NO_COMMAND_LINE


def test_cpu_by_process_charges_a_busy_child_to_its_kind():
    with CpuByProcess(interval=0.05) as sampled:
        subprocess.run([sys.executable, "-c", "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.6: pass"],
                       check=True)
    kinds = sampled.by_kind()
    # The child used 0.6 CPU-s; what it used after the sampler's last reading of it is lost
    # (it ended before the next), at most one interval's worth.
    assert kinds.get("Python, other (builds, make's tools, ...)", 0) >= 0.5, kinds
    assert sum(kinds.values()) <= sampled.busy + 0.2, kinds
    assert SAMPLER in kinds, kinds  # (this test's own process, reading /proc: not charged to pytest)


def test_the_floor_takes_a_pytest_start_off_each_module_and_shares_the_rest_between_the_cores():
    measured = {"test_a.py": {"cpu_seconds": 1.0}, "test_b.py": {"cpu_seconds": 9.0}, "test_c.py": {"cpu_seconds": 5.0}}
    least = floor(measured, once=2.0, cores=2)
    assert least == {"cpu_seconds_less_starts": 12.0, "cores": 2, "seconds": 6.0, "ratio": 3.0}


def _ended(pid: int) -> bool:
    """Gone, or a zombie (ended; whether its new parent reaps it is that parent's business)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_busy_processes_end_with_their_block_and_with_a_parent_killed_outright():
    import os
    import signal
    import time

    from runnable_book.common.busy import busy_processes

    with busy_processes(2) as hogs:
        assert [hog.poll() for hog in hogs] == [None, None]
    assert all(hog.returncode is not None for hog in hogs)
    # A parent killed with SIGKILL runs no `finally`: its hog must see it and stop by itself.
    parent = subprocess.Popen([sys.executable, "-c", "import time\nfrom runnable_book.common.busy import busy_processes\n"
                               "with busy_processes(1) as hogs:\n    print(hogs[0].pid, flush=True)\n    time.sleep(600)\n"],
                              cwd=ROOT, stdout=subprocess.PIPE, text=True)
    hog = int(parent.stdout.readline())
    assert not _ended(hog)
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 120  # (a state waited for: a fraction of a second unloaded)
    while not _ended(hog) and time.monotonic() < deadline:
        time.sleep(0.05)
    ended = _ended(hog)
    if not ended:
        os.kill(hog, signal.SIGKILL)
    assert ended, "a busy process outlived its parent, killed outright"


def test_a_grown_chapter_is_a_renamed_copy_that_saves_no_name_twice():
    """runnable_book/bench/many_chapters.py's copies: the title's number, saved names where code uses them
    (never an attribute), figure names and the chapter's module, renamed for chapter 17."""
    from runnable_book.bench.many_chapters import renamed

    page = ("# 15.4 Quality\n\n```{code-cell} ipython3\n# @save\ndef score(r):\n    return r.score + search(1)\n```\n\n"
            "{numref}`fig-accuracy` and\n:name: fig-accuracy\nfrom chapter_lib.chapter15 import _hidden\n")
    assert renamed(page, 17, ["search", "score", "_hidden"]) == (
        "# 17.4 Quality\n\n```{code-cell} ipython3\n# @save\ndef score_c17(r):\n    return r.score + search_c17(1)\n"
        "```\n\n{numref}`fig-accuracy-c17` and\n:name: fig-accuracy-c17\nfrom chapter_lib.chapter17 import _hidden_c17\n")


def test_the_floor_is_a_plain_jupyter_book_of_the_stored_notebooks(tmp_path):
    """runnable_book/bench/sphinx_floor.py's book: the stored notebooks as pages, this book's
    configuration without the tool (its extension, the settings only it reads, the exclusion of
    stored notebooks), and a page that has code but no stored notebook refused by name."""
    import nbformat
    import yaml

    from runnable_book.bench.sphinx_floor import TOOL_EXTENSION, TOOL_SETTINGS, plain_book

    book = tmp_path / "copy"
    (book / "book" / "_static").mkdir(parents=True)
    (book / "_toc.yml").write_text("format: jb-book\nroot: book/index\nchapters:\n  - file: book/15_01_a\n")
    (book / "book" / "references.bib").write_text("")
    (book / "book" / "index.md").write_text("# The opening\n")
    (book / "book" / "15_01_a.md").write_text("# 15.1 A\n\n```{code-cell} ipython3\nprint(1)\n```\n")
    nbformat.write(nbformat.v4.new_notebook(), book / "book" / "15_01_a.ipynb")
    floor = plain_book(book, tmp_path / "floor")
    assert sorted(p.name for p in (floor / "book").iterdir()) == ["15_01_a.ipynb", "_static", "index.md", "references.bib"]
    config = yaml.safe_load((floor / "_config.yml").read_text())
    assert TOOL_EXTENSION not in config["sphinx"]["extra_extensions"]
    assert "sphinxcontrib.mermaid" in config["sphinx"]["extra_extensions"]
    assert not TOOL_SETTINGS & set(config["sphinx"]["config"])
    assert not [p for p in config["exclude_patterns"] if p.endswith(".ipynb")]
    (book / "book" / "15_01_a.ipynb").unlink()
    try:
        plain_book(book, tmp_path / "floor")
    except SystemExit as refused:
        assert "15_01_a.md" in str(refused) and "make bench-chapters" in str(refused)
    else:
        raise AssertionError("a page with code and no stored notebook was taken")

"""runnable_book/pipeline/myst_to_notebook.py: each MyST construct the book uses, and the reader's notebooks.

A reader's notebook (book/X.ipynb) must read like the HTML page in any Jupyter: no raw
MyST, citations resolved, figures numbered and captioned, worked solutions folded.
"""

import re
import sys
from pathlib import Path

import nbformat
import pytest

from runnable_book.pipeline import book_shape, install_cell
from runnable_book.pipeline import myst_to_notebook as convert
from runnable_book.pipeline import reader_notebook as assemble
from runnable_book.pipeline.pages import notebook_pages, read_page
from runnable_book.repository import ROOT
from runnable_book.pipeline.execute_pages import stored_path

PAGE = ROOT / "book" / "page.md"


def md(text: str, cell: int = 4) -> str:
    return convert.convert_markdown(text, convert.Context(PAGE, cell))


# --------------------------------------------------------------------------
# One construct at a time
# --------------------------------------------------------------------------


def test_plain_commonmark_is_kept_line_for_line():
    text = "# Title\n\nA *b* `c` [d](https://e.org).\n\n- one\n- two\n\n| a | b |\n| - | - |\n| 1 | 2 |\n\n$x^2$\n"
    assert md(text) == text


def test_a_parenthetical_citation_names_authors_and_year_and_links_the_references():
    ctx = convert.Context(PAGE, 3)
    out = convert.convert_markdown("text {cite:p}`zou2025poisonedrag`.", ctx)
    assert out == "text ([Zou et al. 2025](#ref-zou2025poisonedrag))."
    assert ctx.cited == ["zou2025poisonedrag"]


def test_a_textual_citation_puts_the_year_in_brackets():
    assert md("{cite:t}`liu2024lost` show") == "[Liu et al.](#ref-liu2024lost) (2024) show"


def test_a_citation_of_two_works_lists_both():
    assert md("{cite:p}`asai2024selfrag,yan2024crag`") == (
        "([Asai et al. 2024](#ref-asai2024selfrag); [Yan et al. 2024](#ref-yan2024crag))")


def test_an_unknown_citation_key_names_page_and_cell():
    with pytest.raises(convert.ConversionError, match=r"book/page.md, cell 4: .*nobody2099"):
        md("{cite:p}`nobody2099`")


def test_a_numref_is_the_figure_number_the_html_shows():
    assert md("{numref}`fig-trust-boundaries` locates") == "Figure 15.5 locates"
    assert md("see {numref}`Fig. %s <fig-agentic-loop>`") == "see Fig. 15.1"


def test_figures_are_numbered_through_the_book_in_reading_order():
    numbers = convert.figure_numbers()
    assert [numbers[label] for label in ("fig-agentic-loop", "fig-accuracy-frontier", "fig-trust-boundaries")] == [
        "Figure 15.1", "Figure 15.2", "Figure 15.5"]


def test_an_admonition_is_a_blockquote_with_a_bold_title_after_its_kind():
    text = "```{admonition} In the interview\n:class: tip\n\nQ. Why {cite:p}`liu2024lost`?\n\nA. Because.\n```"
    assert md(text) == (
        "> **Tip: In the interview**\n>\n> Q. Why ([Liu et al. 2024](#ref-liu2024lost))?\n>\n> A. Because.")


def test_a_note_and_a_tip_are_told_apart():
    note = md("```{admonition} Landscape\n:class: note\n\nText.\n```")
    tip = md("```{admonition} Landscape\n:class: tip\n\nText.\n```")
    assert note.startswith("> **Note: Landscape**") and tip.startswith("> **Tip: Landscape**")
    assert md("```{admonition} Plain\n\nText.\n```").startswith("> **Plain**")


def test_a_named_admonition_takes_its_name_as_title():
    assert md(":::{note}\nMind the gap.\n:::") == "> **Note**\n>\n> Mind the gap."


def test_a_dropdown_is_a_closed_details_element():
    text = "````{dropdown} Worked solution 1: the answer in words\nIt is **d02**.\n````"
    assert md(text) == (
        "<details>\n<summary>Worked solution 1: the answer in words</summary>\n\nIt is **d02**.\n\n</details>")


def test_a_figure_attribute_line_becomes_a_caption_under_the_diagram():
    text = ('{#fig-trust-boundaries caption="Where must checks sit?" alt="Flowchart: caller to filter."}\n'
            "```mermaid\nflowchart LR\n  A --> B\n```")
    assert md(text) == (
        "```mermaid\nflowchart LR\n  A --> B\n```\n\n*Figure 15.5: Where must checks sit?*\n\n"
        "<details>\n<summary>Figure 15.5 in words</summary>\n\nFlowchart: caller to filter.\n\n</details>")


def test_a_plain_mermaid_fence_is_kept_for_jupyterlab_to_draw():
    assert md("```mermaid\ngraph TD\n  A --> B\n```") == "```mermaid\ngraph TD\n  A --> B\n```"


def test_targets_and_comments_render_as_nothing():
    assert md("(sec-x)=\n# Title\n\n% a note to editors\nText.") == "\n# Title\n\n\nText."


@pytest.mark.parametrize("text, what", [
    ("{ref}`sec-x`", r"the role \{ref\}"),
    ("```{figure} x.png\nA caption.\n```", r"the \{figure\} directive"),
    ("{.wide}\nA paragraph.", r"attributes"),
    ("- ```{note}\n  inside a list\n  ```", r"MyST inside a bullet_list_open"),
    ("Term\n: Definition", r"dl_open"),
    ("```{admonition} Title\n:width: 3\n\nx\n```", r"options \['width'\]"),
    ("Name {{ project }}", r"substitution"),
])
def test_an_unknown_construct_stops_with_page_and_cell(text, what):
    with pytest.raises(convert.ConversionError, match=r"^book/page.md, cell 4: .*" + what):
        md(text)


def test_a_role_inside_a_code_span_is_not_converted_silently():
    with pytest.raises(convert.ConversionError, match="code span"):
        md("{cite:p}`liu2024lost` and `{cite:p}`x``")


# --------------------------------------------------------------------------
# Notebook cells
# --------------------------------------------------------------------------


def notebook(*cells):
    nb = nbformat.v4.new_notebook()
    nb.cells = list(cells)
    return nb


def test_a_code_cells_figure_caption_follows_it_and_a_hidden_solution_is_folded():
    figure = nbformat.v4.new_code_cell("import matplotlib.pyplot as plt", metadata={
        "mystnb": {"figure": {"name": "fig-accuracy-frontier", "caption": "Accuracy, `k=7`."},
                   "image": {"alt": "Line chart."}},
        "tags": ["hide-cell"]})
    cells = assemble.reader_cells(PAGE, notebook(figure))
    install, heading, code, caption = cells
    assert assemble.INSTALL_TAG in install.metadata.tags and "matplotlib" in install.source
    assert heading.source == "### Hidden cells" and heading.metadata["jp-MarkdownHeadingCollapsed"] is True
    assert "mystnb" not in code.metadata
    assert code.metadata.jupyter == {"source_hidden": True, "outputs_hidden": True}
    assert caption.cell_type == "markdown" and "jupyter" not in caption.metadata
    assert caption.source.startswith("*Figure 15.2: Accuracy, `k=7`.*")
    assert "<summary>Figure 15.2 in words</summary>\n\nLine chart." in caption.source


def test_the_references_cell_lists_the_works_cited_on_the_page_in_the_html_style():
    text = nbformat.v4.new_markdown_cell("{cite:p}`zou2025poisonedrag`, {cite:p}`asai2024selfrag`")
    references = assemble.reader_cells(PAGE, notebook(text))[-1]
    assert references.source == (
        '<a id="references"></a>\n\n## References\n\n'
        '- <a id="ref-asai2024selfrag"></a>'
        "Asai, Akari, Zeqiu Wu, Yizhong Wang, Avirup Sil, and Hannaneh Hajishirzi. 2024. “Self-RAG: Learning "
        "to Retrieve, Generate, and Critique Through Self-Reflection.” *International Conference on Learning "
        "Representations*.\n"
        '- <a id="ref-zou2025poisonedrag"></a>'
        "Zou, Wei, Runpeng Geng, Binghui Wang, and Jinyuan Jia. 2025. “PoisonedRAG: Knowledge Corruption "
        "Attacks to Retrieval-Augmented Generation of Large Language Models.” *USENIX Security Symposium*.")


def test_an_error_names_the_cell_by_its_rank_in_the_md():
    cells = [nbformat.v4.new_markdown_cell("ok"), nbformat.v4.new_code_cell("x = 1"),
             nbformat.v4.new_markdown_cell("{eq}`e1`")]
    with pytest.raises(convert.ConversionError, match=r"book/page.md, cell 3: the role \{eq\}"):
        assemble.reader_cells(PAGE, notebook(*cells))


def run_install_cell(needed: dict[str, list[str]], digest: str | None = None, works: set[str] = frozenset(),
                     pip_installed: bool = False, pip_says: str = "ERROR: could not reach the repository",
                     ) -> tuple[list, BaseException | None]:
    """The cell's own logic, with pip replaced by a stand-in (the fresh-environment runs
    are in tests/test_binder.py and tests/test_two_editions.py): ``needed`` maps a module to its
    requirements, each a source of its own; pip succeeds for those in ``works`` only, and
    otherwise says ``pip_says``. Returns pip's invocations and what the cell raised.
    ``digest``: the edition's chapter_lib content (by default this checkout's); ``pip_installed``:
    the chapter_lib here reads as a copy pip installed (else it is the book's own checkout)."""
    import pathlib
    import subprocess

    from runnable_book.pipeline import edition

    calls = []

    def fake_run(command, **kwargs):
        calls.append(command)
        if command[-1] in works:
            return subprocess.CompletedProcess(command, 0, "", "")
        return subprocess.CompletedProcess(command, 1, "", pip_says)

    cell = install_cell.install_cell(
        {module: install_cell.Needed(module, tuple((f"source {n}", r) for n, r in enumerate(requirements, start=1)))
         for module, requirements in needed.items()},
        "Edition 0 (a test's)", digest or edition.content_digest())
    namespace = {}
    real_run, real_is_file = subprocess.run, pathlib.Path.is_file
    # The cell forgets the modules it installs (``del sys.modules[...]``, so that the edition it
    # installs is the one imported): put this process's back, or a later test in the same
    # worker holds one chapter_lib.exercises.points while the library it calls imports another.
    imported = {name: module for name, module in sys.modules.items() if name.split(".")[0] in needed}
    subprocess.run = fake_run
    if pip_installed:  # (this checkout's chapter_lib, as if pip had put it elsewhere: no pyproject.toml beside it)
        pathlib.Path.is_file = lambda path: path.name != "pyproject.toml" and real_is_file(path)
    try:
        exec(cell.source, namespace)
    except BaseException as error:  # noqa: BLE001 - the cell's own error is what is tested
        return calls, error
    finally:
        subprocess.run, pathlib.Path.is_file = real_run, real_is_file
        for name in [name for name in sys.modules if name.split(".")[0] in needed]:
            del sys.modules[name]
        sys.modules.update(imported)
    return calls, None


LIBRARY = "chapter-lib @ git+file:///nowhere@0123456789abcdef"
ANOTHER_EDITION = "0123456789abcdef"  # a content digest no chapter_lib has


def test_the_install_cell_installs_only_what_is_missing():
    calls, error = run_install_cell({"chapter_lib": ["x"]})
    assert calls == [] and error is None, "chapter_lib is installed here: nothing may be installed"
    # chapter_lib is there, the figure module is not (a stand-in name for matplotlib): only it.
    calls, error = run_install_cell({"chapter_lib": [LIBRARY], "not_a_module_xyz": ["plotting-package"]})
    assert [command[6:] for command in calls] == [["plotting-package"]], calls
    assert calls[0][1:6] == ["-m", "pip", "install", "--quiet", "--no-color"]
    assert str(error).startswith("Could not install not_a_module_xyz, which this notebook needs, from source 1.")


def test_another_editions_chapter_lib_is_replaced_by_this_ones_whatever_its_version():
    """A pip-installed chapter_lib with this very version (every unreleased commit has it) but
    other content is replaced (forced: pip keeps an installed version); the same content is kept."""
    calls, error = run_install_cell({"chapter_lib": [LIBRARY]}, digest=ANOTHER_EDITION, works={LIBRARY},
                                    pip_installed=True)
    assert [command[6:] for command in calls] == [["--force-reinstall", LIBRARY]] and error is None, (calls, error)
    calls, error = run_install_cell({"chapter_lib": [LIBRARY]}, works={LIBRARY}, pip_installed=True)
    assert calls == [] and error is None, "this edition's own library (same content) is kept"


def test_the_books_own_checkout_is_used_as_it_is():
    """The author's checkout (`make lab`, .venv's editable install) is never replaced, whatever the notebook says."""
    calls, error = run_install_cell({"chapter_lib": [LIBRARY]}, digest=ANOTHER_EDITION, works={LIBRARY})
    assert calls == [] and error is None, (calls, error)


def test_the_cells_digest_is_the_builds_own_on_an_installed_wheel(tmp_path):
    """The cell digests the installed package as edition.content_digest digests the sources: a
    wheel built from this checkout, unpacked as pip installs it, gives the build's digest."""
    import subprocess
    import sys
    import zipfile

    from runnable_book.pipeline import edition

    source = tmp_path / "source"
    source.mkdir()
    (source / "pyproject.toml").write_bytes((ROOT / "pyproject.toml").read_bytes())
    subprocess.run(["cp", "-r", str(ROOT / "chapter_lib"), str(source)], check=True)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", str(source),
                    "-w", str(tmp_path / "wheel")], check=True, capture_output=True)
    with zipfile.ZipFile(next((tmp_path / "wheel").glob("chapter_lib-*.whl"))) as wheel:
        wheel.extractall(tmp_path / "site-packages")
    cell = install_cell.install_cell({}, "Edition 0 (a test's)", edition.content_digest())
    function = cell.source[cell.source.index("def this_editions_library"):cell.source.index("\n\n\nfor module")]
    program = ("import hashlib, importlib.metadata, importlib.util, pathlib, sys\n" + function
               + "\nprint(importlib.util.find_spec('chapter_lib').origin, this_editions_library())")
    seen = subprocess.run([sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(tmp_path / 'site-packages')!r})\n"
                           + program], capture_output=True, text=True, cwd=tmp_path)
    assert seen.returncode == 0, seen.stderr
    where, same = seen.stdout.split()
    assert where.startswith(str(tmp_path / "site-packages")) and same == "True", seen.stdout
    (tmp_path / "site-packages" / "chapter_lib" / "chapter15.py").write_text("# another edition\n", encoding="utf-8")
    seen = subprocess.run([sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(tmp_path / 'site-packages')!r})\n"
                           + program], capture_output=True, text=True, cwd=tmp_path)
    assert seen.stdout.split()[1] == "False", seen.stdout + seen.stderr


def test_the_install_cell_takes_its_sources_in_order_and_stops_at_the_first_that_works():
    first, second, third = "site-wheel", LIBRARY, "never-asked"
    # (another edition's chapter_lib, so that it is installed, and imports once "installed")
    calls, error = run_install_cell({"chapter_lib": [first, second, third]}, digest=ANOTHER_EDITION, works={second},
                                    pip_installed=True)
    assert [command[-1] for command in calls] == [first, second] and error is None, (calls, error)


def test_pips_error_is_cut_at_whole_lines_never_mid_word():
    """pip's long error keeps its last whole lines (about 1500 characters), each line as pip wrote it."""
    said = [f"line {n}: " + " ".join(f"word{n}x{k}" for k in range(12)) for n in range(60)]
    _, error = run_install_cell({"not_a_module_xyz": ["a-requirement"]}, pip_says="\n".join(said))
    kept = str(error).split("pip said:\n", 1)[1].split("\nWhat to do:", 1)[0].splitlines()
    assert kept and kept[-1] == said[-1] and all(line in said for line in kept), kept[:2]
    assert len(kept) < len(said) and sum(map(len, kept)) <= 1500


def test_a_failed_install_stops_in_the_install_cell_with_what_to_do():
    _, error = run_install_cell({"not_a_module_xyz": ["site-wheel", LIBRARY]})
    assert isinstance(error, RuntimeError), error
    message = str(error)
    # One sentence says what could not be installed, and from where.
    first_line = message.splitlines()[0]
    assert first_line == "Could not install not_a_module_xyz, which this notebook needs, from source 1 or source 2."
    assert message.count("ERROR: could not reach the repository") == 2  # each source's error, once
    assert "(source 1) ERROR" in message and "(source 2) ERROR" in message
    assert "What to do:" in message and "Binder" in message


# --------------------------------------------------------------------------
# The committed reader's notebooks
# --------------------------------------------------------------------------

RAW_MYST = re.compile(r"\{cite|\{numref|\{ref\}|```\{|:::|\{#|:class:|\{eval-rst|\{\{|^\(\S+\)=$|^\+\+\+", re.M)


def reader(md: Path):
    return nbformat.read(stored_path(md), as_version=4)


@pytest.mark.parametrize("md", notebook_pages(), ids=lambda p: p.stem)
def test_a_readers_notebook_holds_no_raw_myst(md):
    raw = [(c.id, m.group(0)) for c in reader(md).cells if c.cell_type == "markdown"
           for m in RAW_MYST.finditer(c.source)]
    assert raw == [], f"{stored_path(md).name} shows MyST as text: {raw}"


@pytest.mark.parametrize("md", notebook_pages(), ids=lambda p: p.stem)
def test_a_readers_notebook_opens_with_the_install_cell_and_full_language_info(md):
    nb = reader(md)
    code = [c for c in nb.cells if c.cell_type == "code"]
    first = nb.cells[0]
    if not any(c.cell_type == "code" for c in read_page(md).cells):  # 15.10: prose only
        assert not code, f"{md.stem} has no code, so no install cell either"
    else:
        assert first.cell_type == "code" and {"setup", assemble.INSTALL_TAG} <= set(first.metadata.tags)
        assert "# Setup (ours" in first.source and '"-m", "pip", "install"' in first.source
        assert ("matplotlib" in first.source) == assemble.draws_figures(read_page(md))
        # `make outputs` ran it first: the counts read 1, 2, 3 ... from the top
        assert [c.execution_count for c in code] == list(range(1, len(code) + 1))
    assert {"codemirror_mode", "file_extension", "mimetype", "name", "pygments_lexer"} <= set(nb.metadata.language_info)


def test_every_figure_has_its_caption_and_every_citation_its_reference():
    captions, cited = {}, 0
    for md in notebook_pages():
        nb = reader(md)
        for cell in nb.cells:
            captions.update((m, md.stem) for m in re.findall(r"^\*(Figure 15\.\d+):", cell.source, re.M))
        links = sum(len(re.findall(r"\]\(#ref-[\w-]+\)", c.source)) for c in nb.cells)
        cited += links
        # Each citation lands on its own entry of the References cell.
        anchors = {m for c in nb.cells for m in re.findall(r'<a id="(ref-[\w-]+)"></a>', c.source)}
        targets = {m for c in nb.cells for m in re.findall(r"\]\(#(ref-[\w-]+)\)", c.source)}
        assert targets <= anchors, f"{md.stem}: citations without an entry: {sorted(targets - anchors)}"
        has_references = any("\n## References\n" in c.source for c in nb.cells)
        assert has_references == bool(links), md.stem
    assert sorted(captions, key=lambda c: int(c.split(".")[-1])) == list(book_shape.figures().values())
    assert cited == book_shape.citations()  # in the text and in figure captions


def test_the_worked_solutions_are_folded_and_the_answers_closed():
    page = book_shape.exercises_page()
    numbers = book_shape.exercise_numbers()
    nb = reader(page)
    solutions = [c for c in nb.cells if c.cell_type == "code" and "hide-cell" in c.metadata.get("tags", [])]
    assert len(solutions) == len(book_shape.hidden_cells(page))
    assert all(c.metadata.jupyter == {"source_hidden": True, "outputs_hidden": True} for c in solutions)
    answers = [c for c in nb.cells if c.cell_type == "markdown" and "<details>\n<summary>Worked solution" in c.source]
    assert len(answers) == len(numbers) and not any("<details open>" in c.source for c in answers)
    # Each worked solution sits under a collapsed heading of its own, from its first hidden
    # cell to the next exercise: JupyterLab keeps it collapsed when the cells run.
    headings = [i for i, c in enumerate(nb.cells) if assemble.SECTION_TAG in c.metadata.get("tags", [])]
    assert [nb.cells[i].source for i in headings] == [f"### Worked solution {n}" for n in numbers]
    assert all(nb.cells[i].metadata["jp-MarkdownHeadingCollapsed"] is True for i in headings)
    for i in headings:
        end = next((j for j in range(i + 1, len(nb.cells)) if nb.cells[j].source.startswith("## ")), len(nb.cells))
        inside = nb.cells[i + 1:end]
        assert "hide-cell" in inside[0].metadata.get("tags", [])
        assert any("<summary>Worked solution" in c.source for c in inside if c.cell_type == "markdown")
        assert not any(c.cell_type == "code" and "hide-cell" not in c.metadata.get("tags", []) for c in inside)
    # Hints come before the solution's section, closed and nested (one opens the next).
    for n, i in zip(numbers, headings):
        before = "\n".join(c.source for c in nb.cells[:i] if c.cell_type == "markdown")
        assert "<details>\n<summary>Hint 1 of" in before and f"for exercise {n}</summary>" in before
    # Captions are not folded: a folded markdown cell shows its raw source on one line.
    captions = [c for c in nb.cells if assemble.CAPTION_TAG in c.metadata.get("tags", [])]
    assert captions and not any(c.metadata.get("jupyter") for c in captions)


# --------------------------------------------------------------------------
# The same numbers and citations as the HTML book
# --------------------------------------------------------------------------

HTML_CITATION = re.compile(r'<span class="bibtex-citation"[^>]*>(.*?)</span>', re.S)
HTML_FIGURE_NUMBER = re.compile(r'<span class="caption-number">(.*?)</span>')
NOTEBOOK_CITATION = re.compile(r"\((?:\[[^\]]+\]\(#ref-[\w-]+\)(?:; )?)+\)")


def plain(html_text: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", "", html_text).split())


@pytest.mark.site
@pytest.mark.parametrize("md", notebook_pages(), ids=lambda p: p.stem)
def test_citations_and_figure_numbers_read_as_in_the_html(site, md):
    html_page = (site / md.relative_to(ROOT).with_suffix(".html")).read_text()
    text = "\n".join(c.source for c in reader(md).cells if c.cell_type == "markdown")
    in_notebook = [re.sub(r"\[([^\]]+)\]\(#ref-[\w-]+\)", r"\1", m.group(0)) for m in NOTEBOOK_CITATION.finditer(text)]
    assert in_notebook == [plain(c) for c in HTML_CITATION.findall(html_page)]
    numbers = re.findall(r"^\*(Figure 15\.\d+):", text, re.M)
    assert numbers == [plain(n) for n in HTML_FIGURE_NUMBER.findall(html_page)]
    install = next((c for c in reader(md).cells if assemble.INSTALL_TAG in c.metadata.get("tags", [])), None)
    assert (install is not None) == any(c.cell_type == "code" for c in read_page(md).cells)
    assert install is None or "lets this notebook run where it opens" in install.source
    assert "lets this notebook run where it opens" not in html_page, "the install cell is for notebooks only"

"""A Binder session, played locally without Binder.

Binder builds an image from binder/ (its requirements.txt on top of its own JupyterLab and
kernel, then postBuild installs the commit's chapter_lib; tests/test_launch_environment.py
builds that environment and runs every notebook in it), copies the repository into the home
directory and opens JupyterLab there; a launch link then names the commit and the notebook
to open. The commonest failures are a link that 404s (wrong commit or path), a MyST .md
page that opens as plain text, and a chapter_lib that will not import. These tests check
each of those here:

* the environment running the tests (.venv, built by `make env`) holds exactly the
  pins of requirements.txt, and chapter_lib imports from any folder with its Python;
* every launch link of the built HTML opens the edition's commit (the branch for a
  preview build, which no commit holds yet: runnable_book/sphinx_ext/edition_on_pages.py), derived from
  `repository.url` in _config.yml, and a notebook that commit holds; the notebooks the
  links open are exactly the ones nbval executes in `make test-notebooks` (in their own
  folder, with a kernel of this environment), so they are not executed again here;
* a JupyterLab server of this environment, started the way Binder starts it (the
  repository copied into a temporary home directory, which therefore holds the
  repository's .jupyter/ settings), serves every book/*.md as a notebook;
* in headless Chromium that JupyterLab opens the 15.3 page as a notebook, runs all
  its cells and shows the agentic trace (screenshot: _build/binder/), and draws the
  mermaid diagram of 15.2.

Nothing is written into the repository: the server works on the copy.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from html import unescape
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

import pytest
from markers import needs
import yaml
from playwright.sync_api import expect

from built_artefacts import require_built
from fresh_environment import MARKER, code_of, fresh_environment, installed_from, made_venv, run_as_kernel, stored_stdout
from packaging.markers import default_environment

from runnable_book.interpreters import supported
from runnable_book.interpreters.lock_check import pins_where
from runnable_book.pipeline import book_shape, edition
from runnable_book.pipeline.artefact_steps import WHEEL
from runnable_book.pipeline.install_cell import library_needed, repository_url, served_wheel, site_url
from runnable_book.pipeline.pages import is_notebook_page, notebook_pages, read_page
from runnable_book.repository import ROOT
from runnable_book.pipeline.execute_pages import stored_path
from runnable_book.browser.chromium import keep_on_host, open_context
from runnable_book.browser.local_site import find_pages
from runnable_book.browser.page_state import MERMAID_TIMEOUT_MS, wait_until

pytestmark = pytest.mark.site

SITE = ROOT / "_build" / "html"
OUT = ROOT / "_build" / "binder"
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
WORKFLOW = ROOT / ".github" / "workflows" / "pages.yml"

# The page that is run in the browser, and the line of its trace that must appear.
RUN_PAGE = "book/15_03_agentic_loop.md"
RUN_EXPECTS = "read: Aurora region us-east-2 [d03]"
MERMAID_PAGE = "book/15_02_one_shot_rag.md"

SERVER_START_TIMEOUT_S = 60
NOTEBOOK_OPEN_TIMEOUT_MS = 60_000
RUN_ALL_TIMEOUT_MS = 120_000
VIEWPORT = {"width": 1400, "height": 900}
# pip puts these into every virtual environment; `pip freeze` (which wrote
# requirements.txt) leaves them out.
VENV_SEED_PACKAGES = {"pip", "setuptools", "wheel"}


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------


def normalized_name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_pins() -> tuple[dict[str, str], list[str]]:
    """{name: version} of the pins of requirements.txt whose markers hold for this Python (one
    lock for every supported Python: runnable_book/interpreters/), and the lines that are no pin."""
    lines = [line.split("#", 1)[0].strip() for line in (ROOT / "requirements.txt").read_text().splitlines()]
    return pins_where(default_environment()), [line for line in lines if line and "==" not in line]


def repository() -> tuple[str, str, str, str]:
    """(url, owner, name, branch) from _config.yml: the one place they are set."""
    url = CONFIG["repository"]["url"].rstrip("/")
    parts = urlsplit(url)
    owner, name = parts.path.strip("/").removesuffix(".git").split("/")[:2]
    return url, owner, name, CONFIG["repository"].get("branch", "master")


def tracked_files() -> set[str] | None:
    """Files git would push, or None when this is not a git checkout (e.g. a tarball)."""
    if not (ROOT / ".git").exists():
        return None
    listing = subprocess.run(
        ["git", "-c", f"safe.directory={ROOT}", "ls-files", "-z"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )
    return set(filter(None, listing.stdout.split("\0")))


def committed_files(commit: str) -> set[str]:
    """The files a commit holds."""
    listing = subprocess.run(
        ["git", "-c", f"safe.directory={ROOT}", "ls-tree", "-r", "-z", "--name-only", commit],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )
    return set(filter(None, listing.stdout.split("\0")))


def nbval_notebooks() -> list[Path]:
    """The notebooks `make test-notebooks` hands to nbval, by the glob in the Makefile's recipe
    (`make check` runs nbval too, on the pages changed since its last run: not the gate's list)."""
    lines = (ROOT / "Makefile").read_text().splitlines()
    start = next(number for number, line in enumerate(lines) if line.startswith("test-notebooks:")) + 1
    end = next((number for number in range(start, len(lines)) if not lines[number].startswith("\t")), len(lines))
    recipe = [line for line in lines[start:end] if "--nbval" in line]
    assert len(recipe) == 1, f"expected one nbval command in `make test-notebooks`, found {recipe}"
    globs = [word for word in recipe[0].split() if word.endswith(".ipynb")]
    assert globs, f"the nbval command names no notebooks: {recipe[0]}"
    return sorted(path for pattern in globs for path in ROOT.glob(pattern))


LAUNCH_HOSTS = {
    key: urlsplit(CONFIG["launch_buttons"][key]).netloc
    for key in ("binderhub_url", "jupyterhub_url", "colab_url")
    if CONFIG.get("launch_buttons", {}).get(key)
}
HREF = re.compile(r'<a\b[^>]*\bhref="([^"]+)"')


def launch_links(html_file: Path) -> dict[str, list[str]]:
    """The page's launch links, by provider (the _config.yml key naming its host)."""
    links: dict[str, list[str]] = {}
    for href in sorted(set(map(unescape, HREF.findall(html_file.read_text(encoding="utf-8"))))):
        for key, host in LAUNCH_HOSTS.items():
            if urlsplit(href).netloc == host:
                links.setdefault(key, []).append(href)
    return links


def page_html(md: Path) -> Path:
    return SITE / md.relative_to(ROOT).with_suffix(".html")


# --------------------------------------------------------------------------
# The environment
# --------------------------------------------------------------------------


def test_the_environment_is_requirements_txt_alone():
    """Every pin installed at its version, and nothing else: no package added by hand."""
    pins, others = requirement_pins()
    assert others == ["-e ."], f"requirements.txt should end with `-e .` only; other lines: {others}"
    listing = subprocess.run(
        [sys.executable, "-m", "pip", "list", "--format=json", "--disable-pip-version-check"],
        capture_output=True, text=True, check=True,
    )
    installed = {normalized_name(p["name"]): p["version"] for p in json.loads(listing.stdout)}
    project = normalized_name(
        re.search(r'^name\s*=\s*"([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M).group(1)
    )
    assert project in installed, f"{project} (the `-e .` line) is not installed in {sys.prefix}"
    wrong = {name: (version, installed.get(name)) for name, version in pins.items() if installed.get(name) != version}
    assert not wrong, f"pinned version != installed version: {wrong}"
    extra = set(installed) - set(pins) - VENV_SEED_PACKAGES - {project}
    assert not extra, f"installed in {sys.prefix} but not in requirements.txt: {sorted(extra)}"


def test_the_environment_runs_a_supported_python_and_publishing_binders():
    """binder/runtime.txt (Binder) and the publishing workflow agree; this environment runs one
    of the supported Pythons (pyproject.toml's classifiers), maybe another than theirs."""
    runtime = (ROOT / "binder" / "runtime.txt").read_text().strip()
    match = re.fullmatch(r"python-(\d+)\.(\d+)", runtime)
    assert match, f"runtime.txt should read python-X.Y, not {runtime!r}"
    version = tuple(map(int, match.groups()))
    running = f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert running in supported(), f"this environment runs Python {running}, not one of {supported()}"
    workflow = WORKFLOW.read_text()
    assert f"python:{version[0]}.{version[1]}-" in workflow, f"{WORKFLOW} does not use Python {runtime}"
    assert not (ROOT / "runtime.txt").exists(), "runtime.txt at the root: Binder reads binder/runtime.txt alone"


def test_chapter_lib_imports_from_any_folder(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run(
        [sys.executable, "-c", "import chapter_lib; print(chapter_lib.__file__)"],
        cwd=tmp_path, env=env, capture_output=True, text=True,
    )
    assert result.returncode == 0, f"import chapter_lib failed in {tmp_path}:\n{result.stderr}"
    assert Path(result.stdout.strip()).resolve() == (ROOT / "chapter_lib" / "__init__.py").resolve()


# --------------------------------------------------------------------------
# Launch links
# --------------------------------------------------------------------------


def test_launch_links_open_the_editions_commit_and_its_notebooks(site):
    """Binder and Colab open the commit the site's edition names (a notebook that commit
    holds); a preview, which no commit holds, opens the branch. JupyterHub (nbgitpuller) pulls
    the branch."""
    url, owner, name, branch = repository()
    assert branch == "main", f"_config.yml repository.branch is {branch!r}; readers' links need 'main'"
    assert urlsplit(url).netloc == "github.com", f"Binder and Colab links below assume GitHub, not {url}"
    assert {"binderhub_url", "colab_url"} <= set(LAUNCH_HOSTS), f"launch_buttons lacks Binder or Colab: {LAUNCH_HOSTS}"
    named = edition.Edition.from_json(edition.RECORD.read_text())
    ref = named.commit or branch
    held = committed_files(named.commit) if named.commit else tracked_files()
    problems, opened = [], set()

    def check_path(page: str, what: str, path: str, expected: str) -> None:
        opened.add(path)
        if path != expected:
            problems.append(f"{page}: {what} opens {path}, not the page's own notebook {expected}")
        if not path.endswith(".ipynb"):
            problems.append(f"{page}: {what} opens {path}, not a notebook (Colab needs the .ipynb)")
        elif not (ROOT / path).is_file():
            problems.append(f"{page}: {what} opens {path}, which does not exist")
        elif held is not None and path not in held:
            problems.append(f"{page}: {what} opens {path}, which is not committed{f' at {ref}' if named.commit else ''}")

    executable = {page_html(md).relative_to(site).as_posix(): md for md in notebook_pages()}
    for page in find_pages(site):
        links = launch_links(site / page)
        if page not in executable:
            if links:
                problems.append(f"{page}: not a notebook page, yet has launch links {links}")
            continue
        expected_path = stored_path(executable[page]).relative_to(ROOT).as_posix()
        for key in LAUNCH_HOSTS:
            if len(links.get(key, [])) != 1:
                problems.append(f"{page}: expected one {key} link, found {links.get(key, [])}")
        for link in links.get("binderhub_url", []):
            parts, query = urlsplit(link), parse_qs(urlsplit(link).query)
            if parts.path != f"/v2/gh/{owner}/{name}/{ref}":
                problems.append(f"{page}: Binder link is not for {owner}/{name} at {ref}: {link}")
            urlpath = query.get("urlpath", [""])[0]
            if not urlpath.startswith("lab/tree/"):
                problems.append(f"{page}: Binder link does not open JupyterLab: {link}")
            check_path(page, "Binder", urlpath.removeprefix("lab/tree/"), expected_path)
        for link in links.get("colab_url", []):
            prefix = f"/github/{owner}/{name}/blob/{ref}/"
            path = urlsplit(link).path
            if not path.startswith(prefix):
                problems.append(f"{page}: Colab link is not for {owner}/{name} at {ref}: {link}")
            check_path(page, "Colab", path.removeprefix(prefix), expected_path)
        for link in links.get("jupyterhub_url", []):
            query = parse_qs(urlsplit(link).query)
            if query.get("repo") != [url] or query.get("branch") != [branch]:
                problems.append(f"{page}: JupyterHub link is not for {url} at {branch}: {link}")
            # nbgitpuller clones into a folder named after the repository.
            urlpath = query.get("urlpath", [""])[0].removeprefix(f"lab/tree/{name}/")
            check_path(page, "JupyterHub", urlpath, expected_path)

    assert not problems, "\n".join(problems)
    nbval_runs = {path.relative_to(ROOT).as_posix() for path in nbval_notebooks()}
    assert opened == nbval_runs, (
        "the notebooks the launch links open are not the ones nbval executes:\n"
        f"  only linked: {sorted(opened - nbval_runs)}\n  only run by nbval: {sorted(nbval_runs - opened)}"
    )


# --------------------------------------------------------------------------
# A JupyterLab session, as Binder would start it
# --------------------------------------------------------------------------


@dataclass
class Lab:
    url: str
    token: str
    home: Path

    def get(self, path: str) -> dict:
        request = urllib.request.Request(
            f"{self.url}/{path}", headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.load(response)


def gitignored_names() -> list[str]:
    """The simple name patterns of .gitignore: what a clone does not have."""
    names = []
    for line in (ROOT / ".gitignore").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith(("#", "!")):
            names.append(line.strip("/"))
    return names


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
@needs("whole_book")  # (its home is a copy of the repository)
def lab(tmp_path_factory):
    """JupyterLab of this environment, in a home directory that is a copy of the repository.

    That is Binder's layout: the repository's .jupyter/ is the user's Jupyter config
    directory, and jupytext.toml sits at the top of the served folder.
    """
    home = tmp_path_factory.mktemp("binder") / "home"
    shutil.copytree(ROOT, home, symlinks=True, ignore=shutil.ignore_patterns(".git", *gitignored_names()))
    OUT.mkdir(parents=True, exist_ok=True)
    port, token = free_port(), secrets.token_hex(16)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "IPYTHON")) and k != "PYTHONPATH"}
    env["HOME"] = str(home)
    command = [
        sys.executable, "-m", "jupyterlab", "--no-browser",
        "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={home}",
        # Nothing leaves the machine: no update check, no news feed.
        "--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    if os.geteuid() == 0:
        command.append("--allow-root")
    log_path = OUT / "jupyterlab.log"
    with open(log_path, "w") as log:
        server = subprocess.Popen(
            command, cwd=home, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    session = Lab(f"http://127.0.0.1:{port}", token, home)
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S
        while True:
            if server.poll() is not None:
                pytest.fail(f"JupyterLab exited with {server.returncode}; see {log_path}")
            try:
                session.get("api/status")
                break
            except (urllib.error.URLError, ConnectionError):
                if time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not answer within {SERVER_START_TIMEOUT_S} s; see {log_path}")
                time.sleep(0.25)
        yield session
    finally:
        # The server and the kernels it started are in the session we created for it.
        try:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        except ProcessLookupError:
            pass


@pytest.mark.parametrize("md", sorted(ROOT.glob("book/*.md")), ids=lambda p: p.stem)
def test_md_page_is_served_as_a_notebook(lab, md):
    path = md.relative_to(ROOT).as_posix()
    model = lab.get(f"api/contents/{quote(path)}?type=notebook&content=1")
    assert (model["type"], model["format"]) == ("notebook", "json"), f"{path} is not served as a notebook"
    notebook = model["content"]
    kinds = [cell["cell_type"] for cell in notebook["cells"]]
    assert kinds, f"{path} came back with no cells"
    if is_notebook_page(md):
        assert notebook["metadata"].get("kernelspec", {}).get("name") == "python3", notebook["metadata"]
        assert kinds == [cell.cell_type for cell in read_page(md).cells]
    else:
        assert "code" not in kinds, f"{path} is a plain page but has code cells"


def test_md_pages_open_as_notebooks_by_default(lab):
    """A double click (or a link) opens a .md file with the default viewer for its type."""
    settings = lab.get("lab/api/settings/@jupyterlab/docmanager-extension:plugin")
    viewers = settings["schema"]["properties"]["defaultViewers"].get("default", {})
    assert viewers.get("markdown") == "Jupytext Notebook", (
        f"default viewers are {viewers}: is .jupyter/labconfig/default_setting_overrides.json there?"
    )


@pytest.fixture(scope="module")
@needs("browser")
def browser(lab):
    """Debian's Chromium with a fresh profile, logged in to the JupyterLab server."""
    with open_context(viewport=VIEWPORT) as context:
        external: list[str] = []
        # Like Binder's reader, only the server is needed; anything else is stopped here.
        keep_on_host(context, lab.url, also="data:|blob:", on_blocked=external.append)
        page = context.pages[0]
        page.external_requests = external
        yield page


def open_in_jupyterlab(page, lab: Lab, path: str):
    """Open path the way a launch link does (lab/tree/<path>) and return its notebook panel."""
    # ?reset: start from an empty workspace, whatever the previous test left open.
    page.goto(f"{lab.url}/lab/tree/{quote(path)}?reset&token={lab.token}")
    tab = page.locator(".lm-TabBar-tab.jp-mod-current", has_text=path.rsplit("/", 1)[-1])
    tab.wait_for(timeout=NOTEBOOK_OPEN_TIMEOUT_MS)
    panel = page.locator(".jp-NotebookPanel:visible")
    # A notebook, or the text editor if .md files do not open as notebooks.
    page.locator(".jp-NotebookPanel:visible .jp-Cell, .jp-FileEditor:visible").first.wait_for(
        timeout=NOTEBOOK_OPEN_TIMEOUT_MS
    )
    assert page.locator(".jp-FileEditor:visible").count() == 0, f"{path} opened in the text editor, not as a notebook"
    news = page.locator(".Toastify__toast", has_text="Jupyter news")
    if news.count():
        news.get_by_role("button", name="No", exact=True).click()
    return panel


def test_jupyterlab_runs_the_agentic_loop_page(lab, browser):
    page = browser
    panel = open_in_jupyterlab(page, lab, RUN_PAGE)
    # Run All only once the kernel is up: before that, the menu command can be lost.
    page.get_by_text(re.compile(r"\(ipykernel\) \| Idle")).wait_for(timeout=NOTEBOOK_OPEN_TIMEOUT_MS)
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile("^Run$")).click()
    page.locator(".lm-Menu-item:not(.lm-mod-disabled) .lm-Menu-itemLabel", has_text=re.compile("^Run All Cells$")).click()
    trace = panel.locator(".jp-OutputArea-output", has_text=RUN_EXPECTS).first
    trace.wait_for(timeout=RUN_ALL_TIMEOUT_MS)
    wait_until(page,
        """() => {
            const prompts = [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell .jp-InputPrompt')];
            return prompts.length > 0 && prompts.every((p) => /\\[\\d+\\]/.test(p.textContent));
        }""",
        timeout=RUN_ALL_TIMEOUT_MS,
    )
    errors = panel.locator('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')
    assert errors.count() == 0, f"{RUN_PAGE} printed errors in JupyterLab:\n" + "\n".join(errors.all_inner_texts())
    trace.scroll_into_view_if_needed()
    expect(trace).to_be_in_viewport()
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
    page.screenshot(path=OUT / "jupyterlab-15_03.png")


def test_jupyterlab_draws_the_mermaid_diagram(lab, browser):
    page = browser
    panel = open_in_jupyterlab(page, lab, MERMAID_PAGE)
    fences = (ROOT / MERMAID_PAGE).read_text().count("```mermaid")
    assert fences, f"{MERMAID_PAGE} has no mermaid fence to draw"
    drawn = panel.locator('.jp-RenderedMermaid img[src^="data:image/svg+xml"]')
    drawn.nth(fences - 1).wait_for(timeout=MERMAID_TIMEOUT_MS)
    assert drawn.count() == fences
    assert panel.locator(".jp-RenderedMermaid.jp-mod-warning").count() == 0, "mermaid reported a syntax error"
    drawn.first.scroll_into_view_if_needed()
    expect(drawn.first).to_be_in_viewport()
    # The notebook paints scrolled-to cells on a later frame; wait two frames for the shot.
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
    page.screenshot(path=OUT / "jupyterlab-15_02-mermaid.png")


NOTE_PAGE = "book/15_09_permissions_and_hostile_evidence.ipynb"
EXERCISES_PAGE = "book/15_11_exercises.ipynb"
RAW_MYST_TEXT = re.compile(r"\{cite|\{numref|\{admonition|\{dropdown|\{#fig|:class:")


def wait_until_idle_and_painted(page) -> None:
    page.get_by_text(re.compile(r"\(ipykernel\) \| Idle")).wait_for(timeout=NOTEBOOK_OPEN_TIMEOUT_MS)
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")


def assert_reads_like_the_book(page, panel, path: str) -> None:
    """No MyST shown as text, and opening the notebook left it unmodified (no unsaved mark)."""
    rendered = "\n".join(panel.locator(".jp-MarkdownCell .jp-RenderedMarkdown").all_inner_texts())
    assert rendered, f"{path}: no rendered markdown"
    assert not RAW_MYST_TEXT.search(rendered), f"{path} shows MyST as text: {RAW_MYST_TEXT.findall(rendered)}"
    dirty = page.locator(".lm-TabBar-tab.jp-mod-current.jp-mod-dirty")
    assert dirty.count() == 0, f"{path} opened marked unsaved (its stored metadata differs from the kernel's)"


def test_jupyterlab_shows_the_readers_notebook_with_notes_and_citations(lab, browser):
    """The launched .ipynb of 15.9: the notes set off with their titles, the citation resolved."""
    page = browser
    panel = open_in_jupyterlab(page, lab, NOTE_PAGE)
    wait_until_idle_and_painted(page)
    titles = panel.locator(".jp-RenderedMarkdown blockquote > p:first-child > strong")
    # A note and a tip, told apart by their kind's word (the HTML, by colour and icon).
    expect(titles.filter(has_text="Tip: In the interview")).to_have_count(1)
    expect(titles.filter(has_text="Note: Landscape 2026")).to_have_count(1)
    citation = panel.locator('.jp-RenderedMarkdown a[href="#ref-zou2025poisonedrag"]', has_text="Zou et al. 2025")
    expect(citation).to_have_count(1)
    expect(panel.locator(".jp-RenderedMarkdown h2", has_text="References")).to_have_count(1)
    expect(panel.locator(".jp-RenderedMarkdown em", has_text=re.compile(r"^Figure 15\.5: Where must"))).to_have_count(1)
    assert_reads_like_the_book(page, panel, NOTE_PAGE)
    citation.scroll_into_view_if_needed()
    citation.click()  # the citation leads to the work it cites: its own entry
    expect(panel.locator(".jp-RenderedMarkdown li", has_text="PoisonedRAG")).to_be_in_viewport()
    citation.scroll_into_view_if_needed()
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
    page.screenshot(path=OUT / "jupyterlab-15_09-citation.png")
    note = titles.filter(has_text="In the interview")
    note.scroll_into_view_if_needed()
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
    page.screenshot(path=OUT / "jupyterlab-15_09-notes.png")


def test_jupyterlab_shows_the_worked_solutions_folded(lab, browser):
    """The launched .ipynb of 15.11: every worked solution in a collapsed section, and still
    out of sight after Run All (JupyterLab unfolds a run cell's outputs, not a section)."""
    page = browser
    panel = open_in_jupyterlab(page, lab, EXERCISES_PAGE)
    wait_until_idle_and_painted(page)
    stored = json.loads((ROOT / EXERCISES_PAGE).read_text())
    collapsed = [c for c in stored["cells"] if c["metadata"].get("jp-MarkdownHeadingCollapsed")]
    numbers = book_shape.exercise_numbers()
    assert ["".join(c["source"]) for c in collapsed] == [f"### Worked solution {n}" for n in numbers]
    headings = panel.locator(".jp-MarkdownCell h3", has_text=re.compile(r"^Worked solution \d+"))
    expect(headings).to_have_count(len(numbers))
    hints = panel.locator(".jp-RenderedMarkdown details > summary", has_text=re.compile(r"^Hint 1 of \d+ for exercise \d+$"))
    expect(hints).to_have_count(len(numbers))
    assert_reads_like_the_book(page, panel, EXERCISES_PAGE)
    # Run All, as a reader who runs everything to get set up.
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile("^Run$")).click()
    page.locator(".lm-Menu-item:not(.lm-mod-disabled) .lm-Menu-itemLabel", has_text=re.compile("^Run All Cells$")).click()
    # Cells inside a collapsed section run too, but are not drawn: their prompts stay blank.
    # So: every drawn prompt numbered, the last one (the last exercise's start) included, and
    # the kernel idle again. Drawn: our install cell and each exercise's start cell.
    wait_until(page,
        """(starts) => {
            const prompts = [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell .jp-InputPrompt')]
                .filter((p) => p.offsetParent !== null);
            return prompts.length > starts && prompts.every((p) => /\\[\\d+\\]/.test(p.textContent));
        }""",
        arg=len(numbers),
        timeout=RUN_ALL_TIMEOUT_MS,
    )
    page.get_by_text(re.compile(r"\(ipykernel\) \| Idle")).wait_for(timeout=RUN_ALL_TIMEOUT_MS)
    # The sections are still collapsed, and scrolling the whole notebook shows the start
    # cells' printouts (they ran) but nothing a worked solution printed.
    collapsed_buttons = panel.locator(".jp-MarkdownCell:has(h3) .jp-collapseHeadingButton.jp-mod-collapsed")
    expect(collapsed_buttons).to_have_count(len(numbers))
    seen = page.evaluate("""async () => {
        const scroller = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer');
        const texts = new Set();
        for (let top = 0; top <= scroller.scrollHeight; top += scroller.clientHeight / 2) {
            scroller.scrollTop = top;
            await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
            for (const output of scroller.querySelectorAll('.jp-OutputArea-output')) {
                if (output.offsetParent !== null) texts.add(output.innerText);
            }
        }
        return [...texts].join('\\n');
    }""")
    assert "q5: \"Which system stores telemetry" in seen, "the start cells' output is not on screen"
    for printed in ("one-shot first answers at k=5", "PASS  exercise 3", "FAIL  exercise 6", "routed as"):
        assert printed not in seen, f"after Run All a worked solution's output is visible: {printed!r}"
    headings.first.scroll_into_view_if_needed()
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
    page.screenshot(path=OUT / "jupyterlab-15_11-after-run-all.png")


def test_the_session_needed_nothing_but_the_server(browser):
    assert browser.external_requests == [], f"JupyterLab requested: {browser.external_requests}"


# --------------------------------------------------------------------------
# Where chapter_lib is not installed (Colab, a bare Jupyter)
# --------------------------------------------------------------------------

FRESH_PAGE = "book/15_03_agentic_loop.ipynb"  # runs on chapter_lib alone (no figures)


@pytest.fixture(scope="module")
def new_venv(tmp_path_factory) -> Path:
    return made_venv(tmp_path_factory)


def test_a_readers_notebook_runs_in_a_fresh_environment(new_venv, tmp_path):
    """The committed notebook's first cell installs chapter_lib from the book's site (here a
    local stand-in that serves the wheel the build made where the site serves it), and the
    page then prints what the stored notebook shows."""
    site = tmp_path / "site"
    served = site / served_wheel()
    served.parent.mkdir(parents=True)
    shutil.copyfile(require_built(WHEEL, "assets"), served)
    notebook = json.loads((ROOT / FRESH_PAGE).read_text())
    cells = code_of(notebook)
    assert f'"chapter-lib @ {site_url()}/{served_wheel()}"' in cells[0], cells[0]
    # file://localhost/: pip before 24 rejects a file URL without a host in `name @ url`.
    cells[0] = cells[0].replace(f"{site_url()}/", f"file://localhost{site}/")
    python = fresh_environment(new_venv, tmp_path)
    run = run_as_kernel(python, cells, tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    assert installed_from(python).get("url") == f"file://localhost{served}", "not installed from the site's wheel"
    assert run.stdout.split(MARKER + "\n") == stored_stdout(notebook)


def test_a_failed_install_stops_in_the_install_cell_saying_what_to_do(new_venv, tmp_path):
    """Without a reachable site or repository (test doubles: URLs with nothing behind them),
    the install cell raises in its own cell, in one sentence naming the edition's library and
    where it looked, then pip's words and what to do; the page's first cell never runs, so no
    ModuleNotFoundError appears one cell later."""
    notebook = json.loads((ROOT / FRESH_PAGE).read_text())
    cells = code_of(notebook)
    missing = tmp_path / "nothing-here"
    cells[0] = (cells[0].replace(f"{site_url()}/", f"file://localhost{missing}/")
                .replace(f"git+{repository_url()}@", f"git+file://localhost{missing}@"))
    run = run_as_kernel(fresh_environment(new_venv, tmp_path), cells[:2], tmp_path)
    assert run.returncode != 0 and MARKER not in run.stdout
    last = run.stderr.strip().splitlines()
    error = next(i for i, line in enumerate(last) if line.startswith("RuntimeError: "))
    wheres = " or ".join(where for where, _ in library_needed().sources)
    assert last[error] == (f"RuntimeError: Could not install chapter_lib {edition.version()}, this edition's library, "
                           f"which this notebook needs, from {wheres}."), last[error]
    message = "\n".join(last[error:])
    assert "pip said:" in message and "What to do:" in message
    assert "ModuleNotFoundError" not in run.stderr


FIGURE_PAGE = "book/15_04_quality_and_cost.ipynb"  # draws a figure: needs chapter_lib and matplotlib


def test_with_only_matplotlib_missing_the_install_cell_names_it_and_installs_only_it(new_venv, tmp_path, monkeypatch):
    """chapter_lib importable, matplotlib not, and no package index (pip fails): the install
    cell asks pip for matplotlib alone, and says so, with pip's error once and no colour codes."""
    (tmp_path / "chapter_lib").mkdir()  # importable from the notebook's folder, as if installed
    (tmp_path / "chapter_lib" / "__init__.py").write_text("")
    notebook = json.loads((ROOT / FIGURE_PAGE).read_text())
    install = "".join(next(cell for cell in notebook["cells"] if cell["cell_type"] == "code")["source"])
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # a test double for an unreachable index
    monkeypatch.setenv("FORCE_COLOR", "1")  # as a notebook front end may ask; the message has none
    run = run_as_kernel(fresh_environment(new_venv, tmp_path), [install], tmp_path)
    assert run.returncode != 0
    message = run.stderr[run.stderr.index("RuntimeError: "):]
    assert message.startswith("RuntimeError: Could not install matplotlib, which this notebook needs, from the package index."), message
    assert "chapter-lib" not in message and "git+" not in message, message
    assert "\x1b[" not in message, "pip's colour codes reached the message"
    said = message.split("pip said:\n", 1)[1].split("\nWhat to do:", 1)[0]
    assert said.strip() and len(said.splitlines()) == len(set(said.splitlines())), f"pip's error repeats:\n{said}"


# --------------------------------------------------------------------------
# Publishing
# --------------------------------------------------------------------------


def test_the_pages_workflow_runs_only_what_the_tests_run():
    """The published site is the one `make test` built and tested, and nothing else is run."""
    workflow = yaml.safe_load(WORKFLOW.read_text())
    runs = [step["run"].strip() for job in workflow["jobs"].values() for step in job["steps"] if "run" in step]
    assert runs == ["make test"], f"the workflow runs {runs}; it should run `make test` only"
    uploads = [
        step["with"]["path"] for job in workflow["jobs"].values() for step in job["steps"]
        if step.get("uses", "").startswith("actions/upload-pages-artifact")
    ]
    assert uploads == ["_build/html"], f"the workflow publishes {uploads}, not what `make html` builds"


# A figure JupyterLab would draw from the chapter's mermaid source left to right, too small to
# read (15.9's trust boundaries: 941 x 119 px, labels about 7 px high); the reader's notebook
# shows our drawing beside it (runnable_book/pipeline/myst_to_notebook.py), read here at 1400 px.
SMALLEST_DIAGRAM_LABEL_PX = 11  # as tests/test_diagram_legibility.py asks of the HTML
MERMAID_FONT_PX = 16  # the drawings' labels, in the drawing's own units (draw_diagrams.py)


def test_jupyterlab_shows_each_wide_diagram_readably_at_1400_px(lab, browser):
    from runnable_book.pipeline.draw_diagrams import book_diagrams, drawn_top_to_bottom

    turned = [d for d in book_diagrams() if drawn_top_to_bottom(d.code)]
    assert turned, "no diagram is drawn top to bottom: nothing to check"
    pages = sorted({d.where.split(",")[0] for d in turned})
    page = browser
    for md in pages:
        panel = open_in_jupyterlab(page, lab, md.replace(".md", ".ipynb"))
        drawing = panel.locator(".jp-MarkdownCell img[alt*='drawn top to bottom']").first
        drawing.scroll_into_view_if_needed(timeout=NOTEBOOK_OPEN_TIMEOUT_MS)
        wait_until(page, "(img) => img.complete && img.naturalWidth > 0", arg=drawing.element_handle())
        scale = drawing.evaluate("(img) => img.getBoundingClientRect().width / img.naturalWidth")
        page.screenshot(path=str(OUT / f"jupyterlab-{Path(md).stem}-diagram.png"))
        assert MERMAID_FONT_PX * scale >= SMALLEST_DIAGRAM_LABEL_PX, (
            f"{md}: the drawing's labels are {MERMAID_FONT_PX * scale:.1f} px high in JupyterLab at 1400 px")

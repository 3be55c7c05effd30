"""What a cell shows in "Run in your browser", drawn as JupyterLab draws it (headless Chromium).

* One cell prints ANSI colours and styles and a line a carriage return writes over, and shows
  HTML (with a script, an event handler, a javascript: link and a <style> planted in it), a
  Markdown table with math, an SVG (with a script in it), a PNG, LaTeX, JSON and a value with
  _repr_html_: each drawn by the type JupyterLab prefers (the runner's mime.mjs), nothing planted
  runs or stays, and axe finds no serious or critical violation among them in light or dark
  mode (the ANSI colours' contrast among them). Screenshots in light and dark mode and at
  390 px: _build/browser-run/outputs-*.png.
* "Show all" of a 20 MB output keeps the page responsive: no task over 200 ms while it draws
  (a PerformanceObserver of long tasks), and all of it is there.
* The 32-bit page's limits (a size of 2**31, its memory) are said in one sentence;
  clear_output(wait=True) leaves only the last display.
"""

from __future__ import annotations

import re

import pytest

from runnable_book.browser.chromium import JS_DARK_THEME
from runnable_book.browser.page_state import STATE_TIMEOUT_MS, wait_until, wait_until_still
from runnable_book.checks.axe_check import AXE, BLOCKING_IMPACTS, JS_RUN_AXE
from runnable_book.checks.run_check import pages_with_code
from runnable_book.repository import ROOT

pytestmark = pytest.mark.site

OUT = ROOT / "_build" / "browser-run"
PHONE = {"width": 390, "height": 844}
LONG_TASK_LIMIT_MS = 200
SHOW_ALL_TIMEOUT_MS = 120_000

# Every kind of output, in one cell (the last line's value is shown as its display bundle).
RICH_CELL = r'''
import base64
from IPython.display import HTML, JSON, SVG, Image, Latex, Markdown, display
for code in [*range(30, 38), *range(90, 98)]:
    print(f"\x1b[{code}m{code}\x1b[0m", f"\x1b[1;{code}mbold\x1b[0m", end=" ")
print()
print("\x1b[41m on red \x1b[0m \x1b[4munderlined\x1b[24m \x1b[7minverse\x1b[27m \x1b[38;5;208;48;5;16morange on black\x1b[0m")
print("progress 10%\rprogress 100%")
display(HTML("<p id='planted'><b>bold</b> <script>window.planted = 'script'</script>"
             "<img src='data:,' alt='' onerror=\"window.planted = 'onerror'\">"
             "<a href=\"javascript:window.planted = 'link'\">a link</a>"
             "<style>body { display: none }</style></p>"
             "<form action='https://example.org/collect'><input name='q' aria-label='Query'>"
             "<button formaction='//example.org/button'>Send</button>"
             "<input type='submit' value='Go' formaction='https://example.org/input'></form>"
             "<form action='#kept'><button>Here</button></form>"))
display(Markdown("### A table\n\n| n | n² |\n|---|----|\n| 2 | $2^2 = 4$ |\n\n$$\\sum_{k=1}^{n} k = \\frac{n(n+1)}{2}$$"))
display(SVG('<svg width="120" height="40"><rect width="120" height="40" fill="teal"/>'
            '<script>window.planted = "svg"</script></svg>'))
display(Image(data=base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DA"
                                    "wMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg=="), width=40, alt="Two red pixels"))
display(Latex(r"Euler: $e^{i\pi} + 1 = 0$"))
display(JSON({"answer": [4, 2]}))
class Answer:
    def _repr_html_(self):
        return "<table><thead><tr><th>answer</th></tr></thead><tbody><tr><td>42</td></tr></tbody></table>"
    def __repr__(self):
        return "Answer()"
Answer()
'''
DRAWN_AS = ["text/html", "text/markdown", "image/svg+xml", "image/png", "text/latex", "application/json", "text/html"]
PLAIN = ["<IPython.core.display.HTML object>", "<IPython.core.display.Markdown object>",
         "<IPython.core.display.SVG object>", "<IPython.core.display.Image object>",
         "<IPython.core.display.Latex object>", "<IPython.core.display.JSON object>", "Answer()"]

# What the first cell's output area holds, as the tests read it.
JS_OUTPUT = """() => {
    const area = document.querySelectorAll('div.cell')[0].querySelector('.browser-run-output');
    const elements = [...area.querySelectorAll('*')];
    return {
        mimes: [...area.querySelectorAll('.browser-run-display')].map((d) => d.dataset.mime),
        spans: [...area.querySelectorAll('[data-kind=stdout] span')].map((s) => [s.textContent, s.className, s.getAttribute('style')]),
        stdout: area.querySelector('[data-kind=stdout]').textContent,
        planted: window.planted ?? null,
        scripts: area.querySelectorAll('script, style, iframe').length,
        handlers: elements.flatMap((e) => [...e.attributes].filter((a) => a.name.startsWith('on')).map((a) => a.name)),
        forms: [...area.querySelectorAll('form, button, input')].map((e) => [e.tagName, e.getAttribute('action'), e.getAttribute('formaction')]),
        links: [...area.querySelectorAll('a')].map((a) => [a.getAttribute('href'), a.target]),
        images: [...area.querySelectorAll('.browser-run-display img')].map((i) => [i.src.slice(0, 22), i.alt, i.complete && i.naturalWidth > 0, i.width]),
        maths: area.querySelectorAll('math').length,
        tables: area.querySelectorAll('table').length,
        pageShown: getComputedStyle(document.body).display !== 'none',
    };
}"""


@pytest.fixture
def page_started(runner, site):
    """The first page with code, opened with no kept work, clicked, Python ready."""
    runner.open_afresh(pages_with_code(site)[0])
    runner.start()
    return runner


def shoot(locator, name: str) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    locator.screenshot(path=OUT / f"outputs-{name}.png")


def axe_problems(page) -> list[str]:
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    return [f"{v['impact']} {v['id']}: {v['help']} {v['targets'][:3]}"
            for v in page.evaluate(JS_RUN_AXE) if v["impact"] in BLOCKING_IMPACTS]


def test_every_kind_of_output_is_drawn_as_jupyterlab_draws_it(page_started):
    runner, page = page_started, page_started.page
    cell = runner.type_and_run(1, RICH_CELL)
    assert cell["state"] == "done", cell["outputs"]
    # What nbval compares is as the notebook stores it: the stream as written, each value's text/plain.
    kinds = [kind for kind, _ in cell["outputs"]]
    assert kinds == ["stdout", *["text/plain"] * len(PLAIN)], cell["outputs"]
    assert [text for _, text in cell["outputs"][1:]] == PLAIN
    assert "\x1b[31m31\x1b[0m" in cell["outputs"][0][1]
    page.wait_for_timeout(300)  # (an image's error handler, had it stayed, would have run by now)
    drawn = page.evaluate(JS_OUTPUT)

    assert drawn["mimes"] == DRAWN_AS
    spans = {text: (classes, style) for text, classes, style in drawn["spans"]}
    assert spans["31"] == ("ansi-red-fg", None) and spans["97"] == ("ansi-white-intense-fg", None)
    assert ["bold", "ansi-red-intense-fg ansi-bold", None] in drawn["spans"]  # bold makes red intense
    assert spans[" on red "] == ("ansi-red-bg", None) and spans["underlined"] == ("ansi-underline", None)
    assert spans["inverse"] == ("ansi-default-inverse-fg ansi-default-inverse-bg", None)
    assert spans["orange on black"] == ("", "color: rgb(255, 135, 0); background-color: rgb(0, 0, 0)")
    assert "\x1b" not in drawn["stdout"] and "progress 100%" in drawn["stdout"] and "10%" not in drawn["stdout"]

    assert drawn["planted"] is None and drawn["scripts"] == 0 and drawn["handlers"] == [], drawn
    assert drawn["pageShown"]
    assert drawn["links"] == [[None, ""]], drawn["links"]  # the javascript: URL is gone
    # A form's action and a button's formaction leave the book only if on its own origin.
    assert drawn["forms"] == [["FORM", None, None], ["INPUT", None, None], ["BUTTON", None, None],
                              ["INPUT", None, None], ["FORM", "#kept", None], ["BUTTON", None, None]], drawn["forms"]
    svg, png = drawn["images"][1:3]
    assert svg[0].startswith("data:image/svg+xml") and svg[2], svg  # an <img>: its script cannot run
    assert png == ["data:image/png;base64,", "Two red pixels", True, 40]
    assert drawn["maths"] == 3 and drawn["tables"] == 2, drawn

    output = page.locator("div.cell").nth(0).locator(".browser-run-output")
    output.evaluate("(e) => e.scrollIntoView({block: 'start'})")
    problems = []
    for mode in ("light", "dark"):
        if mode == "dark":
            page.emulate_media(color_scheme="dark")
            page.evaluate(JS_DARK_THEME)
        wait_until_still(page)
        problems += [f"{mode}: {problem}" for problem in axe_problems(page)]
        shoot(output, mode)
    page.set_viewport_size(PHONE)
    wait_until_still(page)
    shoot(output, "phone-dark")
    page.emulate_media(color_scheme="light")
    page.evaluate("() => { document.documentElement.dataset.mode = 'light'; document.documentElement.dataset.theme = 'light'; }")
    page.set_viewport_size({"width": 1280, "height": 900})
    assert problems == [], "\n".join(problems)


def test_show_all_of_20_mb_keeps_the_page_responsive(page_started):
    runner, page = page_started, page_started.page
    line = "x" * 90
    cell = runner.type_and_run(1, f'for i in range(200_000):\n    print(f"line {{i:6d}} {line}")')
    text = cell["outputs"][0][1]
    assert len(text) > 20_000_000
    page.evaluate("""() => {
        window.longTasks = [];
        new PerformanceObserver((list) => window.longTasks.push(...list.getEntries().map((e) => Math.round(e.duration))))
            .observe({type: 'longtask'});
    }""")
    page.get_by_role("button", name="Show all of the output of cell 1").click()
    all_drawn = """() => {
        const part = window.browserRun.cells[0].output.parts[0];
        return !!part.all && part.all.frame == null && part.all.offset === part.text.length;
    }"""
    wait_until(page, all_drawn, timeout=SHOW_ALL_TIMEOUT_MS)
    box = page.get_by_role("region", name="All of the output of cell 1")
    assert box.evaluate("(e) => e === document.activeElement"), "the focus left with the Show all it was on"
    box.evaluate("(e) => { e.scrollTop = e.scrollHeight; }")  # to its end, as a reader scrolls
    page.wait_for_timeout(500)
    long_tasks = page.evaluate("() => window.longTasks")
    shown = box.evaluate("(e) => [e.textContent.length, e.lastElementChild.textContent.trimEnd().split('\\n').pop()]")
    assert shown == [len(text), f"line 199999 {line}"]
    assert max(long_tasks, default=0) < LONG_TASK_LIMIT_MS, f"tasks over {LONG_TASK_LIMIT_MS} ms: {long_tasks}"


def plain(text: str) -> str:
    """A traceback without its ANSI colours (IPython's form, page_python.py)."""
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def test_the_pages_limits_are_said_in_one_sentence_and_clear_output_waits(page_started):
    runner = page_started
    too_big = runner.type_and_run(1, "bytearray(3 * 10**9)")["outputs"]
    said = plain(too_big[-1][1]).strip().splitlines()[-1]
    assert said.startswith("OverflowError: cannot fit 'int' into an index-sized integer: this page's Python is 32-bit")
    assert said.endswith("run it in JupyterLab, Binder or Colab for that.") and said.count(". ") == 0, said
    out_of_memory = runner.type_and_run(1, "data = bytearray(2**31 - 1)")["outputs"]
    said = plain(out_of_memory[-1][1]).strip().splitlines()[-1]
    assert said.startswith("MemoryError: this page's Python ran out of memory"), said
    assert said.endswith("for that.") and said.count(". ") == 0, said
    shown = runner.type_and_run(1, "from IPython.display import clear_output\n"
                                   "for i in range(3):\n    clear_output(wait=True)\n    display(i)")
    assert shown["outputs"] == [["text/plain", "2"]]


def test_a_cells_first_line_shows_while_it_runs_when_it_starts_right_after_another(page_started):
    """Run all starts a cell the moment the one before is done: what it prints before a long loop
    shows while the loop runs (it was held for a timer the loop never let fire)."""
    page = page_started.page
    for number, source in [(1, 'print("first")'), (2, 'from js import Date\nprint("started")\n'
                                                       'end = Date.now() + 600_000\nwhile Date.now() < end:\n    pass')]:
        page.locator("div.cell").nth(number - 1).locator(".cm-content").click()
        page.keyboard.press("Control+a")
        page.keyboard.insert_text(source)
    page.evaluate("() => document.querySelectorAll('div.cell button.browser-run-run').forEach((b, i) => i < 2 && b.click())")
    seen_while = """() => {
        const cell = window.browserRun.cells[1];
        const shown = cell.output.list().some(([name, text]) => name === 'stdout' && text.includes('started'));
        return shown && cell.element.dataset.runState;
    }"""
    wait_until(page, seen_while, timeout=STATE_TIMEOUT_MS)
    assert page.evaluate(seen_while) == "running"
    page.get_by_role("button", name="Stop", exact=True).click()

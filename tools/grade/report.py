"""The grades, written (ours): _build/grades/grades.csv, index.html and results.json.

* ``grades.csv``: ``submission,exercise,verdict,detail``, one row per submission and checked
  exercise (a file that cannot be read: one ``error`` row, no exercise, naming why).
* ``index.html``: one row per submission, one column per checked exercise; each verdict opens
  what the check printed for that student, and their cells for that exercise; the open
  exercises are shown as the student's own cells, for the instructor to read. While the
  grader runs, the page shows a progress bar and reloads itself every few seconds.
* ``results.json``: everything above as data, so one submission can be graded again
  (``make grade ... ONLY=name.ipynb``) and the rest kept.

Everything a student wrote is shown as text (escaped); a saved PNG only as an image. The
page runs one inline script of ours (its hash is the only one the page's Content Security
Policy allows) and loads nothing.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import html
import io
import json
import re
import time
from pathlib import Path

from tools.grade.book import Book
from tools.grade.grade import Graded, summary_counts

KIND_WORDS = {"edited": "a cell of the book, edited", "added": "a cell of their own", "book": "the book's cell",
              "install": "the install cell (not run: the grader has chapter_lib)"}


def _safe_csv(text: str) -> str:
    """A spreadsheet does not read a field as a formula (=, +, -, @ first)."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def rows(results: list[Graded], book: Book) -> list[list[str]]:
    out = []
    for graded in sorted(results, key=lambda g: g.name):
        if graded.problem:
            out.append([graded.name, "", "error", f"cannot be read: {graded.problem}"])
            continue
        for exercise in book.checked:
            verdict = graded.verdicts.get(exercise.number)
            if verdict is None:
                out.append([graded.name, str(exercise.number), "error", "not graded"])
            else:
                out.append([graded.name, str(exercise.number), verdict.verdict, " ".join(verdict.detail.split())])
    return out


def write_csv(path: Path, results: list[Graded], book: Book):
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["submission", "exercise", "verdict", "detail"])
    for row in rows(results, book):
        writer.writerow([_safe_csv(field) for field in row])
    _write(path, buffer.getvalue())


def _write(path: Path, text: str):
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(path)


def write_json(path: Path, results: list[Graded], meta: dict):
    _write(path, json.dumps({"meta": meta, "submissions": [g.to_json() for g in sorted(results, key=lambda g: g.name)]},
                            indent=1))


def read_json(path: Path) -> tuple[dict, list[Graded]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return data.get("meta", {}), [Graded.from_json(g) for g in data.get("submissions", [])]


def summary_line(results: list[Graded], book: Book, seconds: float, jobs: int) -> str:
    counts = summary_counts(results, book)
    parts = []
    for number, by_verdict in counts.items():
        shown = ", ".join(f"{n} {v}" for v, n in by_verdict.items() if n)
        parts.append(f"ex {number}: {shown or 'none'}")
    unreadable = sum(1 for g in results if g.problem)
    graded = len(results) - unreadable
    each = sum(g.seconds for g in results if not g.problem) / graded if graded else 0
    return (f"{len(results)} submissions graded in {_duration(seconds)} on {jobs} "
            f"{'core' if jobs == 1 else 'cores'} ({each:.1f} s of sandbox each)"
            + (f", {unreadable} unreadable" if unreadable else "") + " — " + "; ".join(parts))


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{int(seconds // 60)} min {int(seconds % 60):02d} s"


# ---------------------------------------------------------------------------
# index.html
# ---------------------------------------------------------------------------

STYLE = """
:root { color-scheme: light; --pass: #0a6b2c; --fail: #a3121e; --na: #5b5f66; --timeout: #8a4b00; --error: #6b1a8a; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0; color: #1d1f23; background: #fff; }
header, main { padding: 0 16px; max-width: 1100px; margin: 0 auto; }
h1 { font-size: 1.35rem; margin: 18px 0 6px; }
h2 { font-size: 1.1rem; margin: 28px 0 8px; overflow-wrap: anywhere; }
p.summary { font-weight: 600; margin: 6px 0; }
p.meta { color: #4a4e55; font-size: .87rem; margin: 4px 0; overflow-wrap: anywhere; }
.count { font-weight: 400; color: #4a4e55; }
p.warning { background: #fff3cd; border: 1px solid #c9a227; padding: 6px 10px; border-radius: 4px; }
progress { width: 100%; height: 14px; }
.scroll { overflow-x: auto; border: 1px solid #d6d8dc; border-radius: 6px; margin: 12px 0; }
table { border-collapse: collapse; width: 100%; font-size: .92rem; }
th, td { border-bottom: 1px solid #e3e5e8; padding: 6px 8px; text-align: left; vertical-align: top; }
th { background: #f4f5f7; font-weight: 600; white-space: nowrap; }
th:first-child, td:first-child { position: sticky; left: 0; z-index: 1; background: #fff; min-width: 8em; box-shadow: 1px 0 0 #e3e5e8; }
th:first-child { background: #f4f5f7; }
td.open a { margin-right: .4em; }
.v { display: inline-block; white-space: nowrap; min-width: 3.2em; padding: 1px 7px; border-radius: 10px; color: #fff; text-decoration: none; font-weight: 600; font-size: .84rem; line-height: 1.5; }
.v:focus-visible, summary:focus-visible, a:focus-visible { outline: 3px solid #1a5fb4; outline-offset: 2px; }
.v-pass { background: var(--pass); } .v-fail { background: var(--fail); } .v-not-attempted { background: var(--na); }
.v-timeout { background: var(--timeout); } .v-error { background: var(--error); }
td.time { white-space: nowrap; color: #4a4e55; }
details.how { border: 0; padding: 0; margin: 4px 0; }
details.how summary { font-weight: 400; color: #1a5fb4; padding: 2px 0; }
details { border: 1px solid #d6d8dc; border-radius: 6px; margin: 8px 0; padding: 0 10px; }
details[open] { padding-bottom: 8px; }
details:target { box-shadow: 0 0 0 3px #1a5fb4; }
summary { cursor: pointer; padding: 8px 0; font-weight: 600; overflow-wrap: anywhere; }
summary .detail { font-weight: 400; color: #3a3d42; }
pre { background: #f6f7f9; border: 1px solid #e3e5e8; border-radius: 4px; padding: 8px; overflow-x: auto; font-size: .84rem; line-height: 1.35; white-space: pre-wrap; overflow-wrap: anywhere; margin: 6px 0; }
pre.check { background: #fbfbf5; }
.cell-title { font-size: .84rem; color: #4a4e55; margin: 10px 0 2px; }
.graded-error { color: var(--fail); }
img.saved { max-width: 100%; height: auto; border: 1px solid #e3e5e8; }
@media (max-width: 600px) {
  header, main { padding: 0 8px; }
  h1 { font-size: 1.2rem; }
  p.summary { font-size: .9rem; font-weight: 500; }
  /* One block per submission: its name, then each exercise's verdict with its label. */
  table, tbody, tr, td, th[scope="row"], caption { display: block; }
  thead { display: none; }
  tr { border-bottom: 1px solid #e3e5e8; padding: 6px 8px; }
  th[scope="row"], td { border: 0; padding: 2px 10px 2px 0; position: static; box-shadow: none; min-width: 0;
    white-space: normal; }
  td { display: inline-block; }
  td[data-label]::before { content: attr(data-label) " "; color: #4a4e55; font-size: .82rem; }
  details { padding: 0 6px; }
}
footer { color: #4a4e55; font-size: .85rem; padding: 24px 16px; max-width: 1100px; margin: 0 auto; }
"""

SCRIPT = ("function openTarget(){var id=decodeURIComponent(location.hash.slice(1));var d=id&&document.getElementById(id);"
          "if(d&&d.tagName==='DETAILS'){d.open=true;}}window.addEventListener('hashchange',openTarget);openTarget();")


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _name(text) -> str:
    """A file name that may wrap after - _ . / on a narrow screen."""
    return re.sub(r"([-_./])", r"\1<wbr>", _e(text))


def _verdict_link(anchor: str, verdict, detail: str) -> str:
    css = "v-" + verdict.replace(" ", "-")
    return f'<a class="v {css}" href="#{anchor}" title="{_e(detail)}">{_e(verdict)}</a>'


def _cells_html(cells: list[dict]) -> str:
    if not cells:
        return "<p>No cells of their own here.</p>"
    parts = []
    for cell in cells:
        parts.append(f'<p class="cell-title">cell {cell["position"]}: {_e(KIND_WORDS.get(cell["kind"], cell["kind"]))}</p>')
        if cell["source"]:
            parts.append(f"<pre>{_e(cell['source'])}</pre>")
        saved = cell.get("saved") or []
        if saved:
            parts.append('<p class="cell-title">as the student saved it:</p>')
            for kind, content in saved:
                if kind == "png":
                    try:
                        base64.b64decode(content, validate=True)
                    except ValueError:
                        continue
                    parts.append(f'<img class="saved" alt="a figure the cell drew" src="data:image/png;base64,{content}">')
                else:
                    parts.append(f"<pre>{_e(content)}</pre>")
        graded = cell.get("graded")
        if graded and not graded.get("ok"):
            parts.append(f'<p class="cell-title graded-error">when graded: {_e(graded.get("error") or "it failed")}</p>')
        elif graded and graded.get("output"):
            parts.append('<p class="cell-title">when graded, it printed:</p>')
            parts.append(f"<pre>{_e(graded['output'])}</pre>")
    return "".join(parts)


def _students_cells(graded: Graded, number: int | None) -> list[dict]:
    """The cells the report shows for an exercise: the student's own, and the book's that failed when graded."""
    return [c for c in graded.cells if c.get("exercise") == number]


def page(results: list[Graded], book: Book, meta: dict, done: int, total: int, finished: bool) -> str:
    ordered = sorted(results, key=lambda g: g.name)
    ids = {g.name: f"s{i + 1}" for i, g in enumerate(ordered)}
    head = ["<th scope=\"col\">Submission</th>"]
    head += [f'<th scope="col">Ex {e.number}</th>' for e in book.checked]
    head += ['<th scope="col">Open exercises <span class="count">(their cells)</span></th>', '<th scope="col">Time</th>']
    body = []
    for graded in ordered:
        sid = ids[graded.name]
        cells = [f'<th scope="row"><a href="#{sid}">{_name(graded.name)}</a></th>']
        if graded.problem:
            cells.append(f'<td colspan="{len(book.checked) + 1}">{_verdict_link(sid, "error", graded.problem)} '
                         f'cannot be read: {_e(graded.problem)}</td>')
        else:
            for exercise in book.checked:
                verdict = graded.verdicts.get(exercise.number)
                cells.append(f'<td data-label="Ex {exercise.number}">'
                             + (_verdict_link(f"{sid}-{exercise.number}", verdict.verdict, verdict.detail)
                                if verdict else "") + "</td>")
            links = []
            for number in book.open:
                mine = [c for c in _students_cells(graded, number) if c.get("kind") in ("edited", "added")]
                links.append(f'<a href="#{sid}-{number}" title="{len(mine)} cell(s) of their own">{number}'
                             f'<span class="count"> ({len(mine)})</span></a>')
            cells.append(f'<td class="open" data-label="Open:">{"".join(links)}</td>')
        cells.append(f'<td class="time" data-label="Time:">{graded.seconds:.1f} s</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    sections = []
    for graded in ordered:
        sid = ids[graded.name]
        parts = [f'<section id="{sid}" aria-labelledby="{sid}-title"><h2 id="{sid}-title">{_e(graded.name)}</h2>']
        if graded.problem:
            parts.append(f"<p>This file cannot be graded: {_e(graded.problem)}</p>")
        for number in book.exercises:
            exercise = book.numbers.get(number)
            mine = _students_cells(graded, number)
            if exercise is not None and not graded.problem:
                verdict = graded.verdicts.get(number)
                if verdict is None:
                    continue
                lines = "\n".join(verdict.lines) if verdict.lines else ""
                parts.append(
                    f'<details id="{sid}-{number}"><summary>Exercise {number}: '
                    f'<span class="v v-{verdict.verdict.replace(" ", "-")}">{_e(verdict.verdict)}</span> '
                    f'<span class="detail">{_e(verdict.detail)}</span></summary>'
                    + (f'<p class="cell-title">the grader called <code>{_e(exercise.call)}</code>; its check printed:</p>'
                       f'<pre class="check">{_e(lines)}</pre>' if lines else
                       f'<p class="cell-title">the grader called <code>{_e(exercise.call)}</code>; the check did not '
                       'finish (the line above says why)</p>')
                    + f"<p class=\"cell-title\">their cells for exercise {number}:</p>{_cells_html(mine)}</details>")
            elif exercise is None and not graded.problem:
                parts.append(f'<details id="{sid}-{number}"><summary>Exercise {number} (open, not checked): '
                             f'{len(mine)} cell(s) of their own</summary>{_cells_html(mine)}</details>')
        elsewhere = _students_cells(graded, None)
        if elsewhere:
            parts.append(f'<details id="{sid}-other"><summary>Cells before the first exercise: {len(elsewhere)}'
                         f'</summary>{_cells_html(elsewhere)}</details>')
        parts.append("</section>")
        sections.append("".join(parts))
    progress = "" if finished else (
        f'<p class="meta" id="progress-label">Grading: {done} of {total} submissions done</p>'
        f'<progress aria-labelledby="progress-label" max="{total}" value="{done}">{done}/{total}</progress>')
    warning = "" if meta.get("isolation_complete", True) else (
        f'<p class="warning">{_e(meta.get("isolation", ""))}</p>')
    script_hash = base64.b64encode(hashlib.sha256(SCRIPT.encode()).digest()).decode()
    csp = (f"default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'sha256-{script_hash}'; "
           "base-uri 'none'; form-action 'none'")
    refresh = "" if finished else '<meta http-equiv="refresh" content="3">'
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="{csp}">
{refresh}<title>Grades: {_e(book.page.stem)}</title><style>{STYLE}</style></head>
<body><header><h1>Grades: {_e(meta.get("title", book.page.stem))}</h1>
{progress}<p class="summary">{_e(meta.get("summary", ""))}</p>
<p class="meta">From <code>{_e(meta.get("submissions", ""))}</code>, {_e(meta.get("when", ""))}.
Grades as CSV: <a href="grades.csv">grades.csv</a>.</p>{warning}
<details class="how"><summary>How these were graded</summary><p class="meta">Each verdict is the book's own
check, the grader's copy, called on the functions the exercise's start cell names; the student's code ran in a
sandbox ({_e(meta.get("isolation", ""))}) and the check ran outside it, on the answers their functions
gave. Limits: {_e(meta.get("limits", ""))}.</p></details></header>
<main><div class="scroll"><table><caption class="meta" style="text-align:left;padding:6px 8px">One row per submission:
each verdict opens what the check printed for that student.</caption><thead><tr>{"".join(head)}</tr></thead>
<tbody>{"".join(body)}</tbody></table></div>
{"".join(sections)}</main>
<footer>Verdicts: pass, fail (the check printed FAIL), not attempted (the start cell's stub, or the function is
missing), timeout (a limit was reached), error (the sandbox ran out of memory or stopped, or the file cannot be
read). Written by <code>make grade</code> (tools/grade) at {_e(time.strftime("%Y-%m-%d %H:%M"))}.</footer>
<script>{SCRIPT}</script></body></html>
"""


def write_html(path: Path, results: list[Graded], book: Book, meta: dict, done: int, total: int, finished: bool):
    _write(path, page(results, book, meta, done, total, finished))

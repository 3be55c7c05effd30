"""Feedback a student can be given (ours): their verdicts, points, what the check said, and their cells.

Two files per student, in ``_build/grades/feedback/`` (named by runnable_book/grade/intake.py's
``Student.slug``), each holding that student's work and grades and nothing of anyone else's:

* ``<student>.html``: one page, no script, nothing loaded (it opens from a file or an LMS);
* ``<student>.ipynb``: the notebook they handed in, with a feedback cell under each
  exercise's heading (and a summary first), tagged ``grader-feedback``: the grader's cells
  are replaced, never added twice, when the feedback is written again (manual scores added).

What a student sees of the instructor's hidden cases is how many passed, never what they are;
what their own functions printed while the check ran stays in the instructor's report.
"""

from __future__ import annotations

import base64
import html
import json
import re
from pathlib import Path

from runnable_book.grade.book import Book
from runnable_book.grade.gradebook import Manual, max_total, scores, total
from runnable_book.grade.grade import Graded

TAG = "grader-feedback"
HEADING = re.compile(r"^\s{0,3}#{1,6}\s+Exercise\s+(\d+)\s*$", re.M)
START = re.compile(r"^\s*#\s*Exercise\s+(\d+):\s*start here", re.I)
STYLE = """
* { box-sizing: border-box; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0 auto; max-width: 900px;
  padding: 0 14px 28px; color: #1d1f23; background: #fff; }
h1 { font-size: 1.3rem; margin: 18px 0 4px; overflow-wrap: anywhere; } h2 { font-size: 1.08rem; margin: 22px 0 6px; }
p.meta { color: #4a4e55; font-size: .9rem; margin: 4px 0; overflow-wrap: anywhere; }
p.total { font-weight: 600; font-size: 1.05rem; }
p.warning { background: #fff3cd; border: 1px solid #c9a227; padding: 6px 10px; border-radius: 4px; }
.v { display: inline-block; padding: 0 8px; border-radius: 10px; color: #fff; font-weight: 600; font-size: .85rem; }
.v-pass { background: #0a6b2c; } .v-fail { background: #a3121e; } .v-not-attempted { background: #5b5f66; }
.v-timeout { background: #8a4b00; } .v-error { background: #6b1a8a; } .v-open { background: #1a5fb4; }
pre { background: #f6f7f9; border: 1px solid #e3e5e8; border-radius: 4px; padding: 8px; white-space: pre-wrap;
  overflow-wrap: anywhere; font-size: .84rem; line-height: 1.35; }
.comment { border-left: 4px solid #1a5fb4; padding: 4px 10px; background: #f3f7fc; }
code { overflow-wrap: anywhere; }
"""


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _points(value) -> str:
    return "–" if value is None else f"{value:g}"


def student_detail(verdict) -> str:
    """The verdict's detail as a student may read it: a hidden case is never named."""
    if verdict.detail.startswith("(hidden) "):
        return "one of your instructor's hidden cases failed"
    return verdict.detail


def exercise_text(number: int, graded: Graded, book: Book, manual: dict[tuple[str, int], Manual]) -> list[str]:
    """What a student is told of one exercise, as lines of Markdown-free text."""
    worth = book.points.get(number)
    value = scores(graded, book, manual).get(number)
    given = manual.get((graded.key, number))
    verdict = graded.verdicts.get(number)
    lines = []
    if verdict is not None:
        lines.append(f"Exercise {number}: {verdict.verdict}, {_points(value)} of {_points(worth)} points")
        lines.append(f"The grader called {verdict.call}: {student_detail(verdict)}")
        if verdict.hidden:
            lines.append(f"Hidden cases (your instructor's, beyond the book's): {verdict.hidden[0]} of "
                         f"{verdict.hidden[1]} pass")
    else:
        lines.append(f"Exercise {number} (read by your instructor): {_points(value)} of {_points(worth)} points"
                     if given and given.points is not None else f"Exercise {number}: not scored yet")
    if given is not None and given.points is not None and verdict is not None:
        lines.append(f"Your instructor set the points to {given.points:g}.")
    if given is not None and given.comment:
        lines.append(f"Your instructor: {given.comment}")
    return lines


def page(graded: Graded, book: Book, manual: dict, meta: dict) -> str:
    """The student's feedback page."""
    name = graded.student_name
    parts = [f"<h1>Feedback for {_e(name)}</h1>",
             f'<p class="meta">{_e(meta.get("title", ""))}: the notebook <code>{_e(graded.name)}</code>'
             + (f", handed in {_e(graded.when)}" if graded.when else "")
             + (f", due {_e(graded.student.get('due'))} (your extension)" if graded.student.get("extension") else "")
             + (" (late)" if graded.late else "") + "</p>"]
    if not meta.get("isolation_complete", True):
        parts.append(f'<p class="warning">{_e(meta.get("isolation", ""))}</p>')
    if graded.problem:
        parts.append(f"<p>Your notebook could not be graded: {_e(graded.problem)}</p>")
    parts.append(f'<p class="total">Total: {total(graded, book, manual):g} of {max_total(book):g} points</p>')
    for number in book.exercises:
        verdict = graded.verdicts.get(number)
        given = manual.get((graded.key, number))
        word = verdict.verdict if verdict is not None else "open"
        value = scores(graded, book, manual).get(number)
        parts.append(f'<section aria-labelledby="ex{number}"><h2 id="ex{number}">Exercise {number} '
                     f'<span class="v v-{word.replace(" ", "-")}">{_e(word)}</span> '
                     f'{_points(value)} of {_points(book.points.get(number))} points</h2>')
        if verdict is not None:
            parts.append(f"<p>The grader called <code>{_e(verdict.call)}</code>: {_e(student_detail(verdict))}</p>")
            if verdict.lines:
                parts.append(f"<p class=\"meta\">The check printed:</p><pre>{_e(chr(10).join(verdict.lines))}</pre>")
            if verdict.hidden:
                parts.append(f"<p>Hidden cases (your instructor's, beyond the book's): {verdict.hidden[0]} of "
                             f"{verdict.hidden[1]} pass.</p>")
            if given is not None and given.points is not None:
                parts.append(f"<p>Your instructor set the points to {given.points:g}.</p>")
        if given is not None and given.comment:
            parts.append(f'<p class="comment">Your instructor: {_e(given.comment)}</p>')
        cells = [c for c in graded.cells if c.get("exercise") == number and c.get("kind") in ("edited", "added")]
        if cells:
            parts.append('<p class="meta">Your cells:</p>')
        for cell in cells:
            parts.append(f'<p class="meta">cell {cell["position"]}</p><pre>{_e(cell["source"])}</pre>')
            for kind, content in cell.get("saved") or []:
                if kind == "png":
                    try:
                        base64.b64decode(content, validate=True)
                    except ValueError:
                        continue
                    parts.append(f'<img alt="a figure your cell drew" style="max-width:100%" '
                                 f'src="data:image/png;base64,{content}">')
            run = cell.get("graded")
            if run and not run.get("ok"):
                parts.append(f'<p class="meta">When graded: {_e(run.get("error") or "it failed")}</p>')
        parts.append("</section>")
    csp = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
            f"<title>Feedback: {_e(name)}</title><style>{STYLE}</style></head><body>{''.join(parts)}</body></html>\n")


def _markdown_cell(number: int | None, text: str, with_id: bool) -> dict:
    cell = {"cell_type": "markdown", "metadata": {"tags": [TAG]}, "source": text}
    if with_id:  # (nbformat 4.5 and later give every cell an id; earlier ones none)
        cell["id"] = f"{TAG}-{'summary' if number is None else number}"
    return cell


def _quoted(lines: list[str]) -> str:
    return "\n".join("> " + line.replace("\n", " ") for line in lines)


def notebook(handed_in: dict, graded: Graded, book: Book, manual: dict, meta: dict) -> dict:
    """The student's notebook with the grader's feedback cells (earlier ones replaced)."""
    cells = [c for c in handed_in.get("cells", []) if TAG not in (c.get("metadata") or {}).get("tags", [])]
    summary = [f"**Feedback for {graded.student_name}**: {total(graded, book, manual):g} of "
               f"{max_total(book):g} points" + (" (late)" if graded.late else "")]
    if not meta.get("isolation_complete", True):
        summary.append(meta.get("isolation", ""))
    placed: dict[int, int] = {}  # exercise -> the index of the cell its feedback goes after
    for index, cell in enumerate(cells):
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        if cell.get("cell_type") == "markdown":
            for found in HEADING.findall(source):
                placed.setdefault(int(found), index)
        elif cell.get("cell_type") == "code":
            started = START.match(source)
            if started:
                placed.setdefault(int(started.group(1)), index - 1)
    with_id = all("id" in c for c in cells)
    inserts = sorted(((placed.get(n, -1), n) for n in book.exercises), reverse=True)
    for after, number in inserts:
        cells.insert(after + 1, _markdown_cell(number, _quoted(exercise_text(number, graded, book, manual)), with_id))
    cells.insert(0, _markdown_cell(None, _quoted(summary), with_id))
    result = dict(handed_in)
    result["cells"] = cells
    return result


def dumps(notebook_json: dict) -> str:
    return json.dumps(notebook_json, indent=1, ensure_ascii=False, sort_keys=True) + "\n"


def base_notebook(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("cells"), list) else None

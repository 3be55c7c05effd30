"""The course's report (ours): _build/grades/index.html, and results.json, what every output is made from.

* ``index.html``: the class at a glance: per exercise, its pass rate, mean points and the
  case most often failed; per student, their total, the late flag, a verdict and points per
  checked exercise and links to their cells for the open ones. Each verdict opens what the
  check printed for that student (the hidden cases named: the instructor's eyes only), the
  call judged and their cells. While the grader runs, the page shows a progress bar and
  reloads itself every few seconds. It holds no time or timing, so a class graded in shards
  and merged gives the same bytes as one run (runnable_book/grade/shards.py).
* ``results.json``: everything above as data, with the run's timings, so one student can be
  graded again (``ONLY=``) and the rest kept, shards merged, and manual scores added later.

Everything a student wrote is shown as text (escaped); a saved PNG only as an image. The
page runs one inline script of ours (its hash is the only one the page's Content Security
Policy allows) and loads nothing. Below 600 px each student is one block, still readable
on a phone.
"""

from __future__ import annotations

import base64
import collections
import hashlib
import html
import json
import re
import statistics
from pathlib import Path

from runnable_book.grade import runs
from runnable_book.grade.book import Book
from runnable_book.grade.gradebook import max_total, scores, total
from runnable_book.grade.grade import VERDICTS, Graded

KIND_WORDS = {"edited": "a cell of the book, edited", "added": "a cell of their own", "book": "the book's cell",
              "install": "the install cell (not run: the grader has chapter_lib)"}


def write_text(path: Path, text: str):
    """Written whole or not at all (a reader of the page never sees half of it)."""
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(path)


def write_json(path: Path, results: list[Graded], meta: dict):
    """Each student's record carries its stamp (``meta["graded"]`` in memory: runnable_book/grade/runs.py), so a
    record read into another grading (a merge) says when and how it was graded; ``meta["runs"]``
    keeps the runs that graded the students present."""
    stamps = meta.get("graded", {})
    used = {stamps[g.key]["run"] for g in results if g.key in stamps}
    head = {k: v for k, v in meta.items() if k != "graded"}
    head["runs"] = {run: about for run, about in meta.get("runs", {}).items() if run in used}
    records = [dict(g.to_json(), graded=stamps[g.key]) if g.key in stamps else g.to_json() for g in results]
    write_text(path, json.dumps({"meta": head, "submissions": records}, indent=1, ensure_ascii=False))


def read_json(path: Path) -> tuple[dict, list[Graded]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    meta, results, stamps = data.get("meta", {}), [], {}
    for record in data.get("submissions", []):
        record = dict(record)
        stamp = record.pop("graded", None)
        graded = Graded.from_json(record)
        results.append(graded)
        stamps[graded.key] = stamp or runs.legacy_stamp(meta)
    meta["graded"] = stamps
    return meta, results


def ordered(results: list[Graded]) -> list[Graded]:
    """The students in the order every output lists them: by name, then by key."""
    return sorted(results, key=lambda g: (g.student_name.casefold(), g.key))


def summary_counts(results: list[Graded], book: Book) -> dict[int, dict[str, int]]:
    counts = {e.number: {v: 0 for v in VERDICTS} for e in book.checked}
    for graded in results:
        for number, verdict in graded.verdicts.items():
            if number in counts:
                counts[number][verdict.verdict] = counts[number].get(verdict.verdict, 0) + 1
    return counts


def summary_line(results: list[Graded], book: Book) -> str:
    """One line, the same however the class was graded: students, and each exercise's verdicts."""
    parts = []
    for number, by_verdict in summary_counts(results, book).items():
        shown = ", ".join(f"{n} {v}" for v, n in by_verdict.items() if n)
        parts.append(f"ex {number}: {shown or 'none'}")
    unreadable = sum(1 for g in results if g.problem)
    late = sum(1 for g in results if g.late)
    return (f"{len(results)} {'student' if len(results) == 1 else 'students'}"
            + (f", {unreadable} unreadable" if unreadable else "") + (f", {late} late" if late else "")
            + " — " + "; ".join(parts))


def timing_line(results: list[Graded], seconds: float, jobs: int, why: str = "") -> str:
    graded = [g for g in results if not g.problem]
    each = sum(g.seconds for g in graded) / len(graded) if graded else 0
    return (f"graded in {_duration(seconds)}, {jobs} at a time{f': {why};' if why else ','} "
            f"{each:.1f} s of sandbox each")


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{int(seconds // 60)} min {int(seconds % 60):02d} s"


def by_exercise(results: list[Graded], book: Book, manual: dict) -> list[dict]:
    """Per exercise: how many passed of those graded, mean points, and the case most often failed."""
    rows = []
    for number in book.exercises:
        exercise = book.numbers.get(number)
        values = [scores(g, book, manual).get(number) for g in results]
        scored = [v for v in values if v is not None]
        row = {"number": number, "worth": book.points.get(number), "checked": exercise is not None,
               "scored": len(scored), "mean": round(statistics.mean(scored), 2) if scored else None}
        if exercise is not None:
            verdicts = [g.verdicts[number] for g in results if number in g.verdicts]
            row["passed"] = sum(1 for v in verdicts if v.verdict == "pass")
            row["graded"] = len(results)
            failed = collections.Counter(v.failed_case for v in verdicts if v.failed_case)
            row["most_failed"] = failed.most_common(1)[0] if failed else None
        rows.append(row)
    return rows


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
code { overflow-wrap: anywhere; }
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
table.course td.num { text-align: right; white-space: nowrap; }
.late { color: #8a4b00; font-weight: 600; }
.comment { border-left: 4px solid #1a5fb4; padding: 4px 10px; background: #f3f7fc; margin: 6px 0; }
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


def _graded_again(meta: dict, key: str) -> str:
    """How a student graded apart from the class was graded: when, with which settings, from where."""
    stamp = meta.get("graded", {}).get(key) or {}
    same = stamp.get("settings") == runs.digest(runs.settings_of(meta))
    if not stamp.get("again") and same:
        return ""
    source = stamp.get("from", "")
    return (f"graded {'again ' if stamp.get('again') else ''}on {runs.when(stamp)}"
            + (" (ONLY=)" if stamp.get("again") else "")
            + (", with the class's settings" if same else
               f", with other settings than the class's: {runs.summary(meta.get('runs', {}).get(stamp.get('run'), {}).get('settings') or {})}")
            + (f", from {source}" if source and source != meta.get("submissions") else ""))


def _students_cells(graded: Graded, number: int | None) -> list[dict]:
    """The cells the report shows for an exercise: the student's own, and the book's that failed when graded."""
    return [c for c in graded.cells if c.get("exercise") == number]


def _points(value) -> str:
    return "–" if value is None else f"{value:g}"


def _course_table(results: list[Graded], book: Book, manual: dict) -> str:
    rows = []
    for row in by_exercise(results, book, manual):
        if row["checked"]:
            rate = f'{row["passed"]} of {row["graded"]} ({100 * row["passed"] / row["graded"]:.0f}%)' \
                if row["graded"] else "–"
            failed = row["most_failed"]
            most = f"{_e(failed[0])} <span class=\"count\">({failed[1]})</span>" if failed else "–"
        else:
            rate, most = f'open: {row["scored"]} scored by hand', "–"
        rows.append(f'<tr><th scope="row">Exercise {row["number"]}</th><td class="num" data-label="Points:">'
                    f'{_points(row["worth"])}</td><td data-label="Passed:">{rate}</td>'
                    f'<td class="num" data-label="Mean points:">{_points(row["mean"])}</td>'
                    f'<td data-label="Most often failed:">{most}</td></tr>')
    return ('<div class="scroll"><table class="course"><caption class="meta" style="text-align:left;padding:6px 8px">'
            "By exercise</caption><thead><tr><th scope=\"col\">Exercise</th><th scope=\"col\">Points</th>"
            "<th scope=\"col\">Passed</th><th scope=\"col\">Mean points</th><th scope=\"col\">Case most often failed"
            f"</th></tr></thead><tbody>{''.join(rows)}</tbody></table></div>")


def page(results: list[Graded], book: Book, meta: dict, done: int, total_count: int, finished: bool,
         manual: dict | None = None) -> str:
    manual = manual or {}
    students = ordered(results)
    ids = {g.key: f"s{i + 1}" for i, g in enumerate(students)}
    head = ['<th scope="col">Student</th>', '<th scope="col">Total</th>']
    head += [f'<th scope="col">Ex {e.number}</th>' for e in book.checked]
    head += ['<th scope="col">Open exercises <span class="count">(their cells)</span></th>']
    body = []
    for graded in students:
        sid = ids[graded.key]
        late = ' <span class="late">late</span>' if graded.late else ""
        cells = [f'<th scope="row"><a href="#{sid}">{_name(graded.student_name)}</a>{late}</th>',
                 f'<td class="num" data-label="Total:">{total(graded, book, manual):g} / {max_total(book):g}</td>']
        if graded.problem:
            cells.append(f'<td colspan="{len(book.checked) + 1}">{_verdict_link(sid, "error", graded.problem)} '
                         f'cannot be read: {_e(graded.problem)}</td>')
        else:
            for exercise in book.checked:
                verdict = graded.verdicts.get(exercise.number)
                cells.append(f'<td data-label="Ex {exercise.number}">'
                             + (_verdict_link(f"{sid}-{exercise.number}", verdict.verdict, verdict.detail)
                                + f' <span class="count">{_points(scores(graded, book, manual)[exercise.number])}</span>'
                                if verdict else "") + "</td>")
            links = []
            for number in book.open:
                mine = [c for c in _students_cells(graded, number) if c.get("kind") in ("edited", "added")]
                given = manual.get((graded.key, number))
                scored = f", {given.points:g} pts" if given is not None and given.points is not None else ""
                links.append(f'<a href="#{sid}-{number}" title="{len(mine)} cell(s) of their own">{number}'
                             f'<span class="count"> ({len(mine)}{scored})</span></a>')
            cells.append(f'<td class="open" data-label="Open:">{"".join(links)}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    sections = []
    for graded in students:
        sid = ids[graded.key]
        title = graded.student_name + ("" if graded.student_name == graded.name else f" — {graded.name}")
        parts = [f'<section id="{sid}" aria-labelledby="{sid}-title"><h2 id="{sid}-title">{_e(title)}</h2>']
        facts = [graded.student.get("handed_in") or (f"handed in {graded.when}" if graded.when else ""),  # (lateness.py)
                 "late" if graded.late else "",
                 _graded_again(meta, graded.key),
                 f"also handed in, not counted: {', '.join(graded.superseded)}" if graded.superseded else "",
                 f"feedback: feedback/{graded.student.get('slug', '')}.html" if graded.student.get("slug") else ""]
        if any(facts):
            parts.append(f'<p class="meta">{_e("; ".join(f for f in facts if f))}</p>')
        if graded.problem:
            parts.append(f"<p>This file cannot be graded: {_e(graded.problem)}</p>")
        for number in book.exercises:
            exercise = book.numbers.get(number)
            mine = _students_cells(graded, number)
            given = manual.get((graded.key, number))
            comment = f'<p class="comment">Your comment: {_e(given.comment)}</p>' if given and given.comment else ""
            value = _points(scores(graded, book, manual).get(number))
            worth = _points(book.points.get(number))
            if exercise is not None and not graded.problem:
                verdict = graded.verdicts.get(number)
                if verdict is None:
                    continue
                lines = "\n".join(verdict.lines + verdict.hidden_lines)
                call = verdict.call or exercise.call
                parts.append(
                    f'<details id="{sid}-{number}"><summary>Exercise {number}: '
                    f'<span class="v v-{verdict.verdict.replace(" ", "-")}">{_e(verdict.verdict)}</span> '
                    f'{value} of {worth} points <span class="detail">{_e(verdict.detail)}</span></summary>'
                    + (f'<p class="cell-title">the grader called <code>{_e(call)}</code>; its check printed:</p>'
                       f'<pre class="check">{_e(lines)}</pre>' if lines else
                       f'<p class="cell-title">the grader called <code>{_e(call)}</code>; the check did not '
                       'finish (the line above says why)</p>')
                    + comment + f"<p class=\"cell-title\">their cells for exercise {number}:</p>{_cells_html(mine)}"
                    "</details>")
            elif exercise is None and not graded.problem:
                parts.append(f'<details id="{sid}-{number}"><summary>Exercise {number} (open, read by you): '
                             f'{len(mine)} cell(s) of their own, {value} of {worth} points</summary>{comment}'
                             f'{_cells_html(mine)}</details>')
        elsewhere = _students_cells(graded, None)
        if elsewhere:
            parts.append(f'<details id="{sid}-other"><summary>Cells before the first exercise: {len(elsewhere)}'
                         f'</summary>{_cells_html(elsewhere)}</details>')
        parts.append("</section>")
        sections.append("".join(parts))
    progress = "" if finished else (
        f'<p class="meta" id="progress-label">Grading: {done} of {total_count} students done</p>'
        f'<progress aria-labelledby="progress-label" max="{total_count}" value="{done}">{done}/{total_count}</progress>')
    warning = "" if meta.get("isolation_complete", True) else (
        f'<p class="warning">{_e(meta.get("isolation", ""))}</p>')
    skipped = meta.get("skipped") or []
    skipped_html = (f'<details class="how"><summary>{len(skipped)} file(s) not graded</summary><ul class="meta">'
                    + "".join(f"<li>{_e(s)}</li>" for s in skipped) + "</ul></details>") if skipped else ""
    facts = [f"From <code>{_e(meta.get('submissions', ''))}</code>"]
    if meta.get("due"):
        facts.append(f"due {_e(meta['due'])}")
    if meta.get("hidden"):
        facts.append(f"with the hidden cases of <code>{_e(meta['hidden'])}</code>")
    if meta.get("manual"):
        facts.append(f"manual scores from <code>{_e(meta['manual'])}</code>")
    again = sorted(g.student_name for g in students if (meta.get("graded", {}).get(g.key) or {}).get("again"))
    if again:
        facts.append(f"{len(again)} graded again on their own since (ONLY=; noted under each): {_e(', '.join(again))}")
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
{progress}<p class="summary">{_e(summary_line(results, book))}</p>
<p class="meta">{", ".join(facts)}. As tables: <a href="grades.csv">grades.csv</a> (a row per verdict),
<a href="gradebook.csv">gradebook.csv</a> (a row per student); each student's feedback is in
<code>feedback/</code>.</p>{warning}{skipped_html}
<details class="how"><summary>How these were graded</summary><p class="meta">Each verdict is the book's own
check, the grader's copy, called on the functions the student handed to it (their own call of the check, else
the start cell's names); the student's code ran in a sandbox ({_e(meta.get("isolation", ""))}) and the check
ran outside it, on the answers their functions gave. Points: the cases passed out of the cases, of what the
exercise is worth. Limits: {_e(meta.get("limits", ""))}. Graded with: {_e(runs.summary(runs.settings_of(meta)))}.
</p></details></header>
<main>{_course_table(results, book, manual)}
<div class="scroll"><table><caption class="meta" style="text-align:left;padding:6px 8px">By student:
each verdict opens what the check printed for that student.</caption><thead><tr>{"".join(head)}</tr></thead>
<tbody>{"".join(body)}</tbody></table></div>
{"".join(sections)}</main>
<footer>Verdicts: pass, fail (the check printed FAIL), not attempted (no cell of their own for the exercise,
and its functions still the start cell's stubs or missing), timeout (a limit was reached), error (the sandbox ran
out of memory or stopped, or the file cannot be read). Written by <code>make grade</code> (runnable_book/grade).</footer>
<script>{SCRIPT}</script></body></html>
"""

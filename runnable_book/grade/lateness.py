"""When each student handed in and when they were due (ours): a submissions list, extensions, the late flag.

A time handed in is taken only from what the LMS or the instructor says, never guessed from a
file (an LMS's zip carries the download's time on every entry):

* ``SUBMITTED=<csv>``: ``student,submitted``, a row per student (the student as everywhere: their
  name, their notebook's file name, their LMS id; the time as ``2026-12-01T23:59``, local, or with
  an offset such as ``Z``, or as Moodle writes it). Moodle's grading worksheet is read as it is
  (``Identifier`` and ``Last modified (submission)``). Canvas exports no such list: write one (the
  API's ``submitted_at`` is ISO with ``Z``);
* ``TIMES=zip`` or ``TIMES=files`` (runnable_book/grade/intake.py): the entries' or files' own times, when
  asked for by name; a student in the submissions list takes the list's time;
* else no time: the late flag is the LMS's own mark (Canvas's ``late``), and the report says so.

``EXTENSIONS=<csv>``: ``student,due``, a student's own due date, in place of ``DUE=``.

Late: handed in after their due date, where both are known; else as the LMS marked it. A name
that fits no student or several is refused, naming the file and its line.
"""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime
from pathlib import Path

from runnable_book.grade import intake, lms
from runnable_book.grade.intake import Class, Handin, IntakeProblem


def _rows(path: Path, what: str) -> list[list[str]]:
    try:
        return lms.read_table(path, what)
    except lms.RosterProblem as problem:
        raise IntakeProblem(str(problem)) from None


def _student_and_time(rows: list[list[str]], path: Path, what: str, column: str,
                      handed: Class) -> dict[str, tuple[datetime, int]]:
    """student key -> (the time in ``column``, its line) for a CSV of ``student,<column>``."""
    header = [h.strip().lower() for h in rows[0]] if rows else []
    if header[:2] != ["student", column]:
        raise IntakeProblem(f"{what}={path}, line 1: the columns should be student, {column} "
                            f"(found {', '.join(rows[0]) if rows else 'nothing'})")
    found: dict[str, tuple[datetime, int]] = {}
    for line, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        student, text = (row + ["", ""])[:2]
        where = f"{what}={path}, line {line}: {student.strip()!r}"
        handin = intake.find(student, handed, where,
                             advice="Name them by their notebook's path in the submissions, or their LMS id, instead.")
        when = intake.parse_time(text)
        if when is None:
            raise IntakeProblem(f"{what}={path}, line {line}: {text.strip()!r} is not a date and time "
                                "(write it as 2026-12-01T23:59)")
        key = handin.student.key
        if key in found:
            raise IntakeProblem(f"{what}={path}, line {line}: a second row for {handin.student.name} "
                                f"(the first is line {found[key][1]})")
        found[key] = (when, line)
    return found


def read_submitted(path: Path, handed: Class) -> tuple[dict[str, datetime], str]:
    """(student key -> when they handed in, where that is said to come from)."""
    rows = _rows(path, "SUBMITTED")
    header = [h.strip() for h in rows[0]] if rows else []
    if not lms.is_moodle_worksheet(header):
        found = _student_and_time(rows, path, "SUBMITTED", "submitted", handed)
        return {key: when for key, (when, _) in found.items()}, f"the submissions list, SUBMITTED={path.name}"
    if "Last modified (submission)" not in header:
        raise IntakeProblem(f"SUBMITTED={path}, line 1: Moodle's worksheet without its 'Last modified (submission)' "
                            "column (download the worksheet again, with every column)")
    moodle = {h.student.lms_id: h.student.key for h in handed.handins if h.student.lms == "moodle"}
    times: dict[str, datetime] = {}
    for line, row in enumerate(rows[1:], start=2):
        cells = dict(zip(header, (c.strip() for c in row)))
        participant = cells.get("Identifier", "").removeprefix(lms.PARTICIPANT).strip()
        text = cells.get("Last modified (submission)", "")
        if participant not in moodle or text in ("", "-"):
            continue  # (a participant who handed nothing in, or is not in this zip)
        when = lms.parse_moodle_date(text)
        if when is None:
            raise IntakeProblem(f"SUBMITTED={path}, line {line}: {text!r} is not a date as Moodle's English "
                                "worksheet writes it (Tuesday, 1 December 2026, 11:59 PM)")
        times[moodle[participant]] = when
    return times, f"Moodle's worksheet, SUBMITTED={path.name}"


def read_extensions(path: Path, handed: Class) -> dict[str, datetime]:
    """student key -> their own due date."""
    found = _student_and_time(_rows(path, "EXTENSIONS"), path, "EXTENSIONS", "due", handed)
    return {key: when for key, (when, _) in found.items()}


def settle(handed: Class, submitted: Path | None = None, extensions: Path | None = None) -> Class:
    """The class with the submissions list's times and the extensions on each student's counted notebook."""
    times, source = read_submitted(submitted, handed) if submitted else ({}, "")
    dues = read_extensions(extensions, handed) if extensions else {}
    changed: dict[int, Handin] = {}
    for handin in handed.handins:
        key = handin.student.key
        update = {}
        if key in times:
            update.update(when=times[key], when_from=source)
        if key in dues:
            update["due"] = dues[key]
        if update:
            changed[id(handin)] = dataclasses.replace(handin, **update)
    settings = dict(handed.settings, submitted=intake.file_setting(submitted),
                    extensions=intake.file_setting(extensions))
    return dataclasses.replace(handed, handins=[changed.get(id(h), h) for h in handed.handins],
                               everyone=[changed.get(id(h), h) for h in handed.everyone], settings=settings)


OPTIONS = {"times": "TIMES=", "submitted": "SUBMITTED=", "extensions": "EXTENSIONS=", "roster": "ROSTER="}


def earlier_settings(out: Path) -> dict:
    """The settings of the grading in ``out`` (its results.json, else a shard's: the class's own, which
    every shard of one grading shares), or {} without one."""
    for path in [out / "results.json", *sorted(out.glob("shard-*-of-*/results.json"))]:
        try:
            return json.loads(path.read_text(encoding="utf-8"))["meta"].get("settings", {})
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return {}


def reuse(args, earlier: dict, given: set[str]) -> list[str]:
    """ONLY= amending a grading: give ``args`` that grading's hand-in times, submissions list, extensions and
    roster where ONLY= does not give them again (``earlier``: its settings); returns what was reused. A file that
    is gone, or no longer holds what it held, is refused, naming it (runnable_book/grade/runs.py compares the rest)."""
    reused = []
    if "times" not in given and earlier.get("times"):
        args.times = earlier["times"]
        reused.append(f"TIMES={args.times}")
    for key in ("submitted", "extensions", "roster"):
        recorded = earlier.get(key)
        if key in given or not isinstance(recorded, dict):
            continue
        path = Path(recorded.get("path", ""))
        if intake.file_setting(path) != recorded:
            raise IntakeProblem(f"the grading ONLY= amends read {OPTIONS[key]}{path}, which is gone or has changed "
                                f"since: give {OPTIONS[key]} again (the file as it was, or a new one: then grade the "
                                "class again, without ONLY=)")
        setattr(args, key, path)
        reused.append(f"{OPTIONS[key]}{path}")
    return reused


def is_late(handin: Handin, due: datetime | None) -> bool:
    """After their due date (their own, else DUE=) where the time handed in is known; else the LMS's mark."""
    own = handin.due or due
    if own is not None and handin.when is not None:
        return handin.when > own
    return handin.marked_late


def _shown(when: datetime) -> str:
    return when.isoformat(sep=" ", timespec="minutes")


def explain(handin: Handin, due: datetime | None) -> str:
    """Where the student's time and due date came from, as the report says it."""
    own = handin.due or due
    parts = []
    if handin.when is not None:
        parts.append(f"handed in {_shown(handin.when)} ({handin.when_from})")
    elif own is not None:
        parts.append("no hand-in time known")
    if handin.due is not None:
        parts.append(f"due {_shown(handin.due)} (an extension)")
    if handin.marked_late:
        by_time = own is not None and handin.when is not None
        parts.append("Canvas marked it late" + (", which the time and due date decide here" if by_time else ""))
    return "; ".join(parts)

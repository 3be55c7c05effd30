"""Canvas's and Moodle's own forms (ours): their file names, their dates, their rosters, their upload names.

What each LMS writes and reads, as their code does it (the grader reads and writes nothing else):

* **Canvas** "Download Submissions": ``<name>_<user id>_<attachment id>_<file>``, or with Canvas's
  late mark ``<name>_late_<user id>_...`` (``LATE`` in older exports; any case is read). ``<name>`` is
  Canvas's squashed, lower-case form (``nunezjose``): the display name comes from a roster. Every entry
  of Canvas's zip carries the time of the download, so the mark is Canvas's only word on lateness.
  Its "Re-upload Submissions" takes back files named exactly so (it reads the first two all-digit
  parts as the user and the attachment, and attaches the file to that submission as a comment,
  under the original attachment's name).
* **Moodle** "Download all submissions": ``<Full Name>_<participant id>_assignsubmission_file`` (4.1
  and later) or ``..._file_`` (earlier), as the student's folder or the start of the file name; the full
  name has its ``_`` replaced by spaces. "Upload multiple feedback files in a zip" reads the same
  names back (the participant id, then the plugin); a file that differs from the submission's becomes
  a feedback file.
* **Rosters**: Canvas's gradebook export (``Student, ID, SIS User ID, SIS Login ID, Section, <assignment
  (id)>...``, a ``Points Possible`` row) and Moodle's offline grading worksheet (``Identifier`` as
  ``Participant <id>``, ``Full name``, ``Email address``, ``Status``, ``Grade``, ``Maximum Grade``,
  ``Grade can be changed``, ``Last modified (submission)``, ``Last modified (grade)``, ...), matched to
  the class by LMS id.
* **Moodle's dates** are written as its ``userdate()`` writes them in English
  (``Tuesday, 1 December 2026, 11:59 PM``), which its importer reads back with ``strtotime()``.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path, PurePosixPath

CANVAS = re.compile(r"^(?P<name>[^_/]+)_(?:(?P<late>late)_)?(?P<id>\d+)_(?P<attachment>\d+)_(?P<file>.+)$", re.I)
MOODLE = re.compile(r"^(?P<name>.+?)_(?P<id>\d+)_assignsubmission_(?P<plugin>[a-z]+)(?:_(?P<file>.*))?$")
PARTICIPANT = "Participant "  # Moodle's Identifier: "Participant <id>" (its string 'hiddenuser')
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
MOODLE_DATE = re.compile(r"^(?:[A-Za-z]+,\s*)?(\d{1,2})\s+([A-Za-z]+)\s+(\d{4}),?\s+(\d{1,2}):(\d{2})\s*([AaPp][Mm])?$")


class RosterProblem(ValueError):
    """The roster cannot be read (the message names the file and the row)."""


@dataclass(frozen=True)
class Filed:
    """What an LMS's file name says of its student."""

    lms: str  # "canvas" or "moodle"
    lms_id: str  # Canvas's user id, Moodle's participant id
    name: str  # the name as the file name writes it
    late: bool = False  # Canvas's late mark
    attachment: int = -1  # Canvas's attachment id (later uploads have larger ones)
    file: str = ""  # the file's own name, after the LMS's prefix


def filed(path: str) -> Filed | None:
    """The student an LMS's file name (a path in its zip, "/"-separated) names, if it is one of theirs."""
    parts = PurePosixPath(path).parts
    canvas = CANVAS.match(parts[-1]) if parts else None
    if canvas:
        return Filed("canvas", canvas["id"], canvas["name"], bool(canvas["late"]), int(canvas["attachment"]),
                     canvas["file"])
    for index, part in enumerate(parts):
        moodle = MOODLE.match(part)
        if moodle:
            own = "/".join(([moodle["file"]] if moodle["file"] else []) + list(parts[index + 1:]))
            return Filed("moodle", moodle["id"], moodle["name"], file=own or parts[-1])
    return None


def moodle_date(when: datetime) -> str:
    """A time as Moodle's worksheet writes it (userdate(), English): ``Tuesday, 1 December 2026, 11:59 PM``."""
    hour = when.hour % 12 or 12
    return (f"{WEEKDAYS[when.weekday()]}, {when.day} {MONTHS[when.month - 1]} {when.year}, "
            f"{hour}:{when.minute:02d} {'AM' if when.hour < 12 else 'PM'}")


def parse_moodle_date(text: str) -> datetime | None:
    found = MOODLE_DATE.match(text.strip())
    if not found:
        return None
    day, month, year, hour, minute, half = found.groups()
    months = {m.lower(): n for n, m in enumerate(MONTHS, start=1)}
    if month.lower() not in months:
        return None
    hour_number = int(hour)
    if half:
        hour_number = hour_number % 12 + (12 if half.lower() == "pm" else 0)
    try:
        return datetime(int(year), months[month.lower()], int(day), hour_number, int(minute))
    except ValueError:
        return None


def canvas_upload_name(submission: str) -> str:
    """The name Canvas's Re-upload Submissions matches: the counted file's own name, as Canvas wrote it."""
    return PurePosixPath(submission).name


def moodle_upload_folder(full_name: str, participant: str) -> str:
    """A student's folder in Moodle's feedback zip: the name has no ``_`` (Moodle splits on it) and no
    path separators; the trailing ``_`` is read by Moodle before 4.1 and after."""
    clean = re.sub(r"[_/\\]+", " ", full_name).strip(" .") or PARTICIPANT.strip()
    return f"{clean}_{participant}_assignsubmission_file_"


@dataclass(frozen=True)
class Listed:
    """A student as the LMS's own table lists them."""

    lms: str
    lms_id: str
    name: str
    fields: tuple[tuple[str, str], ...] = ()  # the LMS's other columns for them (SIS ids, section, e-mail...)


@dataclass
class Roster:
    path: Path
    lms: str
    students: dict[str, Listed] = field(default_factory=dict)  # LMS id -> the student
    assignments: dict[str, str] = field(default_factory=dict)  # Canvas: assignment column -> its Points Possible


CANVAS_FIELDS = ("SIS User ID", "SIS Login ID", "Section")
MOODLE_FIELDS = ("Email address", "Status", "Maximum Grade", "Grade can be changed", "Last modified (submission)",
                 "Last modified (grade)")
CANVAS_NOT_ASSIGNMENTS = re.compile(r"^(Unposted )?(Current|Final|Override) (Score|Points|Grade|Status)|"
                                    r"^(Student|ID|SIS User ID|SIS Login ID|Integration ID|Root Account|Section)$")


def read_table(path: Path, what: str) -> list[list[str]]:
    """A CSV as rows (UTF-8, a byte-order mark or not; commas, or semicolons where a locale's Excel wrote them)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as error:
        raise RosterProblem(f"{what}={path}: cannot be read ({error.strerror})") from None
    except UnicodeDecodeError:
        raise RosterProblem(f"{what}={path}: not UTF-8 text (save it as CSV UTF-8)") from None
    first = text.split("\n", 1)[0]
    delimiter = ";" if first.count(";") > first.count(",") else ","
    return list(csv.reader(io.StringIO(text), delimiter=delimiter))


def is_moodle_worksheet(header: list[str]) -> bool:
    return "Identifier" in header and "Full name" in header


def read_roster(path: Path) -> Roster:
    """Canvas's gradebook export or Moodle's grading worksheet, told apart by their columns."""
    rows = read_table(path, "ROSTER")
    header = [h.strip() for h in rows[0]] if rows else []
    if len(header) > 1 and "Student" in header[0] and header[1] == "ID":
        return _canvas_roster(path, header, rows[1:])
    if is_moodle_worksheet(header):
        return _moodle_roster(path, header, rows[1:])
    raise RosterProblem(f"ROSTER={path}, line 1: neither Canvas's gradebook export (Student, ID, ...) nor Moodle's "
                        f"grading worksheet (Identifier, Full name, ...); found {', '.join(header[:6]) or 'nothing'}")


def _canvas_roster(path: Path, header: list[str], rows: list[list[str]]) -> Roster:
    roster = Roster(path, "canvas")
    columns = [c for c in header if not CANVAS_NOT_ASSIGNMENTS.match(c)]
    for line, row in enumerate(rows, start=2):
        cells = dict(zip(header, (c.strip() for c in row)))
        if "Points Possible" in (row[0] if row else ""):
            roster.assignments = {c: cells.get(c, "") for c in columns}
            continue
        canvas_id = cells.get("ID", "")
        if not canvas_id:
            continue  # (Canvas's "Manual Posting" row, or a blank one)
        if not canvas_id.isdigit():
            raise RosterProblem(f"ROSTER={path}, line {line}: ID {canvas_id!r} is not a Canvas user id")
        roster.students[canvas_id] = Listed("canvas", canvas_id, cells.get(header[0], ""),
                                            tuple((f, cells.get(f, "")) for f in CANVAS_FIELDS))
    if not roster.assignments:
        roster.assignments = {c: "" for c in columns}
    return roster


def _moodle_roster(path: Path, header: list[str], rows: list[list[str]]) -> Roster:
    roster = Roster(path, "moodle")
    for line, row in enumerate(rows, start=2):
        cells = dict(zip(header, (c.strip() for c in row)))
        identifier = cells.get("Identifier", "")
        if not identifier:
            continue
        participant = identifier.removeprefix(PARTICIPANT).strip()
        if not participant.isdigit():
            raise RosterProblem(f"ROSTER={path}, line {line}: Identifier {identifier!r} is not Moodle's "
                                f"'{PARTICIPANT}<id>'")
        roster.students[participant] = Listed("moodle", participant, cells.get("Full name", "") or identifier,
                                              tuple((f, cells.get(f, "")) for f in MOODLE_FIELDS))
    return roster

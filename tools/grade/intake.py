"""The class as it was handed in (ours): a folder or an LMS's zip, each notebook given to its student.

``SUBMISSIONS`` is a folder (searched below too) or a zip, as every LMS exports one. Read
from either, the same way:

* only ``*.ipynb`` files count; a Mac's companions (``__MACOSX/``, ``._name``) and
  ``.ipynb_checkpoints`` are skipped, and said to be;
* names are compared in Unicode's NFC (a macOS zip stores ``Núñez`` decomposed, NFD; what an
  instructor types is composed);
* the student is read from the file name where the LMS wrote one of its patterns, else the
  file's path is the student:

  ===========  =========================================================================
  Canvas       ``<name>_<user id>_<submission id>_<file>``, or
               ``<name>_LATE_<user id>_<submission id>_<file>`` (Canvas's own late mark)
  Moodle       ``<Full Name>_<participant id>_assignsubmission_file_`` as the folder or
               as the start of the file name, then the file's own name
  ===========  =========================================================================

* a student with several notebooks is graded on their latest (by time handed in, then
  name); the others are listed in the report as not counted;
* the time handed in is the zip entry's own time, or the file's modification time: a
  submission after ``DUE`` is late (a column of the gradebook; no penalty is applied).

A zip is read entry by entry into a scratch folder of the grader's (never following an
entry's path: ``../`` or an absolute name cannot place a file anywhere), each entry capped
at the size a notebook may have, so a zip bomb stops at the cap.
"""

from __future__ import annotations

import difflib
import hashlib
import re
import shutil
import stat
import unicodedata
import zipfile
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path, PurePosixPath

MAX_BYTES = 20_000_000  # a class's notebooks are a few hundred KB (tools/grade/notebook.py reads up to this)
CANVAS = re.compile(r"^(?P<name>[^_/]+)_(?:(?P<late>LATE)_)?(?P<id>\d+)_(?P<submission>\d+)_(?P<file>.+)$")
MOODLE = re.compile(r"^(?P<name>.+?)_(?P<id>\d+)_assignsubmission_[a-z]+_(?P<file>.*)$")


LINK = "it is a symbolic link, not a file (the grader does not follow links)"


def too_large(size: int) -> str:
    return f"it is {size / 1e6:.0f} MB; the grader reads notebooks up to {MAX_BYTES / 1e6:.0f} MB"


class IntakeProblem(Exception):
    """What was handed in cannot be read as a class (the message names the file)."""


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


@dataclass(frozen=True)
class Student:
    key: str  # unique in the class: "canvas:12345", "moodle:123456", or the notebook's path
    name: str  # as the report shows it
    lms: str = ""  # "canvas", "moodle" or ""
    lms_id: str = ""  # the LMS's id for the student (Canvas's user id, Moodle's participant id)

    @property
    def slug(self) -> str:
        """A file name for the student's feedback: their name in ASCII, and a digest of their key
        (two students of the same name get two files)."""
        folded = unicodedata.normalize("NFKD", self.name).encode("ascii", "ignore").decode()
        words = re.sub(r"[^A-Za-z0-9]+", "-", folded.removesuffix(".ipynb")).strip("-").lower()[:40] or "student"
        return f"{words}-{hashlib.sha256(self.key.encode()).hexdigest()[:6]}"


@dataclass(frozen=True)
class Handin:
    path: Path  # the file on disk (in the folder, or extracted from the zip)
    name: str  # its path in the folder or the zip, NFC, "/"-separated: what the report shows
    student: Student
    when: datetime | None  # when it was handed in (local time), if known
    marked_late: bool = False  # the LMS's file name says so (Canvas's LATE)
    problem: str | None = None  # why it cannot be read, known before reading it (a link, too large)


@dataclass
class Class:
    handins: list[Handin]  # the one counted for each student, in the students' order
    superseded: dict[str, list[str]] = field(default_factory=dict)  # student key -> their other notebooks
    skipped: list[str] = field(default_factory=list)  # files left out, and why
    everyone: list[Handin] = field(default_factory=list)  # every notebook, counted or not


def student_of(name: str) -> tuple[Student, bool]:
    """The student an LMS's file name names (and whether it marks the file late), else the path."""
    parts = PurePosixPath(name).parts
    base = parts[-1]
    canvas = CANVAS.match(base)
    if canvas:
        return Student(f"canvas:{canvas['id']}", canvas["name"], "canvas", canvas["id"]), bool(canvas["late"])
    for part in parts:
        moodle = MOODLE.match(part)
        if moodle:
            return Student(f"moodle:{moodle['id']}", moodle["name"], "moodle", moodle["id"]), False
    return Student(name, name), False


def _skipped_why(name: str) -> str | None:
    parts = PurePosixPath(name).parts
    if "__MACOSX" in parts:
        return "a Mac's resource fork (__MACOSX)"
    if parts[-1].startswith("._"):
        return "a Mac's resource fork (._ file)"
    if ".ipynb_checkpoints" in parts:
        return "a Jupyter checkpoint"
    return None


def _local(timestamp: float) -> datetime:
    return datetime.fromtimestamp(timestamp).replace(microsecond=0)


def from_folder(folder: Path) -> tuple[list[Handin], list[str]]:
    handins, skipped = [], []
    for path in sorted(folder.rglob("*.ipynb"), key=lambda p: nfc(p.relative_to(folder).as_posix())):
        name = nfc(path.relative_to(folder).as_posix())
        why = _skipped_why(name)
        if why:
            if ".ipynb_checkpoints" not in name:
                skipped.append(f"{name}: {why}")
            continue
        student, late = student_of(name)
        link = path.is_symlink()
        when = None if link else _local(path.stat().st_mtime)
        handins.append(Handin(path, name, student, when, late, LINK if link else None))
    return handins, skipped


def from_zip(archive: Path, scratch: Path) -> tuple[list[Handin], list[str]]:
    """Every notebook of the zip, each written to ``scratch`` under a name of ours."""
    if scratch.exists():
        shutil.rmtree(scratch)
    scratch.mkdir(parents=True)
    handins, skipped = [], []
    try:
        with zipfile.ZipFile(archive) as bundle:
            entries = sorted((e for e in bundle.infolist() if not e.is_dir()), key=lambda e: nfc(e.filename))
            for number, entry in enumerate(entries, start=1):
                name = nfc(entry.filename.replace("\\", "/"))
                if not name.endswith(".ipynb"):
                    continue
                why = _skipped_why(name)
                if why is None and (name.startswith("/") or ".." in PurePosixPath(name).parts):
                    why = "a path outside the zip's folder"
                if why:
                    skipped.append(f"{name}: {why}")
                    continue
                student, late = student_of(name)
                target = scratch / f"{number:05d}.ipynb"
                problem = None
                if stat.S_ISLNK(entry.external_attr >> 16):
                    problem = LINK
                elif entry.file_size > MAX_BYTES:
                    problem = too_large(entry.file_size)
                else:
                    with bundle.open(entry) as source, open(target, "wb") as copy:
                        copy.write(source.read(MAX_BYTES + 1))
                handins.append(Handin(target, name, student, datetime(*entry.date_time), late, problem))
    except zipfile.BadZipFile as error:
        raise IntakeProblem(f"{archive}: not a zip the grader can read ({error})") from None
    return handins, skipped


def collect(source: Path, scratch: Path) -> Class:
    """The class in ``source`` (a folder or a zip): one notebook counted per student."""
    if source.is_dir():
        handins, skipped = from_folder(source)
    elif source.is_file() and zipfile.is_zipfile(source):
        handins, skipped = from_zip(source, scratch)
    elif source.exists():
        raise IntakeProblem(f"{source}: neither a folder nor a zip of notebooks")
    else:
        raise IntakeProblem(f"{source}: no such folder or zip")
    by_student: dict[str, list[Handin]] = {}
    for handin in handins:
        by_student.setdefault(handin.student.key, []).append(handin)
    counted, superseded = [], {}
    for key, theirs in by_student.items():
        theirs.sort(key=lambda h: (h.when or datetime.min, h.name))
        counted.append(theirs[-1])
        if len(theirs) > 1:
            superseded[key] = [h.name for h in theirs[:-1]]
    counted.sort(key=lambda h: (h.student.name.casefold(), h.student.key))
    return Class(counted, superseded, skipped, handins)


def choose(given: str, handed: Class) -> Handin:
    """The one student ``ONLY=`` names: by a notebook's path or file name, the student's name, or
    their LMS id, compared in NFC. An unknown or ambiguous name is refused, naming the candidates."""
    wanted = nfc(given.strip())
    matches: dict[str, Handin] = {}
    counted = {h.student.key: h for h in handed.handins}
    everyone = handed.everyone
    for handin in everyone:
        names = {handin.name, PurePosixPath(handin.name).name, handin.student.name, handin.student.key}
        if handin.student.lms_id:
            names.add(handin.student.lms_id)
        if wanted in names:
            matches[handin.student.key] = counted[handin.student.key]
    if len(matches) == 1:
        return next(iter(matches.values()))
    if matches:
        listed = "; ".join(f"{h.name} ({h.student.name})" for h in sorted(matches.values(), key=lambda h: h.name))
        raise IntakeProblem(f"ONLY={given!r} matches {len(matches)} students: {listed}. "
                            "Give the notebook's path in the submissions instead.")
    known = sorted({h.name for h in everyone} | {h.student.name for h in everyone})
    close = difflib.get_close_matches(wanted, known, n=3)
    raise IntakeProblem(f"ONLY={given!r} is no notebook or student of this class"
                        + (f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""))


def parse_due(text: str) -> datetime:
    """``DUE=2026-12-01T23:59`` (local time; an offset such as +01:00 or Z is converted to it)."""
    try:
        due = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise IntakeProblem(f"DUE={text!r} is not a date and time (write it as 2026-12-01T23:59)") from None
    if due.tzinfo is not None:
        due = due.astimezone().replace(tzinfo=None)
    return due

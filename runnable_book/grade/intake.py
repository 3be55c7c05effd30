"""The class as it was handed in (ours): a folder or an LMS's zip, each notebook given to its student.

``SUBMISSIONS`` is a folder (searched below too) or a zip, as every LMS exports one. Read
from either, the same way:

* only ``*.ipynb`` files count; a Mac's companions (``__MACOSX/``, ``._name``) and
  ``.ipynb_checkpoints`` are skipped, and said to be;
* names are compared in Unicode's NFC (a macOS zip stores ``Núñez`` decomposed, NFD; what an
  instructor types is composed);
* the student is read from the file name where the LMS wrote one of its patterns
  (runnable_book/grade/lms.py: Canvas's ``<name>_<user id>_<attachment id>_<file>``, with its late mark
  ``_late_`` in any case; Moodle's ``<Full Name>_<participant id>_assignsubmission_file[_]``), else the
  file's path is the student; ``ROSTER=`` (Canvas's gradebook export or Moodle's grading worksheet)
  names them as the LMS does, matched by LMS id;
* the time handed in is not read from the files: an LMS's zip carries the download's time on every
  entry, and a copied folder the copy's. ``TIMES=zip`` (a zip's entry times) or ``TIMES=files``
  (the files' modification times) asks for them by name; runnable_book/grade/lateness.py reads a submissions
  list and extensions;
* a student with several notebooks is graded on their latest (by the time handed in where asked
  for, then Canvas's attachment id, which grows with each upload, then name); the others are
  listed in the report as not counted.

A zip is read entry by entry into a scratch folder of the grader's (never following an
entry's path: ``../`` or an absolute name cannot place a file anywhere), each entry capped
at the size a notebook may have, so a zip bomb stops at the cap.
"""

from __future__ import annotations

import dataclasses
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

from runnable_book.grade import lms

MAX_BYTES = 20_000_000  # a class's notebooks are a few hundred KB (runnable_book/grade/notebook.py reads up to this)
TIMES = {"zip": "the zip entry's time (TIMES=zip)", "files": "the file's modification time (TIMES=files)"}


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
    filed_as: str = ""  # the name as the LMS's file name writes it (Canvas's "nunezjose"), when a roster renamed them
    fields: tuple[tuple[str, str], ...] = ()  # the roster's other columns for them (SIS ids, section, e-mail, ...)

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
    marked_late: bool = False  # the LMS's file name says so (Canvas's late mark)
    problem: str | None = None  # why it cannot be read, known before reading it (a link, too large)
    stamp: datetime | None = None  # the zip entry's or the file's own time: used only when asked (TIMES=)
    when_from: str = ""  # where ``when`` came from, as the report says it
    due: datetime | None = None  # this student's own due date (an extension), if they have one
    attachment: int = -1  # Canvas's attachment id: the later upload of two has the larger


@dataclass
class Class:
    handins: list[Handin]  # the one counted for each student, in the students' order
    superseded: dict[str, list[str]] = field(default_factory=dict)  # student key -> their other notebooks
    skipped: list[str] = field(default_factory=list)  # files left out, and why
    everyone: list[Handin] = field(default_factory=list)  # every notebook, counted or not
    settings: dict = field(default_factory=dict)  # the choices that change grades (results.json's meta["settings"])


def student_of(name: str) -> tuple[Student, bool]:
    """The student an LMS's file name names (and whether it marks the file late), else the path."""
    found = lms.filed(name)
    if found is None:
        return Student(name, name), False
    return Student(f"{found.lms}:{found.lms_id}", found.name, found.lms, found.lms_id), found.late


def _handin(path: Path, name: str, stamp: datetime | None, problem: str | None) -> Handin:
    student, late = student_of(name)
    found = lms.filed(name)
    return Handin(path, name, student, None, late, problem, stamp, attachment=found.attachment if found else -1)


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
        link = path.is_symlink()
        handins.append(_handin(path, name, None if link else _local(path.stat().st_mtime), LINK if link else None))
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
                target = scratch / f"{number:05d}.ipynb"
                problem = None
                if stat.S_ISLNK(entry.external_attr >> 16):
                    problem = LINK
                elif entry.file_size > MAX_BYTES:
                    problem = too_large(entry.file_size)
                else:
                    with bundle.open(entry) as source, open(target, "wb") as copy:
                        copy.write(source.read(MAX_BYTES + 1))
                handins.append(_handin(target, name, datetime(*entry.date_time), problem))
    except zipfile.BadZipFile as error:
        raise IntakeProblem(f"{archive}: not a zip the grader can read ({error})") from None
    return handins, skipped


def collect(source: Path, scratch: Path, times: str = "", roster: Path | None = None) -> Class:
    """The class in ``source`` (a folder or a zip): one notebook counted per student. ``times``: "zip" or
    "files" to take the time handed in from the entries' or the files' own times; ``roster``: the LMS's
    table of the students, to name them as the LMS does."""
    if source.is_dir():
        handins, skipped = from_folder(source)
    elif source.is_file() and zipfile.is_zipfile(source):
        handins, skipped = from_zip(source, scratch)
    elif source.exists():
        raise IntakeProblem(f"{source}: neither a folder nor a zip of notebooks")
    else:
        raise IntakeProblem(f"{source}: no such folder or zip")
    if times:
        kind = "files" if source.is_dir() else "zip"
        if times != kind:
            raise IntakeProblem(f"TIMES={times}: {source} is a {'folder' if kind == 'files' else 'zip'}; "
                                f"its own times are TIMES={kind}")
        handins = [dataclasses.replace(h, when=h.stamp, when_from=TIMES[times]) for h in handins]
    if roster is not None:
        handins = _named(handins, roster)
    by_student: dict[str, list[Handin]] = {}
    for handin in handins:
        by_student.setdefault(handin.student.key, []).append(handin)
    counted, superseded = [], {}
    for key, theirs in by_student.items():
        theirs.sort(key=lambda h: (h.when or datetime.min, h.attachment, h.name))
        counted.append(theirs[-1])
        if len(theirs) > 1:
            superseded[key] = [h.name for h in theirs[:-1]]
    counted.sort(key=lambda h: (h.student.name.casefold(), h.student.key))
    settings = {"times": times, "roster": file_setting(roster)}  # (a roster names the students: ONLY= keeps it)
    return Class(counted, superseded, skipped, handins, settings)


def file_setting(path: Path | None) -> dict | str:
    """A file the instructor chose, as a run's settings record it: its path and a digest of what it held."""
    if path is None:
        return ""
    try:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    except OSError:
        digest = ""
    return {"path": str(path), "digest": digest}


def _named(handins: list[Handin], path: Path) -> list[Handin]:
    """Each student of the roster's LMS named as the roster names them, with its other columns (one it does
    not list keeps their file's name: outputs.py says so)."""
    try:
        roster = lms.read_roster(path)
    except lms.RosterProblem as problem:
        raise IntakeProblem(str(problem)) from None
    theirs = [h for h in handins if h.student.lms == roster.lms]
    if handins and not theirs:
        raise IntakeProblem(f"ROSTER={path} is {roster.lms.title()}'s, and no file of the submissions is named as "
                            f"{roster.lms.title()} names them")
    named = []
    for handin in handins:
        listed = roster.students.get(handin.student.lms_id) if handin.student.lms == roster.lms else None
        if listed is None:
            named.append(handin)
            continue
        student = dataclasses.replace(handin.student, name=nfc(listed.name) or handin.student.name,
                                      filed_as=handin.student.name, fields=listed.fields)
        named.append(dataclasses.replace(handin, student=student))
    return named


def _names(handin: Handin) -> set[str]:
    """Every name a student may be given by: the notebook's path or file name, their name (the LMS's and
    their file name's), their key, their LMS id and the roster's ids (SIS ids, e-mail)."""
    student = handin.student
    found = {handin.name, PurePosixPath(handin.name).name, student.name, student.key, student.lms_id,
             student.filed_as}
    found.update(value for key, value in student.fields if key in ("SIS User ID", "SIS Login ID", "Email address"))
    return {nfc(name) for name in found if name}


def find(given: str, handed: Class, where: str, advice: str = "Give the notebook's path in the submissions instead.") -> Handin:
    """The one student ``given`` names (see ``_names``), compared in NFC; ``where`` begins the message that
    refuses an unknown or ambiguous name (``ONLY='x'``, or a file and its row), naming the candidates."""
    wanted = nfc(given.strip())
    counted = {h.student.key: h for h in handed.handins}
    matches = {h.student.key: counted[h.student.key] for h in handed.everyone if wanted in _names(h)}
    if len(matches) == 1:
        return next(iter(matches.values()))
    if matches:
        listed = "; ".join(f"{h.name} ({h.student.name})" for h in sorted(matches.values(), key=lambda h: h.name))
        raise IntakeProblem(f"{where} matches {len(matches)} students: {listed}. {advice}")
    known = sorted({h.name for h in handed.everyone} | {h.student.name for h in handed.everyone})
    close = difflib.get_close_matches(wanted, known, n=3)
    raise IntakeProblem(f"{where} is no notebook or student of this class"
                        + (f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""))


def choose(given: str, handed: Class) -> Handin:
    """The one student ``ONLY=`` names: by a notebook's path or file name, the student's name, or
    their LMS id, compared in NFC. An unknown or ambiguous name is refused, naming the candidates."""
    return find(given, handed, f"ONLY={given!r}")


def parse_time(text: str) -> datetime | None:
    """``2026-12-01T23:59`` (local time; an offset such as +01:00 or Z is converted to it), or a time as
    Moodle's worksheet writes it (``Tuesday, 1 December 2026, 11:59 PM``); None if it is neither."""
    try:
        when = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return lms.parse_moodle_date(text)
    if when.tzinfo is not None:
        when = when.astimezone().replace(tzinfo=None)
    return when


def parse_due(text: str) -> datetime:
    """``DUE=2026-12-01T23:59`` (local time; an offset such as +01:00 or Z is converted to it)."""
    due = parse_time(text)
    if due is None:
        raise IntakeProblem(f"DUE={text!r} is not a date and time (write it as 2026-12-01T23:59)")
    return due

"""What graded whom (ours): a run's settings, each student's stamp, and the newest grading of each student.

Everything a run chooses that changes a grade is its *settings*, one dict in results.json's
``meta["settings"]`` (the book's digest and each exercise's points, the due date, the hidden
cases' digest, the limits; runnable_book/grade/intake.py's facts add theirs). Each student's record in
results.json carries a *stamp*, ``"graded"``: when the run that graded them started (UTC, to the
microsecond), the run's id, the digest of its settings, whether it graded them again on their
own (``ONLY=``), and the folder or zip their notebook came from. In memory the stamps are
``meta["graded"]`` (student key -> stamp; runnable_book/grade/report.py moves them into and out of the
records) and the runs they name are ``meta["runs"]`` (run id -> when, how, settings).

Two rules follow from them:

* ``ONLY=`` amends an earlier grading with that grading's settings: what is not given again is
  reused (the hidden cases' file from its path, checked against its digest); what is given and
  differs is refused, naming the setting and both values (``amending``, ``check_same``).
* ``make grade-merge`` keeps the newest grading of each student, wherever it is, and says what it
  took from where (``newest``); it refuses a class whose students would end up graded two ways.

The order of two gradings is their stamps' (start time, run id): wall clocks of different
machines, good to the skew between them, which is far less than the time between a grading and
an instructor's regrade; equal times fall back to the run id, so the choice never depends on the
order the folders are read in.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from runnable_book.grade.grade import Graded

# The options that give a setting, and where the earlier run's value goes back into the options
# when ONLY= does not give it again. Settings with no option (the book, its points) are the
# repository's: they are never reused, only compared.
LIMITS = ("step_seconds", "notebook_seconds", "python_mb", "process_mb")
REUSED = ("due", "hidden_digest", "limits")  # the settings ``reuse`` gives back to the options
OPTION_WORDS = {"due": "DUE=", "hidden_digest": "HIDDEN=", "limits": "the limits (--step-seconds, ...)",
                "book": "the book (chapter_lib and the exercise page)", "points": "the exercises' points",
                "times": "TIMES=", "submitted": "SUBMITTED=", "extensions": "EXTENSIONS=", "roster": "ROSTER="}


class RunProblem(Exception):
    """An amendment or a merge that would mix gradings made two ways: the message says which and what to do."""


def settings(book_digest: str, points: dict, due: datetime | None, hidden, limits) -> dict:
    """The run's settings (``hidden``: HiddenCases or None; ``limits``: runnable_book/grade/sandbox.py's Limits)."""
    return {"book": book_digest, "points": {str(n): points[n] for n in sorted(points)},
            "due": due.isoformat(sep=" ", timespec="seconds") if due else "",
            "hidden_digest": hidden.digest if hidden else "",
            # (the clock the seconds are on: CPU time since limits stopped being wall-clock time,
            # so a grading under the old limits is not taken for one under the new)
            "limits": {**{name: getattr(limits, name) for name in LIMITS}, "clock": "cpu"}}


def settings_of(meta: dict) -> dict:
    """A results.json's settings; one written before settings were recorded has those its meta held."""
    if "settings" in meta:
        return meta["settings"]
    return {key: meta.get(key, "") for key in ("book", "due", "hidden_digest")}


def digest(values: dict) -> str:
    return hashlib.sha256(json.dumps(values, sort_keys=True).encode()).hexdigest()[:16]


def differences(one: dict, other: dict) -> list[str]:
    """The settings two dicts hold differently (keys one of them lacks do not count: an older results.json)."""
    return [key for key in sorted(set(one) & set(other)) if one[key] != other[key]]


def shown(key: str, value) -> str:
    """A setting's value as an instructor reads it."""
    if key == "limits" and isinstance(value, dict):
        clock = " of CPU" if value.get("clock") == "cpu" else " on the clock"
        return (f"{value.get('step_seconds', '?'):g} s{clock} per step, {value.get('notebook_seconds', '?'):g} s per "
                f"notebook, Python {value.get('python_mb')} MB, the sandbox {value.get('process_mb')} MB")
    if key == "points" and isinstance(value, dict):
        return ", ".join(f"ex {n}: {p:g}" for n, p in value.items()) or "none"
    return str(value) if value not in ("", None) else "none"


def summary(values: dict) -> str:
    """A run's settings in one line, as the report says them."""
    if not values:
        return "settings not recorded"
    words = [f"the book {values.get('book') or '?'}"]
    if values.get("points"):
        words.append(f"points {shown('points', values['points'])}")
    words.append(f"due {values['due']}" if values.get("due") else "no due date")
    words.append(f"hidden cases {values['hidden_digest']}" if values.get("hidden_digest") else "no hidden cases")
    if values.get("limits"):
        words.append(shown("limits", values["limits"]))
    words += [f"{key} {shown(key, value)}" for key, value in sorted(values.items())
              if key not in ("book", "points", "due", "hidden_digest", "limits")]
    return "; ".join(words)


def said(key: str, one, other) -> str:
    return f"{OPTION_WORDS.get(key, key)}: {shown(key, one)} / {shown(key, other)}"


# ---- a run, and each student's stamp ---------------------------------------------------

@dataclass(frozen=True)
class Run:
    id: str
    at: str  # when it started, UTC, ISO to the microsecond
    how: str  # "the class", "shard 2/3", "ONLY=Kowalski"
    settings: dict

    @classmethod
    def start(cls, how: str, values: dict) -> "Run":
        now = datetime.now(timezone.utc)
        return cls(f"{now:%Y%m%dT%H%M%S.%fZ}-{os.getpid()}", now.isoformat(timespec="microseconds"), how, values)

    def stamp(self, again: bool, source: str) -> dict:
        return {"at": self.at, "run": self.id, "settings": digest(self.settings), "again": again, "from": source}

    def described(self) -> dict:
        return {"at": self.at, "how": self.how, "settings": self.settings}


def legacy_stamp(meta: dict) -> dict:
    """The stamp of a record written before stamps: its file's run's time (to the minute, local), else
    older than any stamped grading. (A file an ONLY= amended then is newer than its shards, as its regrade.)"""
    try:
        at = datetime.strptime(meta.get("run", {}).get("when", ""), "%Y-%m-%d %H:%M").astimezone(timezone.utc)
        at = at.isoformat(timespec="microseconds")
    except (ValueError, AttributeError):
        at = ""
    return {"at": at, "run": "", "settings": digest(settings_of(meta)), "again": False,
            "from": meta.get("submissions", "")}


def order(stamp: dict) -> tuple[str, str]:
    return stamp.get("at", ""), stamp.get("run", "")


def when(stamp: dict) -> str:
    """A stamp's time, local, to the minute (as the report shows it)."""
    try:
        return datetime.fromisoformat(stamp["at"]).astimezone().strftime("%Y-%m-%d %H:%M")
    except (KeyError, ValueError):
        return "an earlier run"


# ---- ONLY=: the grading it amends ------------------------------------------------------

def reuse(args, earlier: dict, given: set[str]) -> list[str]:
    """Give ``args`` the earlier run's settings that ONLY= does not give again; returns what was reused.
    ``earlier``: the amended results.json's meta; ``given``: the options given on the command line."""
    values, reused = settings_of(earlier), []
    if "due" not in given and values.get("due"):
        args.due = values["due"].replace(" ", "T")
        reused.append(f"DUE={args.due}")
    if "hidden" not in given and values.get("hidden_digest"):
        path = earlier.get("hidden_file") or earlier.get("hidden", "")
        if not path or not Path(path).is_file():
            raise RunProblem(f"the grading ONLY= amends used hidden cases from {path or 'a file it did not record'}, "
                             "which is gone: give HIDDEN= that file again (its digest is checked), or grade the "
                             "class again without ONLY=")
        args.hidden = Path(path)
        reused.append(f"HIDDEN={path}")
    limits = values.get("limits") or {}
    for name in LIMITS:
        if name not in given and name in limits and getattr(args, name) != limits[name]:
            setattr(args, name, limits[name])
            reused.append(f"--{name.replace('_', '-')} {limits[name]:g}")
    return reused


def check_same(now: dict, earlier: dict, folder: Path, submissions: str, hidden_reused: bool) -> None:
    """Refuse an ONLY= whose settings differ from the grading it amends, naming each and how to regrade the class."""
    differ = differences(now, settings_of(earlier))
    if not differ:
        return
    old = settings_of(earlier)
    if "hidden_digest" in differ and hidden_reused:
        raise RunProblem(f"the hidden cases' file {earlier.get('hidden_file') or earlier.get('hidden')} changed since "
                         f"the grading ONLY= amends ({folder / 'results.json'}: digest {old['hidden_digest']}, now "
                         f"{now['hidden_digest']}): put the file back as it was, or grade the class again with it "
                         f"(make grade SUBMISSIONS={submissions}, without ONLY=)")
    lines = "; ".join(said(key, old.get(key), now.get(key)) for key in differ)
    unreused = [OPTION_WORDS.get(key, key) for key in differ if key not in REUSED and key not in ("book", "points")]
    keep = ("Give ONLY= without them to reuse the earlier ones" if not unreused else
            f"Give {', '.join(unreused)} as the earlier grading did")
    raise RunProblem(f"ONLY= would grade with other settings than the grading it amends ({folder / 'results.json'}), "
                     f"earlier / now: {lines}. {keep}, or grade the class again with the new ones: "
                     f"make grade SUBMISSIONS={submissions} (without ONLY=)")


# ---- grade-merge: the newest grading of each student ----------------------------------

@dataclass
class Source:
    """A results.json read for a merge: a shard's, or the merged one an ONLY= may have amended since."""
    label: str  # "shard-2-of-3", "results.json"
    folder: Path
    meta: dict
    results: list[Graded]


def newest(sources: list[Source]) -> tuple[dict[str, tuple[Source, Graded]], list[str]]:
    """Each student's newest grading among ``sources`` (key -> (source, graded)), and what to tell the
    instructor about the gradings it replaced. Refuses a class that would be graded two ways.

    A newer grading of a student replaces an older one whatever their settings (that is what
    grading again is), and the merge says so. But the students kept must share one set of
    settings: a class graded under two due dates, or with and without hidden cases, has totals
    that cannot be compared, and its report could not say in one line how it was graded; so that
    is refused, naming a student of each and the setting, rather than written."""
    chosen: dict[str, tuple[Source, Graded]] = {}
    replaced: dict[tuple[str, str], list[str]] = {}
    for source in sources:
        for graded in source.results:
            stamp = source.meta["graded"].get(graded.key) or legacy_stamp(source.meta)
            held = chosen.get(graded.key)
            if held is None:
                chosen[graded.key] = (source, graded)
                continue
            held_stamp = held[0].meta["graded"].get(graded.key) or legacy_stamp(held[0].meta)
            if order(stamp) == order(held_stamp):
                continue  # the same grading, copied (a merge's results.json holds its shards' records)
            newer, older = ((source, graded), held) if order(stamp) > order(held_stamp) else (held, (source, graded))
            chosen[graded.key] = newer
            replaced.setdefault((older[0].label, newer[0].label), []).append(graded.student_name)
    notes = [f"{len(names)} {'grading' if len(names) == 1 else 'gradings'} in {old} replaced by the newer in {new}: "
             f"{', '.join(sorted(names)[:5])}{' ...' if len(names) > 5 else ''}"
             for (old, new), names in sorted(replaced.items())]
    _one_way(chosen)
    return chosen, notes


def _one_way(chosen: dict[str, tuple[Source, Graded]]) -> None:
    by_digest: dict[str, tuple[Source, Graded]] = {}
    for key in sorted(chosen):
        source, graded = chosen[key]
        stamp = source.meta["graded"].get(key) or legacy_stamp(source.meta)
        by_digest.setdefault(stamp["settings"], (source, graded))
    if len(by_digest) < 2:
        return
    (one_source, one), (other_source, other) = list(by_digest.values())[:2]
    differ = differences(settings_of(one_source.meta), settings_of(other_source.meta)) or ["settings"]
    lines = "; ".join(said(key, settings_of(one_source.meta).get(key), settings_of(other_source.meta).get(key))
                      for key in differ)
    raise RunProblem(f"the newest gradings would grade the class two ways: {one.student_name} ({one_source.label}) "
                     f"and {other.student_name} ({other_source.label}) differ in {lines}. Grade the class again "
                     "with one set of settings, or remove the folder of the grading you do not want")

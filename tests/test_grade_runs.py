"""Nothing a grading run did is lost, and a batch machine gets the jobs it has (runnable_book/grade/runs.py,
shards.py, jobs.py, __main__.py's plan()).

Most tests build the gradings an instructor's runs would leave (results.json in OUT and in
shard folders) from `Graded` records, with the settings the grader computes for this book, and
run the merge and ONLY='s planning on them: no sandbox. One test grades a tiny class's student
for real, with the commands `make grade` and `make grade-merge` run (their rules' command lines,
as `make -n` prints them, without rebuilding the assets they depend on): a regrade after
shards, merged again.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings as hypothesis_settings, strategies as st

from runnable_book.common.shards import folder_name
from runnable_book.grade import jobs, report, runs, shards
from runnable_book.grade import __main__ as grade_main
from runnable_book.grade.book import load
from runnable_book.grade.generated_class import answers, notebook_with, one_exercise_notebook, write
from runnable_book.grade.grade import Graded
from runnable_book.grade.intake import parse_due
from runnable_book.grade.judge import Verdict
from runnable_book.grade.sandbox import Limits
from runnable_book.repository import ROOT

BOOK = load()
FIRST = BOOK.checked[0]
DUE = "2026-12-01T23:59"
LIMITS = Limits(20, 120, Limits.python_mb, Limits.process_mb)  # (the tiny class's real grading: a loaded machine)
CLASS = ["kowalski.ipynb", "nowak.ipynb", "adams.ipynb", "baker.ipynb"]


def the_settings(due=DUE, hidden=None, limits=LIMITS) -> dict:
    """The settings the grader records for a run with these options (its plan, on a one-notebook class)."""
    scratch = Path(tempfile.mkdtemp(prefix="grade-runs-settings-"))
    try:
        write(scratch / "one.ipynb", notebook_with(BOOK, {}))
        options = [str(scratch), "--out", str(scratch / "out"), "--step-seconds", f"{limits.step_seconds:g}",
                   "--notebook-seconds", f"{limits.notebook_seconds:g}", "--python-mb", str(limits.python_mb),
                   "--process-mb", str(limits.process_mb)]
        options += ["--due", due] if due else []
        options += ["--hidden", str(hidden.path)] if hidden else []
        return grade_main.plan(grade_main.arguments(options), scratch / "out").settings
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def graded(name: str, verdict: str) -> Graded:
    """A student's record as the grader writes it: every checked exercise given ``verdict``."""
    return Graded(name, student={"key": name, "name": name.removesuffix(".ipynb").title(), "lms": "", "lms_id": "",
                                 "slug": name.removesuffix(".ipynb")},
                  verdicts={e.number: Verdict(verdict, verdict, points=e.points if verdict == "pass" else 0.0,
                                              max_points=e.points) for e in BOOK.checked})


def write_grading(folder: Path, records: list[Graded], run: runs.Run, again=False, meta: dict | None = None,
                  shard: str = "", kept: Path | None = None) -> None:
    """results.json as a run writes it: ``records`` graded by ``run`` (and, with ``kept``, the rest of that
    folder's grading kept, as ONLY= keeps it)."""
    folder.mkdir(parents=True, exist_ok=True)
    head = {"title": "t", "submissions": "class", "isolation": "isolated", "isolation_complete": True,
            "settings": run.settings, "shard": shard, "runs": {}, "graded": {}, **(meta or {})}
    results = []
    if kept is not None:
        head, earlier = report.read_json(kept / "results.json")
        results = [g for g in earlier if g.key not in {r.key for r in records}]
    head["runs"] = dict(head.get("runs", {}), **{run.id: run.described()})
    head["graded"] = dict(head.get("graded", {}), **{r.key: run.stamp(again, "class") for r in records})
    report.write_json(folder / "results.json", report.ordered(results + records), head)


def sharded(base: Path, run: runs.Run, verdict="fail", n=2) -> None:
    for k in range(1, n + 1):
        write_grading(base / folder_name(k, n), [graded(name, verdict) for name in CLASS
                                                         if shards.belongs(name, k, n)], run, shard=f"{k}/{n}")


def merge(base: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "runnable_book.grade.shards", "--out", str(base)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def verdicts(folder: Path) -> dict[str, str]:
    return {s["name"]: s["verdicts"][str(FIRST.number)]["verdict"]
            for s in json.loads((folder / "results.json").read_text())["submissions"]}


# ---- grade-merge keeps the newest grading of each student ---------------------------------------

def test_a_regrade_after_shards_survives_the_merge_and_the_report_says_who(tmp_path):
    """The tracker's case: shards merged, ONLY=Kowalski in the merged folder, make grade-merge again."""
    sharded(tmp_path, runs.Run.start("shard", the_settings()))
    first = merge(tmp_path)
    assert first.returncode == 0, first.stderr
    write_grading(tmp_path, [graded("kowalski.ipynb", "pass")], runs.Run.start("ONLY=kowalski", the_settings()),
                  again=True, kept=tmp_path)
    again = merge(tmp_path)
    assert again.returncode == 0, again.stderr
    assert verdicts(tmp_path)["kowalski.ipynb"] == "pass"
    assert {v for n, v in verdicts(tmp_path).items() if n != "kowalski.ipynb"} == {"fail"}
    assert "1 from" in again.stdout and "graded there after the shards: Kowalski" in again.stdout
    assert re.search(r"grading in shard-\d-of-2 replaced by the newer in results\.json: Kowalski", again.stdout)
    page = (tmp_path / "index.html").read_text()
    assert "graded again on their own since (ONLY=" in page
    assert page.count("(ONLY=), with the class&#x27;s settings") == 1
    stamps = {s["name"]: s["graded"] for s in json.loads((tmp_path / "results.json").read_text())["submissions"]}
    assert stamps["kowalski.ipynb"]["again"] and not stamps["nowak.ipynb"]["again"]
    # Merged once more, nothing changes: the regrade is kept however often the shards are read.
    assert merge(tmp_path).returncode == 0 and verdicts(tmp_path)["kowalski.ipynb"] == "pass"


def test_a_shard_graded_after_the_regrade_wins_and_the_merge_says_so(tmp_path):
    settings = the_settings()
    sharded(tmp_path, runs.Run.start("shard", settings))
    assert merge(tmp_path).returncode == 0
    write_grading(tmp_path, [graded("kowalski.ipynb", "pass")], runs.Run.start("ONLY=", settings), again=True,
                  kept=tmp_path)
    k = next(k for k in (1, 2) if shards.belongs("kowalski.ipynb", k, 2))
    later = runs.Run.start("shard again", settings)  # (the whole shard graded again, later)
    write_grading(tmp_path / folder_name(k, 2), [graded(n, "timeout") for n in CLASS if shards.belongs(n, k, 2)],
                  later, shard=f"{k}/2")
    done = merge(tmp_path)
    assert done.returncode == 0, done.stderr
    assert verdicts(tmp_path)["kowalski.ipynb"] == "timeout"
    assert re.search(rf"gradings? in results\.json replaced by the newer in shard-{k}-of-2: .*Kowalski", done.stdout), \
        done.stdout


def test_the_merge_refuses_a_class_that_would_be_graded_two_ways(tmp_path):
    """A student only the older merge holds, graded with another due date than the shards since."""
    write_grading(tmp_path, [graded("zed.ipynb", "pass")], runs.Run.start("the class", the_settings(due=None)),
                  meta={"shards": 2})
    sharded(tmp_path, runs.Run.start("shard", the_settings()))
    done = merge(tmp_path)
    assert done.returncode == 2
    assert "Zed (results.json)" in done.stderr and "DUE=" in done.stderr
    assert "2026-12-01 23:59:00" in done.stderr and "none" in done.stderr


def test_shards_of_different_settings_are_refused_naming_the_setting(tmp_path):
    sharded(tmp_path, runs.Run.start("shard", the_settings()))
    write_grading(tmp_path / "shard-2-of-2", [graded("nowak.ipynb", "pass")],
                  runs.Run.start("shard", the_settings(limits=Limits(5, 60, 256, 1024))), shard="2/2")
    done = merge(tmp_path)
    assert done.returncode == 2 and "the limits" in done.stderr and "5 s of CPU per step" in done.stderr


@hypothesis_settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(CLASS), st.integers(0, 3), st.integers(0, 2)), min_size=1, max_size=12),
       st.randoms())
def test_the_newest_grading_is_chosen_whatever_order_the_folders_are_read_in(gradings, shuffler):
    """Equal times fall back to the run id, and copies of one grading are one grading."""
    sources = []
    for i, (name, at, run_number) in enumerate(gradings):
        stamp = {"at": f"2026-05-0{at + 1}T10:00:00", "run": f"run-{run_number}", "settings": "s", "again": False}
        sources.append(runs.Source(f"source-{i}", Path("."), {"graded": {name: stamp}}, [graded(name, f"v{i}")]))
    chosen, _ = runs.newest(sources)
    shuffled = list(sources)
    shuffler.shuffle(shuffled)
    again, _ = runs.newest(shuffled)
    newest = {name: max(runs.order(s.meta["graded"][name]) for s in sources if name in s.meta["graded"])
              for name, *_ in gradings}
    for name in newest:
        assert runs.order(chosen[name][0].meta["graded"][name]) == newest[name]
        assert runs.order(again[name][0].meta["graded"][name]) == newest[name]


# ---- ONLY= amends with the earlier grading's settings ------------------------------------------

@pytest.fixture
def a_class(tmp_path):
    """Notebooks of a class (never graded here: ONLY='s planning reads them) and a hidden cases' file."""
    folder = tmp_path / "class"
    folder.mkdir()
    for name in CLASS:
        write(folder / name, notebook_with(BOOK, {}))
    hidden = tmp_path / "hidden.py"
    example = (ROOT / "runnable_book" / "grade" / "examples" / "hidden_cases.py").read_text()
    hidden.write_text(example)
    return {"folder": folder, "hidden": hidden, "out": tmp_path / "grades"}


def planned(a_class, *options):
    args = grade_main.arguments([str(a_class["folder"]), "--out", str(a_class["out"]), *map(str, options)])
    return grade_main.plan(args, a_class["out"])


def loaded_hidden(path):
    from runnable_book.grade import hidden
    return hidden.load(path, {e.check: len(e.args) for e in BOOK.checked})


def graded_once(a_class, **setting):
    values = the_settings(hidden=loaded_hidden(a_class["hidden"]), **setting)
    write_grading(a_class["out"], [graded(n, "fail") for n in CLASS], runs.Run.start("the class", values),
                  meta={"hidden": "hidden.py", "hidden_file": str(a_class["hidden"])})


def test_only_without_settings_reuses_the_earlier_ones(a_class):
    graded_once(a_class)
    plan = planned(a_class, "--only", "kowalski.ipynb")
    assert plan.due == parse_due(DUE) and plan.hidden.path == a_class["hidden"] and plan.limits == LIMITS
    assert [h.student.key for h in plan.chosen] == ["kowalski.ipynb"]
    assert sorted(g.key for g in plan.kept) == sorted(set(CLASS) - {"kowalski.ipynb"})
    assert plan.settings == runs.settings_of(report.read_json(a_class["out"] / "results.json")[0])
    assert any(r.startswith("DUE=") for r in plan.reused) and any(r.startswith("HIDDEN=") for r in plan.reused)


def test_only_with_another_setting_is_refused_naming_it_both_values_and_the_way_to_regrade(a_class):
    graded_once(a_class)
    with pytest.raises(runs.RunProblem) as refused:
        planned(a_class, "--only", "kowalski.ipynb", "--due", "2026-12-08T23:59")
    message = str(refused.value)
    assert "DUE=: 2026-12-01 23:59:00 / 2026-12-08 23:59:00" in message
    assert f"make grade SUBMISSIONS={a_class['folder']} (without ONLY=)" in message
    with pytest.raises(runs.RunProblem, match=r"the limits .*: 20 s of CPU per step.* / 5 s of CPU per step"):
        planned(a_class, "--only", "kowalski.ipynb", "--step-seconds", "5")


def test_only_refuses_when_the_earlier_hidden_cases_changed_or_are_gone(a_class):
    graded_once(a_class)
    hidden = a_class["hidden"]
    hidden.write_text(hidden.read_text() + "\n# a case added since\n")
    with pytest.raises(runs.RunProblem, match=re.escape(f"the hidden cases' file {hidden} changed since")):
        planned(a_class, "--only", "kowalski.ipynb")
    hidden.unlink()
    with pytest.raises(runs.RunProblem, match=re.escape(f"hidden cases from {hidden}, which is gone")):
        planned(a_class, "--only", "kowalski.ipynb")


def test_only_refuses_when_the_book_changed_since(a_class):
    graded_once(a_class)
    meta, results = report.read_json(a_class["out"] / "results.json")
    meta["settings"] = dict(meta["settings"], book="0" * 16,
                            points=dict(meta["settings"]["points"], **{str(FIRST.number): FIRST.points + 5}))
    report.write_json(a_class["out"] / "results.json", results, meta)
    with pytest.raises(runs.RunProblem) as refused:
        planned(a_class, "--only", "kowalski.ipynb")
    assert "the book (chapter_lib and the exercise page)" in str(refused.value)
    assert f"ex {FIRST.number}: {FIRST.points + 5:g}" in str(refused.value)


def test_only_after_shards_not_merged_grades_in_the_students_shard(a_class):
    run = runs.Run.start("shard", the_settings(hidden=loaded_hidden(a_class["hidden"])))
    for k in (1, 2):
        write_grading(a_class["out"] / folder_name(k, 2), [graded(n, "fail") for n in CLASS
                                                                 if shards.belongs(n, k, 2)], run, shard=f"{k}/2",
                      meta={"hidden_file": str(a_class["hidden"])})
    k = next(k for k in (1, 2) if shards.belongs("kowalski.ipynb", k, 2))
    plan = planned(a_class, "--only", "kowalski.ipynb")
    assert plan.folder == a_class["out"] / folder_name(k, 2)
    assert sorted(g.key for g in plan.kept) == sorted(n for n in CLASS if shards.belongs(n, k, 2) and n != "kowalski.ipynb")


def test_only_with_shard_is_refused_advising_what_works(a_class):
    with pytest.raises(grade_main.Refused, match="leave SHARD= out"):
        planned(a_class, "--only", "kowalski.ipynb", "--shard", "1/2")


# What make passes on from the environment and its command line (Make exports command-line variables).
MAKE_VARIABLES = ("SUBMISSIONS", "ONLY", "DUE", "HIDDEN", "MANUAL", "ASSIGNMENT", "FORMAT", "SHARD", "SHARDS", "OUT", "JOBS",
                  "SUBMITTED", "EXTENSIONS", "TIMES", "ROSTER")


def make_command(target: str, **variables) -> list[str]:
    """The command make's ``target`` runs with these variables: its rule's ``python -m`` line as
    ``make -n`` prints it, expanded by the shell as make would run it."""
    environment = {k: v for k, v in os.environ.items() if k not in MAKE_VARIABLES}
    environment.update(variables)
    shown = subprocess.run(["make", "-n", "--no-print-directory", target, *(f"{k}={v}" for k, v in variables.items())],
                           cwd=ROOT, capture_output=True, text=True, timeout=120, env=environment)
    line = next(line for line in shown.stdout.replace("\\\n", " ").splitlines() if re.search(r" -m runnable_book\.grade(\.shards)? ", line))
    module, arguments = line.split(" -m ", 1)[1].split(" ", 1)
    printed = subprocess.run(["sh", "-c", f"printf '%s\\n' {arguments}"], capture_output=True, text=True,
                             env=environment, check=True)
    return [sys.executable, "-m", module, *printed.stdout.splitlines()]


def test_make_passes_out_and_jobs():
    """The grade and grade-merge rules, with the instructor's OUT= and JOBS=, reach the grader."""
    words = make_command("grade", SUBMISSIONS="my class.zip", OUT="/tmp/x y", JOBS="3", ONLY="José Núñez")
    assert words[2] == "runnable_book.grade"
    args = grade_main.arguments(words[3:])
    assert (args.out, args.jobs, args.only, args.submissions) == (Path("/tmp/x y"), 3, ["José Núñez"], Path("my class.zip"))
    assert "jobs" in args.given and "due" not in args.given
    merged = make_command("grade-merge", OUT="/tmp/x y")
    assert merged[2] == "runnable_book.grade.shards" and merged[merged.index("--out") + 1] == "/tmp/x y"


# ---- jobs: the CPUs allowed and the memory --------------------------------------------------

def cgroup(folder: Path, memory_max="max", current="0", cpu_max="max 100000") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "memory.max").write_text(f"{memory_max}\n")
    (folder / "memory.current").write_text(f"{current}\n")
    (folder / "cpu.max").write_text(f"{cpu_max}\n")
    return folder


def meminfo(path: Path, available_mb: int) -> Path:
    path.write_text(f"MemTotal: 134217728 kB\nMemAvailable: {available_mb * 1024} kB\n")
    return path


def test_a_slurm_task_gets_its_cpus_and_memory_not_the_nodes(tmp_path):
    """The tracker's case: 2 CPUs and 8 GB of a large node."""
    environ = {"SLURM_CPUS_PER_TASK": "2", "SLURM_MEM_PER_NODE": "8192"}
    chosen = jobs.choose(None, Limits.process_mb, environ, cgroup(tmp_path / "cg"), meminfo(tmp_path / "mi", 500_000))
    fits = (8192 - jobs.GRADER_MB) // Limits.process_mb
    assert chosen.count == min(2, fits, len(os.sched_getaffinity(0)))
    if len(os.sched_getaffinity(0)) >= 2:
        assert chosen.line().startswith("2 jobs: 2 CPUs allowed (SLURM_CPUS_PER_TASK)"), chosen.line()
    assert f"memory for {fits} sandboxes of {Limits.process_mb} MB (SLURM_MEM_PER_NODE)" in chosen.why
    per_cpu = jobs.choose(None, 1024, {"SLURM_CPUS_PER_TASK": "1", "SLURM_MEM_PER_CPU": "4096"},
                          cgroup(tmp_path / "cg2"), meminfo(tmp_path / "mi2", 500_000))
    assert per_cpu.count == 1 and "(SLURM_MEM_PER_CPU)" in per_cpu.why


def test_memory_limits_the_jobs_below_the_cpus(tmp_path):
    sandbox = 1000
    limit = (jobs.GRADER_MB + 2 * sandbox + 10) * 2**20  # room for two sandboxes, not three
    chosen = jobs.choose(None, sandbox, {}, cgroup(tmp_path / "cg", memory_max=str(limit)), meminfo(tmp_path / "mi", 10**6))
    assert "memory for 2 sandboxes of 1000 MB (cgroup memory.max)" in chosen.why
    assert chosen.count == min(2, jobs.cpus_allowed({}, tmp_path / "cg")[0])
    used = cgroup(tmp_path / "cg3", memory_max=str(limit), current=str(sandbox * 2**20))  # one sandbox's worth in use
    assert "memory for 1 sandbox of" in jobs.choose(None, sandbox, {}, used, meminfo(tmp_path / "mi", 10**6)).why
    low = jobs.choose(None, sandbox, {}, cgroup(tmp_path / "cg2"), meminfo(tmp_path / "mi2", 100))
    assert low.count == 1 and "(MemAvailable)" in low.why  # never none
    asked = jobs.choose(7, sandbox, {}, cgroup(tmp_path / "cg2"), meminfo(tmp_path / "mi2", 100))
    assert asked.count == 7 and asked.why.startswith("as asked")


def test_a_cpu_quota_counts(tmp_path):
    quota = cgroup(tmp_path / "cg", cpu_max="150000 100000")  # docker --cpus=1.5
    assert jobs.cpus_allowed({}, quota) == (1, "cgroup cpu.max")


@pytest.mark.skipif(not shutil.which("taskset"), reason="taskset (util-linux) is not installed")
def test_the_cpu_affinity_counts_not_the_machines_cores():
    """Under `taskset -c 0`, as a batch scheduler's cpuset pins a task: one CPU, whatever os.cpu_count() says."""
    done = subprocess.run(["taskset", "-c", "0", sys.executable, "-c",
                           "from runnable_book.grade import jobs; print(jobs.choose(None, 1536, {}).line())"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("1 job: 1 CPU allowed (CPU affinity)"), done.stdout


# ---- one real grading: a regrade after shards, through make -------------------------------------

@pytest.mark.netns  # (the grader's sandbox, for one student)
def test_a_regrade_after_sharded_grades_is_kept_by_the_merge_as_make_runs_them(tmp_path):
    """The tracker's case, with the refusal's advice followed: ONLY= with SHARD= refused, then
    ONLY= alone (OUT= where the shards were merged), then make grade-merge: the regrade stays."""
    folder, out = tmp_path / "class", tmp_path / "grades"
    folder.mkdir()
    for name in CLASS:
        write(folder / name, one_exercise_notebook(BOOK, FIRST.number, answers(BOOK)[FIRST.number]["right"], style="page"))
    sharded(out, runs.Run.start("shard", the_settings()))  # (as two machines left them: every answer failed)

    def make(target, **variables):
        return subprocess.run(make_command(target, **variables), cwd=ROOT, capture_output=True, text=True, timeout=900)

    assert make("grade-merge", OUT=str(out)).returncode == 0
    refused = make("grade", SUBMISSIONS=str(folder), ONLY="kowalski.ipynb", SHARD="1/2", OUT=str(out))
    assert refused.returncode == 2 and "leave SHARD= out" in refused.stderr
    advised = make("grade", SUBMISSIONS=str(folder), ONLY="kowalski.ipynb", OUT=str(out), JOBS="1")
    assert advised.returncode == 0, advised.stdout[-2000:] + advised.stderr[-2000:]
    assert f"ONLY= amends {out / 'results.json'} with its settings: DUE={DUE}:00" in advised.stdout
    assert "1 job: as asked" in advised.stdout
    assert "1 graded again in " in advised.stdout and f"{len(CLASS) - 1} kept" in advised.stdout
    assert verdicts(out)["kowalski.ipynb"] == "pass", advised.stdout
    merged = make("grade-merge", OUT=str(out))
    assert merged.returncode == 0, merged.stderr
    assert verdicts(out)["kowalski.ipynb"] == "pass", merged.stdout
    assert "graded there after the shards: kowalski.ipynb" in merged.stdout
    with open(out / "gradebook.csv", newline="", encoding="utf-8-sig") as handle:
        row = next(r for r in csv.DictReader(handle) if r["student"] == "kowalski.ipynb")
    assert float(row[f"ex{FIRST.number}"]) == FIRST.points

"""Where a command's CPU goes, by kind of process: Chromium's renderers, the kernels, the builds...

    with CpuByProcess() as sampled:     # runnable_book/bench/suite_stages.py samples each stage of `make test`
        subprocess.run(...)
    sampled.by_kind()                   # {"chromium renderer": 267.3, "Python, other (...)": 84.5, ...}

`make test` is CPU-bound on two cores, so its time is its CPU, and the machine's busy
CPU-seconds (/proc/stat) say how much but not whose. This reads every process's CPU time
(/proc/PID/stat) every ``interval`` seconds and charges each increase to the kind of process
that made it, named from its command line (``kind_of``). A process that starts and ends
between two readings is not seen: what it used is in ``unattributed`` (the machine's busy
CPU-seconds less what was charged). The sampling process is charged apart (``SAMPLER``).
"""

from __future__ import annotations

import collections
import os
import threading
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")
# The kernel's own threads have none, and so has a process that has ended but not been reaped.
NO_COMMAND_LINE = "no command line (the kernel's threads, ended processes)"
SAMPLER = "the process that samples (its reading of /proc, and whatever else it does)"


def busy_cpu_seconds() -> float:
    """CPU-seconds the whole machine has spent busy since boot (all cores; Linux's /proc/stat:
    every state but idle and I/O wait)."""
    with open("/proc/stat") as stat:
        ticks = [int(field) for field in stat.readline().split()[1:]]
    idle, iowait = ticks[3], ticks[4]
    return (sum(ticks) - idle - iowait) / TICKS


# (kind, test of the command line's words): the first that matches names the process.
# Chromium's child processes (zygote-forked) rewrite their command line as one string, so the
# words are split on spaces as well as NULs.
KINDS = [
    ("chromium renderer", lambda exe, words: _chromium(exe) and "--type=renderer" in words),
    ("chromium GPU", lambda exe, words: _chromium(exe) and "--type=gpu-process" in words),
    ("chromium network", lambda exe, words: _chromium(exe) and any("NetworkService" in w for w in words)),
    ("chromium, other processes", lambda exe, words: _chromium(exe) and any(w.startswith("--type=") for w in words)),
    ("chromium browser process", lambda exe, words: _chromium(exe)),
    ("Playwright's driver (Node)", lambda exe, words: exe == "node" and any("playwright" in w for w in words)),
    ("grader's sandboxes (Node, Pyodide)", lambda exe, words: exe == "node" and any(w.endswith("child.mjs") for w in words)),
    ("Node, other (Pyodide's snapshot, eslint, ...)", lambda exe, words: exe == "node"),
    ("Jupyter kernels", lambda exe, words: _python(exe) and "ipykernel_launcher" in " ".join(words)),
    ("JupyterLab", lambda exe, words: _python(exe) and any("jupyterlab" in w or "jupyter-lab" in w for w in words)),
    # pytest-xdist's workers are started by execnet as `python -u -c ...`: the tests' own code
    # (in-process builds, PDF parsing, ...).
    ("pytest workers", lambda exe, words: _python(exe) and words[1:3] == ["-u", "-c"]),
    ("pytest", lambda exe, words: _python(exe) and any(w.endswith("pytest") or w == "pytest" for w in words)),
    ("Python, other (builds, make's tools, ...)", lambda exe, words: _python(exe)),
]


def _chromium(exe: str) -> bool:
    return exe.startswith("chrom") or exe in ("headless_shell", "chrome")


def _python(exe: str) -> bool:
    return exe.startswith("python")


def kind_of(command_line: str) -> str:
    """The kind of process a command line (/proc/PID/cmdline: NUL-separated) belongs to."""
    words = command_line.replace("\0", " ").split()
    if not words:
        return NO_COMMAND_LINE
    exe = Path(words[0]).name
    for kind, matches in KINDS:
        if matches(exe, words):
            return kind
    return f"other: {exe}"


def _processes() -> dict[tuple[str, str], tuple[float, str]]:
    """{(pid, start time): (CPU-seconds so far, command line)} of every process now."""
    found = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{pid}/cmdline") as cmdline:
                command = cmdline.read()
        except OSError:  # (it ended meanwhile)
            continue
        # After the name: state is field 0, utime 11, stime 12, starttime 19 (proc(5), from 3).
        found[(pid, fields[19])] = ((int(fields[11]) + int(fields[12])) / TICKS, command)
    return found


class CpuByProcess:
    """Samples /proc in a thread from ``__enter__`` to ``__exit__``; then ``by_kind()``."""

    def __init__(self, interval: float = 0.2):
        self.interval = interval
        self.charged: collections.Counter[str] = collections.Counter()
        self.busy = 0.0
        self._stop = threading.Event()

    def _sample(self) -> None:
        own = str(os.getpid())  # (the process that samples: its reading of /proc is charged as such)
        last = _processes()
        while not self._stop.wait(self.interval):
            now = _processes()
            for key, (cpu, command) in now.items():
                before = last.get(key, (0.0, command))[0]
                if cpu > before:
                    self.charged[SAMPLER if key[0] == own else kind_of(command)] += cpu - before
            last = now

    def __enter__(self) -> CpuByProcess:
        self._busy_before = busy_cpu_seconds()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.busy = busy_cpu_seconds() - self._busy_before

    def by_kind(self) -> dict[str, float]:
        """CPU-seconds per kind, most first, and what no sampled process accounts for."""
        kinds = {kind: round(cpu, 1) for kind, cpu in self.charged.most_common()}
        kinds["unattributed"] = round(max(self.busy - sum(self.charged.values()), 0.0), 1)
        return kinds

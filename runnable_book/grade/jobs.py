"""How many students are graded at once (ours): the CPUs this process may use, and the memory it has.

A batch machine's node is not the job's: on a 128-core node, a Slurm task that asked for 2 CPUs
and 8 GB may use 2 of them (its CPU affinity, ``SLURM_CPUS_PER_TASK``) and 8 GB (its cgroup's
``memory.max``, ``SLURM_MEM_PER_NODE``); ``os.cpu_count()`` counts the whole node. So the default
is the fewest of:

* the CPUs allowed: ``os.sched_getaffinity(0)`` (``taskset``, Slurm's and containers' cpusets),
  the cgroup's CPU quota (``cpu.max``, as ``docker --cpus`` sets it) and ``SLURM_CPUS_PER_TASK``;
* the sandboxes the memory holds: the least of the cgroup's ``memory.max`` (less what the
  cgroup already uses), the kernel's ``MemAvailable``, and Slurm's ``SLURM_MEM_PER_NODE`` or
  ``SLURM_MEM_PER_CPU`` (times the CPUs), divided by what one sandbox may take.

What one sandbox may take is its process cap (``--process-mb``, ``Limits.process_mb``), not the
few hundred MB a typical notebook peaks at: the sandbox is killed past the cap, so jobs x cap
never exceeds the memory, while a class's memory-hungry notebooks (they exist: they reach the
cap) graded side by side on a typical-peak budget would push the job past its allocation, where
the scheduler kills the whole grading, not one student's sandbox.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

CGROUP = Path("/sys/fs/cgroup")  # cgroup v2, as this process sees it (a container's or a job's own)
MEMINFO = Path("/proc/meminfo")
GRADER_MB = 256  # the grader's own Python (the book, the judge, the outputs), beside the sandboxes


@dataclass(frozen=True)
class Jobs:
    count: int
    why: str  # "2 CPUs allowed (SLURM_CPUS_PER_TASK), memory for 5 sandboxes of 1536 MB (cgroup memory.max)"

    def line(self) -> str:
        return f"{self.count} {'job' if self.count == 1 else 'jobs'}: {self.why}"


def cpus_allowed(environ=os.environ, cgroup: Path = CGROUP) -> tuple[int, str]:
    """(CPUs, where that number comes from)."""
    try:
        found = [(len(os.sched_getaffinity(0)), "CPU affinity")]
    except AttributeError:  # (not Linux)
        found = [(os.cpu_count() or 1, "cores")]
    try:
        quota, period = (cgroup / "cpu.max").read_text().split()[:2]
        if quota != "max":
            found.append((max(1, int(int(quota) // int(period))), "cgroup cpu.max"))
    except (OSError, ValueError):
        pass
    slurm = _positive(environ.get("SLURM_CPUS_PER_TASK"))
    if slurm:
        found.append((slurm, "SLURM_CPUS_PER_TASK"))
    return min(reversed(found), key=lambda pair: pair[0])  # (a tie: the most specific, the last, is named)


def memory_mb(cpus: int, environ=os.environ, cgroup: Path = CGROUP, meminfo: Path = MEMINFO) -> tuple[int, str] | None:
    """(MB this process may still use, where that number comes from); None when nothing says."""
    found = []
    try:
        limit = (cgroup / "memory.max").read_text().strip()
        if limit != "max":
            used = int((cgroup / "memory.current").read_text().strip() or 0) if (cgroup / "memory.current").exists() else 0
            found.append(((int(limit) - used) // 2**20, "cgroup memory.max"))
    except (OSError, ValueError):
        pass
    try:
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                found.append((int(line.split()[1]) // 1024, "MemAvailable"))
    except (OSError, ValueError, IndexError):
        pass
    per_node, per_cpu = _positive(environ.get("SLURM_MEM_PER_NODE")), _positive(environ.get("SLURM_MEM_PER_CPU"))
    if per_node:  # (Slurm gives both in MB)
        found.append((per_node, "SLURM_MEM_PER_NODE"))
    elif per_cpu:
        found.append((per_cpu * cpus, "SLURM_MEM_PER_CPU"))
    return min(reversed(found), key=lambda pair: pair[0]) if found else None


def choose(asked: int | None, sandbox_mb: int, environ=os.environ, cgroup: Path = CGROUP,
           meminfo: Path = MEMINFO) -> Jobs:
    """``--jobs``/``JOBS=`` as asked, else the fewest the CPUs and the memory allow (at least one)."""
    cpus, cpus_from = cpus_allowed(environ, cgroup)
    memory = memory_mb(cpus, environ, cgroup, meminfo)
    fits = max(1, (memory[0] - GRADER_MB) // sandbox_mb) if memory else None
    room = (f"memory for {fits} {'sandbox' if fits == 1 else 'sandboxes'} of {sandbox_mb} MB ({memory[1]})"
            if memory else "memory unknown")
    if asked:
        return Jobs(asked, f"as asked (--jobs/JOBS=); {cpus} {'CPU' if cpus == 1 else 'CPUs'} allowed, {room}")
    count = min(cpus, fits) if fits else cpus
    return Jobs(count, f"{cpus} {'CPU' if cpus == 1 else 'CPUs'} allowed ({cpus_from}), {room}")


def _positive(text) -> int | None:
    """A Slurm variable's number (``SLURM_CPUS_PER_TASK=2``); None if unset or not a positive whole number."""
    try:
        value = int(str(text).strip())
    except (TypeError, ValueError):
        return None
    return value if value > 0 else None

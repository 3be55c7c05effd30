"""What a sandbox's processes use, read from /proc (ours): memory, and CPU time.

The grader's limits are on what the student's code *uses*, not on how long the machine took:
a cell's limit is CPU seconds, so the same notebook gets the same verdict on a quiet machine
and on one running other work (docs/grading.md, "The sandbox"). The sandbox is a small tree
of processes (``unshare``, the jail's shell, Node and Node's own threads); both readings are
over the whole tree as the host sees it.
"""

from __future__ import annotations

import os

TICKS = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


def descendants(pid: int) -> list[int]:
    """``pid`` and every process below it, alive now."""
    found, queue = [], [pid]
    while queue:
        current = queue.pop()
        found.append(current)
        try:
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as handle:
                    queue.extend(int(p) for p in handle.read().split())
        except OSError:
            continue
    return found


def rss_mb(pid: int) -> float:
    """The tree's resident memory, in MB."""
    total = 0
    for each in descendants(pid):
        try:
            with open(f"/proc/{each}/statm") as handle:
                total += int(handle.read().split()[1])
        except (OSError, IndexError, ValueError):
            continue
    return total * PAGE / 2**20


def cpu_seconds(pid: int) -> float:
    """The tree's CPU time so far, user and system, all threads: each live process's own, and
    that of the children it has reaped (so a process that ended inside the tree still counts)."""
    ticks = 0
    for each in descendants(pid):
        try:
            with open(f"/proc/{each}/stat") as handle:
                # Fields after the command's name (which may hold spaces and parentheses):
                # utime, stime, cutime, cstime are fields 14-17 of the line, 12-15 here.
                fields = handle.read().rsplit(")", 1)[1].split()
            ticks += sum(int(v) for v in fields[11:15])
        except (OSError, IndexError, ValueError):
            continue
    return ticks / TICKS

"""One child process of the sandbox, and the grader's conversation with it (ours).

runnable_book/grade/sandbox.py builds the sandbox and starts a child per run of a notebook's steps
(a fresh one after a step that had to be stopped); :class:`Child` feeds it the job, reads its
messages (box/child.mjs says which), drives a ``calls`` step's calls (runnable_book/grade/hidden.py),
and meters it: its memory and its CPU time, every 50 ms, against the limits, killing its
process group past one. What a step gave is a result (a dict of harness.py's) or a
:class:`Failure`.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import signal
import time
import typing
from dataclasses import dataclass, field

from runnable_book.grade import process_meter

if typing.TYPE_CHECKING:
    from runnable_book.grade.sandbox import Sandbox

# Time is CPU time of the sandbox's processes (runnable_book/grade/process_meter.py), never the
# clock: a machine busy with other work slows a sandbox down but does not make it use more CPU,
# so it changes no verdict. The clock only backs that up, for code that waits instead of
# computing (``await asyncio.sleep``, ``Atomics.wait``): a step may take WALL_FACTOR times its CPU
# limit in wall-clock time (a step that gets a tenth of a core is on a machine loaded tenfold), and
# a step whose processes use no CPU at all for as long as its CPU limit (IDLE_SECONDS at most) is
# waiting on nothing that will come: a process that can run gets some CPU every second, however
# loaded the machine.
BOOT_SECONDS = 60  # CPU for the grader's own work in a child: Python's start, loading packages
WALL_FACTOR = 10
IDLE_SECONDS = 20
LINE_LIMIT = 64 * 2**20  # one message from the child (a check's record)


@dataclass
class Failure:
    """A step that did not end by itself: ``timeout``, ``memory`` or ``crashed`` (with why)."""

    kind: str
    why: str


@dataclass
class Run:
    """What one submission's sandbox gave: a result (dict) or a Failure per step, and what it cost."""

    results: dict[int, object] = field(default_factory=dict)
    seconds: float = 0.0  # wall-clock time, all children
    cpu_seconds: float = 0.0  # CPU time, all children (the grader's own work in them included)
    charged_seconds: float = 0.0  # CPU time of the student's steps, each counted once: the notebook's limit
    starts: int = 0
    peak_mb: float = 0.0  # the largest the sandbox's processes were, together
    notes: list[str] = field(default_factory=list)
    charged_steps: set = field(default_factory=set)


class CallDriver(typing.Protocol):
    """Who decides, outside the sandbox, which calls a ``calls`` step makes (runnable_book/grade/hidden.py):
    given the calls answered so far, the next ones (``{"slot", "args", "kwargs"}``, encoded), or None."""

    def next_calls(self, entries: list) -> list | None: ...


FORBIDDEN = {"ChildProcess": "start a process", "FileSystemRead": "read a file outside the sandbox",
             "FileSystemWrite": "write a file", "WorkerThreads": "start a worker thread", "WASI": "use WASI",
             "Addon": "load a native addon"}


# The line of Node's last words that says what went wrong: "RangeError: ...", "Error [ERR_X]: ...".
ERROR_LINE = re.compile(r"^\s*(?:Uncaught )?[A-Za-z]*(?:Error|Exception)\b.*")


def crash_reason(stderr: str, returncode: int | None = None) -> str:
    """Why a sandbox's process ended by itself, in a sentence: what Node printed, and how it ended
    (its exit status, or the signal that ended it)."""
    denied = re.search(r"permission: '(\w+)'", stderr)
    if "ERR_ACCESS_DENIED" in stderr:
        what = FORBIDDEN.get(denied.group(1) if denied else "", "do something the sandbox forbids")
        return f"its code tried to {what}; the sandbox refused, and Python stopped"
    if "out of memory" in stderr.lower() or "allocation failed" in stderr.lower():
        return "it ran out of memory"
    how = ""
    if returncode is not None and returncode < 0:
        try:
            how = f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            how = f"killed by signal {-returncode}"
    elif returncode:
        how = f"exit status {returncode}"
    lines = [line.strip() for line in stderr.strip().splitlines() if line.strip() and not line.startswith("Node.js v")]
    said = next((line for line in lines if ERROR_LINE.match(line)), None)
    if said is None:  # else the last line that says something in words (not a brace, not a stack frame)
        said = next((line for line in reversed(lines) if re.search(r"[A-Za-z]{3}", line)
                     and not line.startswith("at ")), None)
    text = "the sandbox's process ended" + (f" ({how})" if how else "")
    return text + (f": {said[:300]}" if said else "")


def _cpu_limit_text(seconds: float, kind: str) -> str:
    return f"used more than {seconds:g} s of CPU (the limit for a {kind})"


class Child:
    """One child process and the conversation with it (child.mjs's messages), metered: the step
    running now, the CPU it used, and the limits that stop it."""

    def __init__(self, sandbox: Sandbox, library: dict, job_steps: list[dict], run: Run, drivers: dict):
        self.sandbox, self.limits, self.run, self.drivers = sandbox, sandbox.limits, run, drivers
        self.nonce = secrets.token_hex(16)
        self.job = json.dumps({"nonce": self.nonce, "library": library, "steps": job_steps}).encode() + b"\n"
        self.expected = iter(job_steps)
        self.current: dict | None = None  # the step running now (None: the grader's own work, or between steps)
        self.ready = False
        self.stopped: Failure | None = None  # why the watcher killed the child
        self.memory_exceeded = False
        self.entries: list = []  # a calls step's answers so far
        self.cpu = 0.0  # the tree's CPU seconds at the last reading

    # -- the phase's limits -------------------------------------------------------------
    def _begin_phase(self):
        self.phase_cpu = self.cpu
        self.phase_wall = self.last_progress = time.monotonic()

    def _limit_reached(self, now: float) -> Failure | None:
        spent = self.cpu - self.phase_cpu
        step = self.current
        if step is None:  # Python's start, loading packages: the grader's own work
            if spent > BOOT_SECONDS or now - self.phase_wall > BOOT_SECONDS * WALL_FACTOR:
                return Failure("boot", f"the sandbox's Python did not start within {BOOT_SECONDS} s of CPU")
            limit, what = BOOT_SECONDS, "the sandbox's own start"
        else:
            limit = step.get("seconds", self.limits.step_seconds)
            what = {"cell": "cell", "check": "check", "calls": "check's hidden cases"}.get(step["kind"], "step")
            if spent > limit:
                return Failure("timeout", _cpu_limit_text(limit, what))
            if step.get("charged") and step["index"] not in self.run.charged_steps \
                    and self.run.charged_seconds + spent > self.limits.notebook_seconds:
                return Failure("timeout", f"the notebook's {self.limits.notebook_seconds:g} s of CPU were used up "
                                          f"while this {what} ran")
            if now - self.phase_wall > limit * WALL_FACTOR:
                return Failure("timeout", f"still running after {limit * WALL_FACTOR:g} s of wall-clock time, "
                                          f"having used {spent:.0f} s of CPU: it waits more than it computes")
        idle = IDLE_SECONDS if step is None else min(IDLE_SECONDS, max(limit, 1.0))
        if now - self.last_progress > idle:
            return Failure("timeout" if step is not None else "boot",
                           f"waited {idle:g} s using no CPU at all, for something that does not come "
                           f"({'in this ' + what if step is not None else 'before any step'})")
        return None

    async def _watch(self, process):
        """Every 50 ms: memory (past the process cap: killed) and CPU (past a limit: killed). A
        fault of its own kills the child too: nothing is left running unwatched."""
        try:
            await self._metered(process)
        except Exception as error:
            self.stopped = Failure("crashed", f"the grader could not watch the sandbox ({type(error).__name__}: {error})")
            kill_tree(process)

    async def _metered(self, process):
        while process.returncode is None:
            now = time.monotonic()
            used = process_meter.rss_mb(process.pid)
            self.run.peak_mb = max(self.run.peak_mb, used)
            cpu = process_meter.cpu_seconds(process.pid)
            if cpu > self.cpu + 0.005:
                self.last_progress = now
            self.cpu = max(self.cpu, cpu)
            if used > self.limits.process_mb:
                self.memory_exceeded = True
                kill_tree(process)
                return
            failure = self._limit_reached(now)
            if failure is not None:
                self.stopped = failure
                kill_tree(process)
                return
            await asyncio.sleep(0.05)

    def _charge(self, step: dict):
        if step.get("charged") and step["index"] not in self.run.charged_steps:
            self.run.charged_steps.add(step["index"])
            self.run.charged_seconds += max(0.0, self.cpu - self.phase_cpu)

    # -- the conversation -----------------------------------------------------------------
    async def _send(self, process, message: dict):
        try:
            process.stdin.write(json.dumps({"nonce": self.nonce, **message}).encode() + b"\n")
            await process.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            pass

    async def _next_calls(self, process, step: dict, new_entries):
        """A calls step: the answers so far to its driver, and its next calls to the child."""
        if isinstance(new_entries, list):
            self.entries.extend(e for e in new_entries if isinstance(e, dict))
        driver = self.drivers.get(step["index"])
        calls = driver.next_calls(list(self.entries)) if driver is not None else None
        self.last_progress = time.monotonic()  # the child waited on us, not on itself
        await self._send(process, {"calls": calls} if calls else {"done": True})

    async def converse(self):
        """Returns None (all done), "boot" (did not start), or the index of the step it was
        stopped in (recorded in run.results as a Failure)."""
        process = await asyncio.create_subprocess_exec(
            *self.sandbox.command(), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=self.sandbox.environment(), start_new_session=True, limit=LINE_LIMIT, cwd="/")
        stderr_tail = bytearray()
        self.cpu = 0.0
        self._begin_phase()

        async def drain_stderr():
            while chunk := await process.stderr.read(65536):
                stderr_tail.extend(chunk)
                del stderr_tail[:-4000]

        await self._send_job(process)
        tasks = [asyncio.create_task(drain_stderr()), asyncio.create_task(self._watch(process))]
        try:
            reading = None
            while True:
                reading = reading or asyncio.ensure_future(process.stdout.readline())
                done, _ = await asyncio.wait([reading, tasks[1]], return_when=asyncio.FIRST_COMPLETED)
                if reading not in done:  # the watcher ended (the child too, or a fault): never wait unwatched
                    kill_tree(process)
                    continue
                try:
                    line = reading.result()
                except (ValueError, asyncio.LimitOverrunError):
                    line = b"{}"  # a line past the limit: not a message of ours
                reading = None
                if not line:  # the child ended (by itself, or killed by the watcher)
                    return await self._ended(process, stderr_tail)
                try:
                    message = json.loads(line)
                    assert isinstance(message, dict) and message.get("nonce") == self.nonce
                except (ValueError, AssertionError):
                    continue  # not ours (a student's write to stdout): ignored
                outcome = await self._on_message(process, message)
                if outcome != "go on":
                    return outcome
        finally:
            kill_tree(process)
            for task in tasks:
                task.cancel()
            try:
                await asyncio.wait_for(process.wait(), 10)
            except asyncio.TimeoutError:
                pass
            self.run.cpu_seconds += self.cpu

    async def _send_job(self, process):
        try:
            process.stdin.write(self.job)
            await process.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            pass

    async def _on_message(self, process, message: dict):
        kind = message.get("type")
        step = self.current
        if kind == "ready":
            self.ready = True
            self._begin_phase()
        elif kind == "load":
            self._begin_phase()  # loading packages: the grader's own work, under BOOT_SECONDS
        elif kind == "begin":
            step = next(self.expected, None)
            if step is None or message.get("step") != step["index"]:
                return "go on"
            self.current, self.entries = step, []
            self._begin_phase()
        elif kind in ("serving", "answers") and step is not None and message.get("step") == step["index"] \
                and step["kind"] == "calls":
            if kind == "serving":
                try:
                    ready = json.loads(message.get("reply") or "null")
                except ValueError:
                    ready = None
                if not (isinstance(ready, dict) and ready.get("ok")):
                    await self._send(process, {"done": True})
                    return "go on"
            await self._next_calls(process, step, message.get("answers") if kind == "answers" else [])
        elif kind == "end" and step is not None and message.get("step") == step["index"]:
            self.cpu = max(self.cpu, process_meter.cpu_seconds(process.pid))
            self._charge(step)
            if step["index"] not in self.run.results:
                try:
                    self.run.results[step["index"]] = json.loads(message.get("result") or "null")
                except ValueError:
                    self.run.results[step["index"]] = Failure("crashed", "its result could not be read")
            self.current = None
            self._begin_phase()
        elif kind == "done":
            return None
        return "go on"

    async def _ended(self, process, stderr_tail):
        try:
            await asyncio.wait_for(process.wait(), 2)
        except asyncio.TimeoutError:
            pass
        await asyncio.sleep(0.05)
        if self.memory_exceeded:
            failure = Failure("memory", f"used more than {self.limits.process_mb} MB (the sandbox's limit)")
        elif self.stopped is not None:
            failure = self.stopped
        else:
            failure = Failure("crashed", crash_reason(bytes(stderr_tail).decode("utf-8", "replace"), process.returncode))
        if self.current is None and not self.ready or failure.kind == "boot":
            self.run.notes.append(failure.why)
            return "boot"
        if self.current is None:
            self.current = next(self.expected, None)  # ended between two steps: charge the next
            if self.current is None:
                return None
        else:
            self._charge(self.current)
        self.run.results[self.current["index"]] = failure
        return self.current["index"]


def kill_tree(process):
    """The child's whole process group, at once."""
    if process.returncode is None:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

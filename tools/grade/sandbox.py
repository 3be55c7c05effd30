"""Where a submission's code runs (ours): Pyodide in Node, boxed in by the operating system.

One child process per submission (and a fresh one after each step that had to be stopped):
Node runs the page's own Python (Pyodide 0.27.7, the files ``make assets`` serves with the
book) on the student's cells, then calls their functions as the grader's check asks,
recording the calls (box/child.mjs, box/harness.py). The layers around it, outermost first
(docs/grading.md, has the threat model and why this design):

1. **Namespaces** (``unshare``): a network namespace with no interface up (no network), a
   mount namespace whose root is a tmpfs holding only the system's programs and libraries,
   read-only, and the box (box/jail.sh: no repository, no submissions, no home, no
   _build/grades), a PID namespace (it sees and signals only itself), IPC and UTS. As root:
   ``unshare`` directly; otherwise inside a user namespace (``--user --map-root-user``).
2. **Identity**: no capabilities (empty bounding set, no_new_privs); as root, also the
   ``nobody`` user, who can write nowhere in that root.
3. **Node's permission model**: the process may read the box and nothing else, write no file,
   start no process or worker thread, load no native addon.
4. **WebAssembly**: Python itself makes no system call; it reaches the host only through
   JavaScript (``import js``), which meets layers 1-3.
5. **Limits, enforced from outside**: each step (a cell, an exercise's check) and the whole
   notebook have a wall-clock limit, after which the grader kills the process group (a
   fresh child then grades what is left); Python's heap is capped (WebAssembly memory pages:
   past it, ``MemoryError``), and the grader kills a child whose memory passes a second,
   larger cap (what JavaScript itself allocates).

Where namespaces are not available (a program missing, user namespaces refused) the grader
grades nothing and says why (tools/grade/isolation.py); only ``UNISOLATED=1`` grades there,
with layers 2-5 (no network isolation, no filesystem jail), and says so everywhere.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from tools.grade.isolation import NotIsolated, probe
from tools.repository import ROOT

BOX_CODE = Path(__file__).resolve().parent / "box"
STATIC = ROOT / "_build" / "static"
PYODIDE = STATIC / "pyodide"
SNAPSHOT = STATIC / "runner" / "python-snapshot.bin.gz"
FIGURES = STATIC / "runner" / "first-figure.zip"
BOOT_SECONDS = 60  # Python's start, before any student code: generous for a loaded machine
LINE_LIMIT = 64 * 2**20  # one message from the child (a check's record)
NODE = shutil.which("node") or "node"
# V8's own flags for each child: none. Pyodide's WebAssembly is compiled by V8's baseline
# compiler, then, on background threads, again by its optimising one for each function that
# runs long enough. Delaying that (--wasm-tiering-budget at 10 and 30 times its default)
# changed a 40-submission class's CPU-seconds by less than the machine's spread between runs,
# both ways (`make bench-grade` prints them with these flags), so V8 decides.
V8_FLAGS: list[str] = []


@dataclass(frozen=True)
class Limits:
    step_seconds: float = 10.0  # each cell, and each exercise's check
    notebook_seconds: float = 120.0  # everything one submission's sandbox does, restarts included
    python_mb: int = 512  # Python's heap (WebAssembly memory): MemoryError past it
    process_mb: int = 1536  # the whole sandbox process (Node, Pyodide, Python's heap): killed past it


def node_permission_flag() -> str:
    """Node's permission model: ``--permission`` (Node 22.13+), ``--experimental-permission`` (20)."""
    for flag in ("--permission", "--experimental-permission"):
        done = subprocess.run([NODE, flag, "--no-warnings", "-e", "0"], capture_output=True, timeout=30)
        if done.returncode == 0:
            return flag
    raise RuntimeError("this Node has no permission model (Node 20 or later is needed: see README.md)")


def prepare_box(out: Path) -> Path:
    """The folder the sandbox sees as /box: Pyodide's files, Python's snapshot, the figure cache,
    child.mjs and the harness. Made fresh in ``out`` (inside _build/grades) for each run."""
    missing = [p for p in (PYODIDE / "pyodide.asm.wasm", SNAPSHOT) if not p.exists()]
    if missing:
        raise RuntimeError(f"{missing[0]} is missing: run `make assets` (make grade does)")
    box = out / ".box"
    if box.exists():
        shutil.rmtree(box)
    (box / "code").mkdir(parents=True)
    shutil.copytree(PYODIDE, box / "pyodide")
    shutil.copy2(SNAPSHOT, box / "python-snapshot.bin.gz")
    if FIGURES.exists():
        shutil.copy2(FIGURES, box / "first-figure.zip")
    for name in ("child.mjs", "harness.py", "wire.py", "jail.sh"):
        shutil.copy2(BOX_CODE / name, box / "code" / name)
    for path in [box, *box.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return box


def _child_env() -> dict:
    """The child's whole environment: nothing of the grader's (its variables may hold secrets)."""
    return {"PATH": f"{Path(NODE).parent}:/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/nonexistent"}


@dataclass
class Failure:
    """A step that did not end by itself: ``timeout``, ``memory`` or ``crashed`` (with why)."""

    kind: str
    why: str


@dataclass
class Run:
    """What one submission's sandbox gave: a result (dict) or a Failure per step, and timings."""

    results: dict[int, object] = field(default_factory=dict)
    seconds: float = 0.0
    starts: int = 0
    peak_mb: float = 0.0  # the largest the sandbox's processes were, together
    notes: list[str] = field(default_factory=list)


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


def _descendants(pid: int) -> list[int]:
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


def _rss_mb(pid: int) -> float:
    total = 0
    for each in _descendants(pid):
        try:
            with open(f"/proc/{each}/statm") as handle:
                total += int(handle.read().split()[1])
        except (OSError, IndexError, ValueError):
            continue
    return total * os.sysconf("SC_PAGE_SIZE") / 2**20


class Sandbox:
    def __init__(self, out: Path, limits: Limits = Limits(), unisolated: bool = False):
        """Raises :class:`~tools.grade.isolation.NotIsolated` where the namespaces cannot be had,
        unless ``unisolated`` (the instructor's explicit opt-out)."""
        self.limits = limits
        self.box = prepare_box(out)
        try:
            self.isolation = probe(self.box, NODE, _child_env(), unisolated)
        except NotIsolated:
            shutil.rmtree(self.box, ignore_errors=True)
            raise
        self.permission = node_permission_flag()

    def command(self) -> list[str]:
        inside = "/box/" if self.isolation.prefix else f"{self.box}/"
        node = [NODE, self.permission, f"--allow-fs-read={inside}", "--no-warnings", *V8_FLAGS,
                f"--wasm-max-mem-pages={self.limits.python_mb * 16}", "--max-old-space-size=512",
                f"{inside}code/child.mjs", inside]
        return [*self.isolation.prefix, *node]

    async def run(self, library: dict, steps: list[dict]) -> Run:
        """Run ``steps`` (cells and checks, in order) in as many children as it takes."""
        run = Run()
        started = time.monotonic()
        deadline = started + self.limits.notebook_seconds
        skip: set[int] = set()
        boot_failures = 0
        while True:
            pending = [s for s in steps if s["index"] not in run.results and s["index"] not in skip]
            if not pending:
                break
            if time.monotonic() >= deadline:
                for s in pending:
                    run.results[s["index"]] = Failure("timeout", f"the notebook's {self.limits.notebook_seconds:g} s "
                                                                 "were used up before this step ran")
                break
            # Cells run again in a fresh child (their effects are the state later steps need),
            # except those that had to be stopped; checks already recorded do not.
            job_steps = [s for s in steps if s["index"] not in skip
                         and (s["kind"] == "cell" or s["index"] not in run.results)]
            run.starts += 1
            outcome = await self._child(library, job_steps, deadline, run)
            if outcome == "boot":
                boot_failures += 1
                if boot_failures >= 2:
                    why = run.notes[-1] if run.notes else "the sandbox did not start"
                    for s in pending:
                        run.results[s["index"]] = Failure("crashed", why)
                    break
            elif isinstance(outcome, int):
                skip.add(outcome)
        run.seconds = time.monotonic() - started
        return run

    async def _child(self, library, job_steps, deadline, run: Run):
        """One child: returns None (all done), "boot" (did not start), or the index of the step
        it was stopped in (recorded in run.results as a Failure)."""
        nonce = secrets.token_hex(16)
        job = json.dumps({"nonce": nonce, "library": library, "steps": job_steps}).encode()
        process = await asyncio.create_subprocess_exec(
            *self.command(), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=_child_env(), start_new_session=True, limit=LINE_LIMIT, cwd="/")
        stderr_tail = bytearray()
        memory_exceeded = asyncio.Event()

        async def feed():
            try:
                process.stdin.write(job)
                await process.stdin.drain()
                process.stdin.close()
            except (BrokenPipeError, ConnectionResetError):
                pass

        async def drain_stderr():
            while chunk := await process.stderr.read(65536):
                stderr_tail.extend(chunk)
                del stderr_tail[:-4000]

        async def watch_memory():
            while process.returncode is None:
                used = _rss_mb(process.pid)
                run.peak_mb = max(run.peak_mb, used)
                if used > self.limits.process_mb:
                    memory_exceeded.set()
                    self._kill(process)
                    return
                await asyncio.sleep(0.05)

        tasks = [asyncio.create_task(feed()), asyncio.create_task(drain_stderr()), asyncio.create_task(watch_memory())]
        expected = iter(job_steps)
        current = None  # the step running now
        ready = False
        step_deadline = min(time.monotonic() + BOOT_SECONDS, deadline)
        result = None
        try:
            while True:
                try:
                    line = await asyncio.wait_for(process.stdout.readline(), max(0.01, step_deadline - time.monotonic()))
                except asyncio.TimeoutError:
                    if current is None:
                        run.notes.append(f"the sandbox did not start in {BOOT_SECONDS} s")
                        result = "boot"
                    else:
                        if step_deadline >= deadline:
                            why = f"still running when the notebook's {self.limits.notebook_seconds:g} s were up"
                        else:
                            seconds = current.get("seconds", self.limits.step_seconds)
                            why = f"still running after {seconds:g} s (the limit for a {current['kind']})"
                        run.results[current["index"]] = Failure("timeout", why)
                        result = current["index"]
                    return result
                except (ValueError, asyncio.LimitOverrunError):
                    line = b"{}"  # a line past the limit: not a message of ours
                if not line:  # the child ended
                    try:
                        await asyncio.wait_for(process.wait(), 2)
                    except asyncio.TimeoutError:
                        pass
                    await asyncio.sleep(0.05)
                    if memory_exceeded.is_set():
                        failure = Failure("memory", f"used more than {self.limits.process_mb} MB (the sandbox's limit)")
                    else:
                        failure = Failure("crashed", crash_reason(bytes(stderr_tail).decode("utf-8", "replace"),
                                                                  process.returncode))
                    if current is None and not ready:
                        run.notes.append(failure.why)
                        return "boot"
                    if current is None:
                        current = next(expected, None)  # ended between two steps: charge the next
                        if current is None:
                            return None
                    run.results[current["index"]] = failure
                    return current["index"]
                try:
                    message = json.loads(line)
                    assert isinstance(message, dict) and message.get("nonce") == nonce
                except (ValueError, AssertionError):
                    continue  # not ours (a student's write to stdout): ignored
                kind = message.get("type")
                if kind == "ready":
                    ready = True
                    step_deadline = deadline
                elif kind == "load":
                    step_deadline = min(time.monotonic() + BOOT_SECONDS, deadline)
                elif kind == "begin":
                    current = next(expected, None)
                    if current is None or message.get("step") != current["index"]:
                        continue
                    step_deadline = min(time.monotonic() + current.get("seconds", self.limits.step_seconds), deadline)
                elif kind == "end" and current is not None and message.get("step") == current["index"]:
                    if current["index"] not in run.results:
                        try:
                            run.results[current["index"]] = json.loads(message.get("result") or "null")
                        except ValueError:
                            run.results[current["index"]] = Failure("crashed", "its result could not be read")
                    current = None
                    step_deadline = deadline
                elif kind == "done":
                    return None
        finally:
            self._kill(process)
            for task in tasks:
                task.cancel()
            try:
                await asyncio.wait_for(process.wait(), 10)
            except asyncio.TimeoutError:
                pass

    @staticmethod
    def _kill(process):
        if process.returncode is None:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

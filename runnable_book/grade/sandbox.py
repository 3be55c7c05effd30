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
5. **Limits, enforced from outside** (runnable_book/grade/conversation.py): each step (a cell, a check,
   a check's hidden cases) and the student's steps together have a limit in CPU time, the
   clock only backing it up, after which the grader kills the process group (a fresh child
   then grades what is left); Python's heap is capped (WebAssembly memory pages:
   past it, ``MemoryError``), and the grader kills a child whose memory passes a second,
   larger cap (what JavaScript itself allocates).

Where namespaces are not available (a program missing, user namespaces refused) the grader
grades nothing and says why (runnable_book/grade/isolation.py); only ``UNISOLATED=1`` grades there,
with layers 2-5 (no network isolation, no filesystem jail), and says so everywhere.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

# (Failure and Run are what a run gives: the rest of the grader imports them from here)
from runnable_book.common import built_files
from runnable_book.grade.conversation import CallDriver, Child, Failure, Run  # noqa: F401
from runnable_book.grade.isolation import NotIsolated, probe

BOX_CODE = Path(__file__).resolve().parent / "box"
STATIC = built_files.BUILT_STATIC
PYODIDE = STATIC / "pyodide"
SNAPSHOT = STATIC / built_files.SNAPSHOT
FIGURES = STATIC / built_files.FIRST_FIGURE
NODE = shutil.which("node") or "node"
# V8's own flags for each child: none. Pyodide's WebAssembly is compiled by V8's baseline
# compiler, then, on background threads, again by its optimising one for each function that
# runs long enough. Delaying that (--wasm-tiering-budget at 10 and 30 times its default)
# changed a 40-submission class's CPU-seconds by less than the machine's spread between runs,
# both ways (`make bench-grade` prints them with these flags), so V8 decides.
V8_FLAGS: list[str] = []


@dataclass(frozen=True)
class Limits:
    step_seconds: float = 10.0  # CPU seconds: each cell of the student's, each check, each check's hidden cases
    notebook_seconds: float = 120.0  # CPU seconds of all of the student's steps (the book's own cells are not charged)
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
    shutil.copy2(SNAPSHOT, box / "python-snapshot.bin.gz")  # (child.mjs reads it by this name)
    if FIGURES.exists():
        shutil.copy2(FIGURES, box / "first-figure.zip")
    for name in ("child.mjs", "harness.py", "wire.py", "call_forms.py", "jail.sh"):
        shutil.copy2(BOX_CODE / name, box / "code" / name)
    for path in [box, *box.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return box


def _child_env() -> dict:
    """The child's whole environment: nothing of the grader's (its variables may hold secrets)."""
    return {"PATH": f"{Path(NODE).parent}:/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/nonexistent"}


class Sandbox:
    def __init__(self, out: Path, limits: Limits = Limits(), unisolated: bool = False):
        """Raises :class:`~runnable_book.grade.isolation.NotIsolated` where the namespaces cannot be had,
        unless ``unisolated`` (the instructor's explicit opt-out)."""
        self.limits = limits
        self.box = prepare_box(out)
        try:
            self.isolation = probe(self.box, NODE, _child_env(), unisolated)
        except NotIsolated:
            shutil.rmtree(self.box, ignore_errors=True)
            raise
        self.permission = node_permission_flag()

    @staticmethod
    def environment() -> dict:
        return _child_env()

    def command(self) -> list[str]:
        inside = "/box/" if self.isolation.prefix else f"{self.box}/"
        node = [NODE, self.permission, f"--allow-fs-read={inside}", "--no-warnings", *V8_FLAGS,
                f"--wasm-max-mem-pages={self.limits.python_mb * 16}", "--max-old-space-size=512",
                f"{inside}code/child.mjs", inside]
        return [*self.isolation.prefix, *node]

    async def run(self, library: dict, steps: list[dict], drivers: dict[int, CallDriver] | None = None) -> Run:
        """Run ``steps`` (cells, checks, then the calls steps that ``drivers`` drive, in order) in
        as many children as it takes. A step with ``charged`` is the student's: its CPU time
        counts towards the notebook's limit, once (a cell run again in a fresh child is not
        charged twice)."""
        run = Run()
        started = time.monotonic()
        skip: set[int] = set()
        boot_failures = 0
        while True:
            pending = [s for s in steps if s["index"] not in run.results and s["index"] not in skip]
            if not pending:
                break
            if run.charged_seconds >= self.limits.notebook_seconds:
                for s in pending:
                    run.results[s["index"]] = Failure("timeout", f"the notebook's {self.limits.notebook_seconds:g} s "
                                                                 "of CPU were used up before this step ran")
                break
            # Cells run again in a fresh child (their effects are the state later steps need),
            # except those that had to be stopped; checks already recorded do not.
            job_steps = [s for s in steps if s["index"] not in skip
                         and (s["kind"] == "cell" or s["index"] not in run.results)]
            run.starts += 1
            outcome = await Child(self, library, job_steps, run, drivers or {}).converse()
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



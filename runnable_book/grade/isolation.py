"""How this machine boxes a submission in (ours): probed once per grading run, and it fails closed.

The sandbox's outer layers are Linux namespaces and a filesystem jail (box/jail.sh): no
network, a read-only root holding only the system and the box, a PID namespace of its own.
They need three programs, ``unshare`` and ``setpriv`` (util-linux) and ``chroot``
(coreutils), and a kernel that lets this user make namespaces. Debian keeps ``chroot`` in
``/usr/sbin``, which an ordinary user's login ``PATH`` does not list, so the programs are
looked for on ``PATH`` *and* where Debian keeps system programs.

Without every layer the grader grades nothing: :func:`probe` says why in one message that
names the real cause (the program and where it was looked for, or what the kernel refused and
the setting that allows it) and the fix. ``UNISOLATED=1`` (``--unisolated``) is the explicit
opt-out: Node's permission model, WebAssembly and the limits only, said on the first line,
in the report and in every feedback file.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

# Where Debian (and most distributions) keep system programs, whatever PATH says.
SYSTEM_DIRS = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")
NEEDED = {"unshare": "util-linux", "setpriv": "util-linux", "chroot": "coreutils"}
NAMESPACES = ["--net", "--mount", "--pid", "--ipc", "--uts", "--fork", "--kill-child"]
NODE_LAYERS = ["Node's permission model (reads the box only, no writes, processes or workers)",
               "WebAssembly", "time and memory limits"]
# The kernel settings that refuse an unprivileged user namespaces: (file, the value that refuses, the fix).
USERNS_SETTINGS = [
    ("/proc/sys/kernel/unprivileged_userns_clone", "0", "sysctl -w kernel.unprivileged_userns_clone=1"),
    ("/proc/sys/user/max_user_namespaces", "0", "sysctl -w user.max_user_namespaces=15000"),
    ("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1",
     "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 (or an AppArmor profile allowing `userns` for unshare)"),
]


class NotIsolated(RuntimeError):
    """This machine cannot box a submission in completely; the message says why and what to do."""


@dataclass
class Isolation:
    """The layers a grading run has: ``prefix`` starts a child inside them (empty: no namespaces)."""

    prefix: list[str]
    layers: list[str]
    missing: list[str]

    @property
    def complete(self) -> bool:
        return not self.missing

    def describe(self) -> str:
        text = "sandbox: " + ", ".join(self.layers)
        if self.missing:
            text = "UNISOLATED (UNISOLATED=1): " + text + "; WITHOUT " + ", ".join(self.missing)
        return text


def find_program(name: str, path: str | None = None, system_dirs=SYSTEM_DIRS) -> str | None:
    """The program's absolute path: on ``PATH`` first, then where the system keeps programs."""
    return shutil.which(name, path=path) or shutil.which(name, path=os.pathsep.join(system_dirs))


def userns_refusal() -> str:
    """The kernel setting that refuses this user a user namespace, with its fix ('' if none is found)."""
    for file, refusing, fix in USERNS_SETTINGS:
        try:
            if Path(file).read_text().strip() == refusing:
                return f"{file} is {refusing}; as root: {fix}"
        except OSError:
            continue
    return ""


def probe(box: Path, node: str, env: dict, unisolated: bool = False, path: str | None = None,
          system_dirs=SYSTEM_DIRS) -> Isolation:
    """The full isolation, tried with a real Node start inside it; :class:`NotIsolated` if it
    cannot be had, unless ``unisolated`` (then the weaker sandbox, saying what it lacks)."""
    programs = {name: find_program(name, path, system_dirs) for name in NEEDED}
    absent = [name for name, found in programs.items() if found is None]
    if absent:
        looked = ", ".join(["PATH", *system_dirs])
        packages = sorted({NEEDED[name] for name in absent})
        why = (f"{', '.join(f'`{n}`' for n in absent)} not found (looked on {looked}); "
               f"install Debian's {' and '.join(packages)} (apt-get install {' '.join(packages)})")
        return _refuse_or_weaken(why, unisolated)
    unshare = programs["unshare"]
    # jail.sh runs setpriv and chroot; it is told where they are (the child's PATH is its own). It is
    # run from the box (prepared in the grader's output folder), which the user can read even from
    # inside a user namespace, where a repository under an unreadable home would not be.
    jail = ["sh", str(box / "code" / "jail.sh")]
    tools_path = os.pathsep.join(sorted({str(Path(programs[n]).parent) for n in ("setpriv", "chroot")}))
    tries = []
    if os.geteuid() == 0:
        tries.append(([unshare, *NAMESPACES, "--", "env", f"JAIL_TOOLS={tools_path}", *jail, "1", str(box), "--"],
                      ["network namespace (no network)", "mount namespace (a read-only root with only "
                       "the system and the box)", "PID namespace", "user nobody, no capabilities"]))
    tries.append(([unshare, "--user", "--map-root-user", *NAMESPACES, "--", "env", f"JAIL_TOOLS={tools_path}",
                   *jail, "0", str(box), "--"],
                  ["user namespace", "network namespace (no network)", "mount namespace (a read-only root "
                   "with only the system and the box)", "PID namespace", "no capabilities"]))
    refusals = []
    for prefix, layers in tries:
        done = subprocess.run([*prefix, node, "-e", "require('fs').accessSync('/box/code/child.mjs')"],
                              capture_output=True, timeout=60, env=env, text=True)
        if done.returncode == 0:
            return Isolation(prefix, layers + NODE_LAYERS, [])
        said = " ".join((done.stderr.strip() or done.stdout.strip()).splitlines()[-2:])
        said = f"exit status {done.returncode}" + (f": {said}" if said else "")
        refusals.append(said[:300])
    why = f"the system refused the namespaces the sandbox needs ({refusals[-1]})"
    setting = userns_refusal()
    if setting:
        why += f": {setting}"
    elif os.geteuid() != 0:
        why += "; allow unprivileged user namespaces (kernel.unprivileged_userns_clone, user.max_user_namespaces) " \
               "or grade as root"
    return _refuse_or_weaken(why, unisolated)


def _refuse_or_weaken(why: str, unisolated: bool) -> Isolation:
    if not unisolated:
        raise NotIsolated(f"cannot isolate the students' code, so nothing was graded: {why}. "
                          "To grade anyway with a weaker sandbox (no network isolation, no filesystem jail), "
                          "run again with UNISOLATED=1.")
    return Isolation([], list(NODE_LAYERS), [f"network isolation and filesystem jail ({why})"])

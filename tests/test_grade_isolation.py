"""The grader fails closed (runnable_book/grade/isolation.py): full isolation, or nothing graded and why.

As an ordinary user with a login ``PATH`` (which lacks ``/usr/sbin``, where Debian keeps
``chroot``) the grader either isolates the students' code completely or refuses, naming the
cause; it never grades unisolated unless told to (``UNISOLATED=1``), and then says so.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from runnable_book.grade import isolation
from runnable_book.repository import ROOT

LOGIN_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/local/games:/usr/games"  # Debian's ENV_PATH for a user
USER = "grade-test-user"


def fake_programs(folder: Path, unshare_says: str | None) -> None:
    """setpriv and chroot that exist, and an unshare that refuses as a kernel without user
    namespaces makes it (or none at all)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("setpriv", "chroot"):
        (folder / name).write_text("#!/bin/sh\nexit 0\n")
        (folder / name).chmod(0o755)
    if unshare_says is not None:
        (folder / "unshare").write_text(f"#!/bin/sh\necho '{unshare_says}' >&2\nexit 1\n")
        (folder / "unshare").chmod(0o755)


def test_a_missing_program_refuses_naming_it_and_where_it_was_looked_for(tmp_path):
    fake_programs(tmp_path / "bin", None)
    with pytest.raises(isolation.NotIsolated) as refused:
        isolation.probe(tmp_path, shutil.which("node") or "node", {}, path="/nonexistent",
                        system_dirs=(str(tmp_path / "bin"),))
    message = str(refused.value)
    assert "`unshare` not found" in message and str(tmp_path / "bin") in message and "util-linux" in message
    assert "nothing was graded" in message and "UNISOLATED=1" in message


@pytest.mark.netns  # (a stand-in `unshare` that refuses, run as the real one would be)
def test_refused_namespaces_refuse_naming_what_the_system_said(tmp_path):
    fake_programs(tmp_path / "bin", "unshare: unshare failed: Operation not permitted")
    with pytest.raises(isolation.NotIsolated, match="refused the namespaces .*Operation not permitted"):
        isolation.probe(tmp_path, shutil.which("node") or "node", {"PATH": "/usr/bin:/bin"}, path="/nonexistent",
                        system_dirs=(str(tmp_path / "bin"),))


def test_unisolated_grades_only_when_asked_and_says_so(tmp_path):
    fake_programs(tmp_path / "bin", None)
    weaker = isolation.probe(tmp_path, "node", {}, unisolated=True, path="/nonexistent",
                             system_dirs=(str(tmp_path / "bin"),))
    assert not weaker.complete and weaker.describe().startswith("UNISOLATED (UNISOLATED=1): sandbox: ")
    assert "WITHOUT network isolation and filesystem jail" in weaker.describe()


def test_system_programs_are_found_where_debian_keeps_them():
    assert isolation.find_program("chroot", path=LOGIN_PATH) in ("/usr/sbin/chroot", "/sbin/chroot",
                                                                  "/usr/bin/chroot", "/bin/chroot")


def _user() -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(USER)
    except KeyError:
        subprocess.run(["useradd", "--create-home", "--shell", "/bin/sh", USER], check=True, capture_output=True)
        return pwd.getpwnam(USER)


@pytest.mark.skipif(os.geteuid() != 0, reason="creating a user needs root (CI runs as root)")
@pytest.mark.netns
def test_an_ordinary_user_with_a_login_path_is_isolated_or_refused(tmp_path):
    """A user made here, with Debian's login PATH, grades a class: the first line is full isolation, or
    the run exits non-zero saying why; never an unisolated grading by default.

    The user reads the clone, its environment and the interpreter wherever CI put them (under /root,
    say) through one capability, CAP_DAC_READ_SEARCH (read and search any file), kept across exec
    (ambient): it gives no namespace, program or privilege that the sandbox uses."""
    from runnable_book.grade.sandbox import PYODIDE, SNAPSHOT

    if not (PYODIDE / "pyodide.asm.wasm").exists() or not SNAPSHOT.exists():
        subprocess.run(["make", "--no-print-directory", "assets"], cwd=ROOT, check=True, capture_output=True)
    user = _user()
    # (a folder the user owns, as an instructor's own: pytest's tmp_path is under root's private folder)
    home = Path(tempfile.mkdtemp(prefix="grade-as-user-", dir="/tmp"))
    folder, out = home / "class", home / "grades"
    folder.mkdir()
    # A notebook with no code cell: the grader probes its sandbox, then has nothing to run.
    (folder / "empty.ipynb").write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": []}))
    out.mkdir()
    for path in (home, folder, out, folder / "empty.ipynb"):
        os.chown(path, user.pw_uid, user.pw_gid)
    environment = {"PATH": LOGIN_PATH, "HOME": user.pw_dir, "LANG": "C.UTF-8", "USER": USER, "LOGNAME": USER}
    try:
        done = subprocess.run(["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--init-groups",
                               "--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search", "--",
                               sys.executable, "-m", "runnable_book.grade", str(folder), "--out", str(out), "--jobs", "1"],
                              cwd=ROOT, env=environment, capture_output=True, text=True, timeout=600)
        said = done.stdout + done.stderr
        assert "UNISOLATED (" not in said and "WITHOUT" not in said, said
        if done.returncode == 0:
            first = done.stdout.splitlines()[0]
            assert first.startswith("sandbox: user namespace, network namespace (no network), mount namespace"), said
            assert (out / "results.json").exists()
        else:
            assert done.returncode == 3 and "nothing was graded" in done.stderr, said
            assert not (out / "results.json").exists()
        assert not (out / ".box").exists() and not (out / ".handins").exists()
    finally:
        shutil.rmtree(home, ignore_errors=True)

"""A test that hangs fails with its name (pytest-timeout, configured in pyproject.toml).

A hang once held `test-tests` until CI's 90-minute limit, with only dots to show: no name,
no stack. The suite's time limits turn a hang into a failure that names the test
and prints where it waited, while the other tests go on. Planted: a test that waits on a
child process forever, and one deaf to the limit's signal, in a nested pytest with this
repository's configuration and limits of a few seconds.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib

from runnable_book.repository import ROOT


def test_the_suite_has_a_limit_per_test_a_backstop_and_a_limit_per_session():
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert 0 < options.get("timeout", 0) < options.get("faulthandler_timeout", 0), options
    assert options.get("faulthandler_exit_on_timeout") is True, options
    assert options.get("session_timeout", 0) > options["faulthandler_timeout"], options
    # A test's own limit (a long test's `@pytest.mark.timeout(N)`) is below the backstop too:
    # above it, the backstop would end the test's worker first, with no test named.
    own = {path.name: int(n) for path in (ROOT / "tests").glob("test_*.py")
           for n in re.findall(r"@pytest\.mark\.timeout\((\d+)\)", path.read_text())}
    assert all(n < options["faulthandler_timeout"] for n in own.values()), own


def test_hanging_tests_fail_naming_themselves_and_the_rest_run(tmp_path):
    """Under xdist, as `make test` runs them: one test waits on a child process forever (the
    limit interrupts it), one waits with the limit's signal blocked (the backstop ends its
    worker), and the test after them runs."""
    (tmp_path / "test_planted.py").write_text(
        "import signal, subprocess, time\n\n"
        "def test_waits_forever():\n    subprocess.run(['sleep', '600'])\n\n"
        "def test_deaf_to_the_limit():\n    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})\n"
        "    time.sleep(600)\n\n"
        "def test_runs_after_them():\n    pass\n")
    done = subprocess.run([sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(tmp_path),
                           "-n", "1", "-o", "timeout=2", "-o", "faulthandler_timeout=4", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)  # (above its planted 600-s sleeps)
    shown = done.stdout[-3000:] + done.stderr[-3000:]
    assert done.returncode == 1, shown
    assert "Failed: Timeout (>2.0s) from pytest-timeout" in done.stdout, shown
    assert re.search(r"^FAILED \S*test_planted\.py::test_waits_forever", done.stdout, re.M), shown
    assert "crashed while running 'test_planted.py::test_deaf_to_the_limit'" in done.stdout, shown
    assert "2 failed, 1 passed" in done.stdout, shown

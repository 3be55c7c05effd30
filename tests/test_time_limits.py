"""A test that hangs fails with its name (pytest-timeout, configured in pyproject.toml).

Stop 35's CI run hung in `test-tests` until CI's 90-minute limit, with only dots to show:
no name, no stack. The suite's time limits turn a hang into a failure that names the test
and prints where it waited, while the other tests go on. Planted: a test that waits on a
child process forever, in a nested pytest with this repository's configuration and a limit
of a few seconds.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib

from tools.pipeline.pages import ROOT


def test_the_suite_has_a_limit_per_test_and_per_session():
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert options.get("timeout", 0) > 0 and options.get("session_timeout", 0) > options["timeout"], options


def test_a_hanging_test_fails_naming_itself_and_the_rest_run(tmp_path):
    (tmp_path / "test_planted.py").write_text(
        "import subprocess\n\n"
        "def test_waits_forever():\n    subprocess.run(['sleep', '600'])\n\n"
        "def test_runs_after_it():\n    pass\n")
    done = subprocess.run([sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(tmp_path),
                           "-o", "timeout=3", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout[-2000:]
    assert "Failed: Timeout (>3.0s) from pytest-timeout" in done.stdout, done.stdout[-2000:]
    assert re.search(r"^FAILED \S*test_planted\.py::test_waits_forever", done.stdout, re.M), done.stdout[-2000:]
    assert "1 failed, 1 passed" in done.stdout, done.stdout[-2000:]

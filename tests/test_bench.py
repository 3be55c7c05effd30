"""The benchmarks' own plumbing (their numbers are not checked: timings live in benchmarks)."""

import json
import subprocess
import sys

from tools.bench.cpu_per_test import OUT_VARIABLE
from tools.pipeline.pages import ROOT


def test_cpu_per_test_writes_one_row_per_test_with_its_seconds_and_cpu(tmp_path):
    (tmp_path / "test_two.py").write_text("def test_busy():\n    sum(range(10**6))\n\n\ndef test_idle():\n    pass\n")
    rows = tmp_path / "rows.jsonl"
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tools.bench.cpu_per_test",
                           str(tmp_path / "test_two.py")], cwd=ROOT, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), OUT_VARIABLE: str(rows)})
    assert done.returncode == 0, done.stdout + done.stderr
    found = [json.loads(line) for line in rows.read_text().splitlines()]
    assert [row["test"].rsplit("::", 1)[1] for row in found] == ["test_busy", "test_idle"]
    assert all(row["seconds"] >= 0 and row["cpu_seconds"] >= 0 for row in found)

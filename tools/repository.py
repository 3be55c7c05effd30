"""The repository's root: where every tool (pipeline, checks, benchmarks, grader) starts from."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # tools/repository.py -> the repository

"""What the sandbox runs (ours): child.mjs (Node), harness.py and wire.py (its Python), jail.sh.

Only child.mjs, harness.py and wire.py are copied into the sandbox (runnable_book/grade/sandbox.py);
the judge imports wire.py from here.
"""

"""runnable_book/lazy_iri_syntax.py: jsonschema's IRI parsers are built on first use, and judge as before."""

import json
import subprocess
import sys

from runnable_book.repository import ROOT

# Valid and invalid IRIs and IRI references, for jsonschema's two formats that use rfc3987_syntax.
SAMPLES = [("iri", "http://example.com/a b"), ("iri", "http://例え.jp/p?q=1#f"), ("iri", "relative/path"),
           ("iri-reference", "%zz"), ("iri-reference", "../a?b#c"), ("iri-reference", "mailto:someone@example.org")]
VERDICTS = f"""
import json, jsonschema
checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
print(json.dumps([checker.conforms(value, form) for form, value in {SAMPLES!r}]))
"""


def python(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    return done.stdout


def test_importing_nbformat_through_our_tools_builds_no_iri_parser():
    loaded = python("import runnable_book, nbformat, sys; print('rfc3987_syntax.syntax_helpers' in sys.modules)")
    assert loaded.strip() == "False"


def test_iris_get_the_verdicts_they_get_without_the_stand_in():
    with_stand_in = json.loads(python("import runnable_book" + VERDICTS))
    without = json.loads(python(VERDICTS))
    assert with_stand_in == without and True in without and False in without, (with_stand_in, without)

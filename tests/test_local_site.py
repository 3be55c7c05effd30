"""The tests' local server (tools/browser/local_site.py): a held file is answered only once released."""

import threading
import urllib.request

from tools.browser.local_site import LocalSite


def test_a_held_file_is_answered_after_the_block_and_others_at_once(tmp_path):
    (tmp_path / "held.js").write_text("held")
    (tmp_path / "other.txt").write_text("other")
    answers: list[str] = []

    def fetch(site: LocalSite, name: str) -> None:
        with urllib.request.urlopen(site.url(name), timeout=30) as response:
            answers.append(response.read().decode())

    with LocalSite(tmp_path) as site:
        with site.holding("held.js"):
            waiting = threading.Thread(target=fetch, args=(site, "held.js"))
            waiting.start()
            fetch(site, "other.txt")  # another file is not held
            waiting.join(timeout=0.5)
            assert waiting.is_alive() and answers == ["other"], "the held file was answered inside the block"
        waiting.join(timeout=30)
    assert answers == ["other", "held"]

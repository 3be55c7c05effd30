"""What every tool and test that opens a page shares: Debian's Chromium, started one way
(``chromium``), the built site served on 127.0.0.1 (``local_site``), what a page has drawn
and loaded (``page_state``), and a page's cells run as a reader runs them (``page_runner``)."""

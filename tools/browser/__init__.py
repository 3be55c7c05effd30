"""What every tool and test that opens a page shares: Debian's Chromium, started one way
(``chromium``), and the built site served on 127.0.0.1 (``local_site``)."""

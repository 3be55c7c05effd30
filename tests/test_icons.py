"""The icon fonts' subset keeps every glyph a page names: icons.py finds a page's Font Awesome
classes by str.find (fast), and must find what its regular expression, ICON_CLASS, finds."""

from hypothesis import given, settings, strategies as st

from runnable_book.sphinx_ext.icons import ICON_CLASS, icon_classes_in

# Pieces a page is made of near an icon's class: the prefix, its name's characters, word
# characters before it ("sofa-bed" is no icon), separators, and a non-ASCII word character.
PIECES = st.sampled_from(["fa-", "fa", "-", "a", "Z", "_", "0", "9", " ", '"', "<i class=", ">", "é", "\n", "fa-fa-"])


@settings(max_examples=400, deadline=None)
@given(st.lists(PIECES, max_size=40).map("".join))
def test_the_icon_classes_found_are_the_regular_expressions(text):
    assert icon_classes_in(text) == sorted(set(ICON_CLASS.findall(text)))


def test_a_page_s_icons():
    page = '<i class="fa-brands fa-github"></i><span class="sofa-bed">x</span>fa-fa-x fa-'
    assert icon_classes_in(page) == sorted(set(ICON_CLASS.findall(page))) == ["fa-brands", "fa-fa-x", "fa-github"]

"""The HTML report renders the report's Markdown instead of showing its syntax, and escapes raw HTML."""

from __future__ import annotations

from toolkit.report.document import markdown_html


def test_lists_emphasis_and_code_become_html() -> None:
    page = markdown_html("- experiment: `demo`, split `tuning`\n- b & c\n\n**Caution:** only 1 recording")
    assert page == (
        "<ul>\n<li>experiment: <code>demo</code>, split <code>tuning</code></li>\n<li>b &amp; c</li>\n"
        "</ul>\n<p><strong>Caution:</strong> only 1 recording</p>\n"
    )
    assert (
        markdown_html("Paired comparison with `baseline`", inline=True)
        == "Paired comparison with <code>baseline</code>"
    )


def test_raw_html_and_script_links_are_not_passed_on() -> None:
    page = markdown_html("- name <script>alert(1)</script>\n\n[x](javascript:alert(1)) <b>bold</b>")
    assert "<script>" not in page and "&lt;script&gt;" in page and "<b>" not in page
    assert 'href="javascript' not in page

"""The run report: a terminal table, Markdown, self-contained HTML and per-recording alignment pages."""

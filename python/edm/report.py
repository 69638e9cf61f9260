"""A small report writer: one document rendered as Markdown and as HTML.

Experiments add headings, paragraphs, tables (lists of dicts) and matplotlib
figures; :meth:`Report.write` saves ``NAME.md`` and ``NAME.html`` side by side,
with figures as PNG files in ``figures/`` referenced by both.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_CSS = """
body { font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
table { border-collapse: collapse; margin: 1rem 0; font-size: 0.9rem; }
th, td { border: 1px solid #bbb; padding: 0.25rem 0.6rem; text-align: right; }
th { background: #eee; } td:first-child, th:first-child { text-align: left; }
img { max-width: 100%; border: 1px solid #ddd; }
code { background: #f4f4f4; padding: 0 0.2rem; }
.worse { color: #a40000; font-weight: 600; }
"""


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def markdown_table(columns: list[str], rows: list[list[str]]) -> str:
    """A Markdown table of cells already formatted (no trailing newline); an empty cell is "| |"."""
    def line(cells: list[str]) -> str:
        return "|" + "|".join(f" {c} " if c else " " for c in cells) + "|"

    return "\n".join([line(columns), "|" + "---|" * len(columns), *(line(row) for row in rows)])


def _inline_html(text: str) -> str:
    """Markdown's `code` and **bold** for the HTML twin; everything else escaped."""
    text = html.escape(text)
    text = re.sub(r"`([^`]+)`", r"<code>\1</code>", text)
    return re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", text)


@dataclass
class Report:
    title: str
    _md: list[str] = field(default_factory=list)
    _html: list[str] = field(default_factory=list)
    _figures: list[tuple[str, Any]] = field(default_factory=list)

    def heading(self, text: str, level: int = 2) -> None:
        self._md.append(f"{'#' * level} {text}\n")
        self._html.append(f"<h{level}>{html.escape(text)}</h{level}>")

    def paragraph(self, text: str) -> None:
        self._md.append(text.strip() + "\n")
        self._html.append(f"<p>{_inline_html(text.strip())}</p>")

    def table(self, rows: list[dict[str, Any]], columns: list[str] | None = None) -> None:
        if not rows:
            self.paragraph("(no data)")
            return
        columns = columns or list(rows[0])
        self._md.append(markdown_table(columns, [[_fmt(r.get(c, "")) for c in columns] for r in rows]) + "\n")
        head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(_fmt(r.get(c, '')))}</td>" for c in columns) + "</tr>" for r in rows
        )
        self._html.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")

    def figure(self, name: str, fig: Any, caption: str) -> None:
        """A matplotlib figure, saved as figures/NAME.png when the report is written."""
        self._figures.append((name, fig))
        self._md.append(f"![{caption}](figures/{name}.png)\n\n*{caption}*\n")
        self._html.append(
            f'<figure><img src="figures/{html.escape(name)}.png" alt="{html.escape(caption)}">'
            f"<figcaption>{_inline_html(caption)}</figcaption></figure>"
        )

    def write(self, folder: str | Path, name: str = "report") -> tuple[Path, Path]:
        folder = Path(folder)
        (folder / "figures").mkdir(parents=True, exist_ok=True)
        for fig_name, fig in self._figures:
            fig.savefig(folder / "figures" / f"{fig_name}.png", dpi=120, bbox_inches="tight")
        md_path = folder / f"{name}.md"
        md_path.write_text(f"# {self.title}\n\n" + "\n".join(self._md))
        html_path = folder / f"{name}.html"
        html_path.write_text(
            f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(self.title)}</title>"
            f"<style>{_CSS}</style></head><body><h1>{html.escape(self.title)}</h1>\n"
            + "\n".join(self._html)
            + "\n</body></html>\n"
        )
        return md_path, html_path

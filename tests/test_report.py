"""The report writer renders the same content as Markdown and HTML."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from edm.report import Report  # noqa: E402


def test_report_has_tables_and_figures_in_both_forms(tmp_path):
    r = Report("Demo <report>")
    r.heading("Table 1")
    r.paragraph("Made by `edm reproduce`; **ours** beside the paper's.")
    r.table([{"protocol": "edm", "latency_ns": 299.52}, {"protocol": "dctcp", "latency_ns": 1890.0}])
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 2])
    r.figure("fig8a", fig, "Latency vs load")
    md, html = r.write(tmp_path)
    text = md.read_text()
    assert "| edm | 299.5 |" in text and "![Latency vs load](figures/fig8a.png)" in text
    page = html.read_text()
    assert "<td>299.5</td>" in page and "&lt;report&gt;" in page and "<code>edm reproduce</code>" in page
    assert (tmp_path / "figures" / "fig8a.png").stat().st_size > 1000

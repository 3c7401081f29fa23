"""A self-contained HTML report of one submission, or a comparison of two.

``python -m ovearth_core.report --gt GT --predictions A.json [--compare B.json]
--images DIR --modalities ... --out report.html`` evaluates every selected task with
the evaluator's options and writes one HTML file that works offline: plotly.js is
inlined once, images are JPEG ``data:`` URIs, and nothing is fetched. It holds the
configuration with the SHA-256 of every input file, key metrics per task and modality
(with B − A and paired-bootstrap intervals when comparing), presence confusion
matrices, charts, a per-category table, the paper-style table (also as Markdown and
LaTeX) and a gallery of the ``--worst`` N queries drawn over their images.

Bad input exits with status 2 and the evaluator's message; no file is written then.
"""

from .build import ReportData, Submission, build_report_data, worst_queries
from .cli import main
from .html import render_html
from .tables import paper_table_latex, paper_table_markdown, paper_values

__all__ = ["ReportData", "Submission", "build_report_data", "main", "paper_table_latex",
           "paper_table_markdown", "paper_values", "render_html", "worst_queries"]


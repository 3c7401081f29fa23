"""Static parts of the HTML report: page skeleton and style sheet (no external resources)."""

from __future__ import annotations

STYLE = """
body { font-family: -apple-system, "Segoe UI", "DejaVu Sans", Arial, sans-serif; margin: 0;
       color: #1f2328; background: #fff; font-size: 14px; }
main { max-width: 1180px; margin: 0 auto; padding: 16px 24px 48px; }
h1 { font-size: 24px; margin: 12px 0 4px; }
h2 { font-size: 20px; margin: 28px 0 8px; border-bottom: 2px solid #d0d7de; padding-bottom: 4px; }
h3 { font-size: 16px; margin: 20px 0 6px; }
p.sub { color: #57606a; margin: 0 0 12px; }
nav a { margin-right: 14px; }
table { border-collapse: collapse; margin: 6px 0 12px; }
th, td { border: 1px solid #d0d7de; padding: 3px 8px; text-align: right; }
th { background: #f6f8fa; }
td.l, th.l { text-align: left; }
td.pos { color: #1a7f37; } td.neg { color: #cf222e; }
td.sig { font-weight: 600; }
.scroll { max-height: 420px; overflow-y: auto; display: inline-block; }
.scroll table { margin: 0; }
.grid { display: flex; flex-wrap: wrap; gap: 12px; }
.card { border: 1px solid #d0d7de; border-radius: 6px; padding: 8px; width: 270px;
        font-size: 12px; background: #fbfbfc; }
.card.pair { width: 540px; }
.card img { display: block; max-width: 100%; margin: 4px 0; }
.card .imgs { display: flex; gap: 6px; }
.card .imgs figure { margin: 0; }
.card figcaption { font-weight: 600; }
.card .q { font-weight: 600; font-size: 13px; }
.notice { background: #fff8c5; border: 1px solid #d4a72c; padding: 4px 8px; border-radius: 4px;
          margin: 6px 0; }
.legend span { display: inline-block; margin-right: 12px; }
.sw { display: inline-block; width: 12px; height: 12px; vertical-align: middle; margin-right: 4px; }
pre { background: #f6f8fa; padding: 8px; overflow-x: auto; font-size: 12px; }
.figs { display: grid; grid-template-columns: repeat(2, minmax(0, 1fr)); gap: 8px; }
.figs > div { min-width: 0; }
footer { color: #57606a; font-size: 12px; margin-top: 32px; }
"""

LEGEND = (
    '<p class="legend">'
    '<span><i class="sw" style="background:rgb(0,190,255)"></i>GT mask</span>'
    '<span><i class="sw" style="background:rgb(255,0,200)"></i>predicted mask</span>'
    '<span><i class="sw" style="background:#1db954"></i>matched box</span>'
    '<span><i class="sw" style="background:#e53935"></i>false-positive box</span>'
    '<span><i class="sw" style="background:#ff9800"></i>missed GT box</span>'
    "<span>GT boxes solid, predicted boxes dashed</span></p>"
)


def page(title: str, plotly_js: str, body: str) -> str:
    """The whole document: plotly.js inlined once in the head, then ``body``."""
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<title>{title}</title>\n<style>{STYLE}</style>\n"
        f"<script type=\"text/javascript\">{plotly_js}</script>\n</head>\n"
        f"<body>\n<main>\n{body}\n</main>\n"
        # Plots drawn before later grid cells existed: fit them to their final cells.
        "<script>window.dispatchEvent(new Event('resize'));</script>\n</body>\n</html>\n"
    )

"""The one-file HTML report: the budget bar as inline SVG, the composition table, every item, the audit
findings and the messages. No external resource, no script, every text escaped.

It reads like the app: the bar's layout is core.barlayout's (the same segments, folded runs and views
the inspector draws), the colours and section names are core.palette's, sections come in prompt
order, and every segment carries its numbers, with the allowance and the context limit marked.
"""
from __future__ import annotations

import html
from typing import Any, Callable

from .audit import Finding
from .barlayout import Segment, View, bar_basis, result_segments, view_extent
from .composition import composition, percent
from .palette import NOT_SENT_COLOUR, RESERVE_COLOURS, RESERVE_TITLES, SectionPalette, section_order, section_title
from .result import AssemblyResult

_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em;color:#222;background:#fff}
h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.6em}h3.bar{font-size:1em;margin:.8em 0 .2em}
table{border-collapse:collapse;width:100%}th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;
vertical-align:top}th{background:#f2f2f2}td.n{text-align:right;font-variant-numeric:tabular-nums}
.sw{display:inline-block;width:.9em;height:.9em;margin-right:.3em;vertical-align:-.1em;border:1px solid #0003}
.dropped{color:#777}.error{color:#C62828;font-weight:600}.warning{color:#B26A00;font-weight:600}
pre{white-space:pre-wrap;word-break:break-word;background:#f7f7f7;padding:.5em;margin:.2em 0}
dl{display:grid;grid-template-columns:max-content auto;gap:.1em 1em}dt{font-weight:600}
"""
LANE, GAP, CHAR = 34, 10, 6.6  # lane height, gap between lanes, an average label character (px)


def esc(text: Any) -> str:
    """HTML-escaped text; ``://`` is written as an entity too, so no URL appears in the file even when a
    message quotes one (the page loads nothing and links nowhere)."""
    return html.escape(str(text), quote=True).replace("://", "&#58;//")


def _segment_text(seg: Segment) -> tuple[str, str, str]:
    """(label, short label, hover title) of a segment."""
    if seg.kind == "section" and seg.estimate is not None:  # our estimate's share of the provider's figure
        return (f"{section_title(seg.key)} ≈{seg.tokens:,}", f"≈{seg.tokens:,}",
                f"{section_title(seg.key)}: ≈{seg.tokens:,} of the provider's input tokens (our estimate counts "
                f"{seg.estimate:,}, scaled to the provider's total)")
    if seg.kind == "section":
        return (f"{section_title(seg.key)} {seg.tokens:,}", f"{seg.tokens:,}",
                f"{section_title(seg.key)}: {seg.tokens:,} tokens sent")
    if seg.kind == "dropped":
        label = seg.run_label()
        return label, f"×{len(seg.items)}" if seg.folded else "", f"{section_title(seg.key)}: {label}"
    title = RESERVE_TITLES.get(seg.kind, seg.kind)
    return f"{seg.kind if seg.kind != 'reserve' else 'output reserve'} {seg.tokens:,}", f"{seg.tokens:,}", \
        f"{title}: {seg.tokens:,} tokens"


def budget_svg(result: AssemblyResult, *, view: View = "window", width: int = 960,
               palette: SectionPalette | None = None) -> str:
    """The budget bar as the inspector draws it in ``view``: sent sections, free, margin and output reserve
    on top; below, what was not sent (hatched, runs of many folded with their count). Each segment carries
    its numbers where they fit (and in its hover title); the allowance and the context limit are lines."""
    palette = palette or SectionPalette()
    segments = result_segments(result, "main", view=view)
    right = max(view_extent(segments, view, allowances=[result.input_budget], limits=[result.context_limit]),
                max(s.x1 for s in segments) if view == "window" else 0.0, 1.0)
    plot = width - 150  # room on the right for the limit's label
    unit = plot / right
    lanes = {"main": 18, "dropped": 18 + LANE + GAP}
    shapes: list[str] = []
    for seg in segments:
        if seg.width <= 0 or seg.x0 >= right:
            continue
        x0, w = 1 + seg.x0 * unit, min(seg.width, right - seg.x0) * unit
        y = lanes[seg.lane]
        label, short, title = _segment_text(seg)
        colour = palette.colour(seg.key) if seg.kind in ("section", "dropped") else RESERVE_COLOURS[seg.kind]
        extra = ' fill-opacity="0.35" stroke-dasharray="4 2"' if seg.kind == "dropped" else ""
        if seg.newly:
            extra += ' stroke="#C62828" stroke-width="3"'
        shapes.append(f'<rect x="{x0:.2f}" y="{y}" width="{w:.2f}" height="{LANE}" fill="{colour}" '
                      f'stroke="#fff" stroke-width="1"{extra}><title>{esc(title)}</title></rect>')
        if seg.kind in ("dropped", "required"):
            shapes.append(f'<rect x="{x0:.2f}" y="{y}" width="{w:.2f}" height="{LANE}" fill="url(#hatch)" '
                          'pointer-events="none"/>')
        text = label if len(label) * CHAR <= w - 6 else short if len(short) * CHAR <= w - 4 else ""
        if text:
            dark = seg.kind in ("section", "reserve") and _dark(colour)
            shapes.append(f'<text x="{x0 + w / 2:.2f}" y="{y + LANE / 2 + 4}" font-size="11" text-anchor="middle" '
                          f'fill="{"#fff" if dark else "#111"}">{esc(text)}</text>')
    height = lanes["dropped"] + LANE + 22
    marks = []
    basis = bar_basis(result)
    if basis.provider:  # drawn to the provider's figure: our estimate in the lower lane, in words
        w = min(basis.ours, right) * unit
        y = lanes["dropped"]
        words = f"our estimate {basis.ours:,} · drift {basis.drift:+,} (an estimate: no public tokenizer)"
        marks.append(f'<rect x="1" y="{y + 6}" width="{w:.2f}" height="{LANE - 12}" fill="#00000010" '
                     f'stroke="#555" stroke-dasharray="3 2"><title>{esc(basis.words())}</title></rect>'
                     f'<text x="{1 + w + 4:.2f}" y="{y + LANE / 2 + 4}" font-size="11">{esc(words)}</text>')
    for value, name, dash in ((result.input_budget, "allowance", ' stroke-dasharray="5 3"'),
                              (result.context_limit, "context limit", "")):
        if value > right:
            marks.append(f'<text x="{plot - 2:.2f}" y="12" font-size="12" text-anchor="end">{name} {value:,} →'
                         '</text>')
            continue
        x = 1 + value * unit
        marks.append(f'<line x1="{x:.2f}" x2="{x:.2f}" y1="14" y2="{height - 18}" stroke="#222" stroke-width="2"{dash}>'
                     f'<title>{name}: {value:,} tokens</title></line>'
                     f'<text x="{x + 3:.2f}" y="{height - 4 if name == "allowance" else 12}" font-size="12">'
                     f'{name} {value:,}</text>')
    defs = ('<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
            'patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="6" stroke="#0006" stroke-width="2"/>'
            '</pattern></defs>')
    return (f'<svg role="img" aria-label="token budget ({esc(view)})" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}">{defs}{"".join(shapes)}{"".join(marks)}</svg>')


def _dark(colour: str) -> bool:
    r, g, b = (int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5))
    return 0.299 * r + 0.587 * g + 0.114 * b <= 0.55


def _legend(result: AssemblyResult, palette: SectionPalette) -> str:
    sections = section_order(e.section for e in result.trace)
    items = [f'<span class="sw" style="background:{palette.colour(s)}"></span>{esc(section_title(s))}'
             for s in sections]
    items += [f'<span class="sw" style="background:{RESERVE_COLOURS[k]}"></span>{esc(RESERVE_TITLES[k])}'
              for k in ("free", "margin", "reserve")]
    items.append(f'<span class="sw" style="background:{NOT_SENT_COLOUR};opacity:.5"></span>'
                 "Not sent (hatched; runs of many folded, with their count)")
    return "<p>" + " &nbsp; ".join(items) + "</p>"


def composition_table(result: AssemblyResult, palette: SectionPalette) -> str:
    rows = composition(result)
    plan = any(r.figures is not None and r.figures.share is not None for r in rows)
    head = ["section", "tokens", "% of window", "% of allowance", "not sent"] + (["share", "allowance"] if plan else [])
    head += ["pinned or required", "kept", "evicted", "summarised"]
    out = ["<table><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>"]
    for r in rows:
        colour = palette.colour(r.key) if r.kind == "section" else RESERVE_COLOURS[r.kind]
        cells = [f'<td><span class="sw" style="background:{colour}"></span>{esc(r.title)}</td>',
                 f'<td class="n">{r.tokens:,}</td>', f'<td class="n">{percent(r.of_window)}</td>',
                 f'<td class="n">{percent(r.of_allowance)}</td>',
                 f'<td class="n">{f"{r.not_sent_items} items, {r.not_sent_tokens:,} tokens" if r.not_sent_items else ""}'
                 '</td>']
        f = r.figures
        if plan:
            cells += [f'<td class="n">{f"{f.share:.0%}" if f and f.share is not None else ""}</td>',
                      f'<td class="n">{f"{f.allowance:,}" if f and f.allowance is not None else ""}</td>']
        counts = (f.pinned + f.required, f.kept, f.evicted, f.summarised) if f else ("", "", "", "")
        cells += [f'<td class="n">{v}</td>' for v in counts]
        out.append("<tr>" + "".join(cells) + "</tr>")
    total = sum(r.tokens for r in rows)
    out.append(f'<tr><td>context limit (total)</td><td class="n">{total:,}</td>'
               f'<td class="n">{percent(sum(r.of_window for r in rows))}</td>' + "<td></td>" * (len(head) - 3) + "</tr>")
    return "".join(out) + "</table>"


def html_report(result: AssemblyResult, findings: list[Finding] | None = None, *, title: str | None = None,
                redact: bool = False, messages: Callable[[AssemblyResult, bool], list] | None = None,
                arguments: Callable[[Any], str] = str) -> str:
    """One HTML file: the budget bar in the fit-to-input and whole-window views (inline SVG), the
    composition table, the items and the audit findings; the messages too, unless redacted."""
    palette = SectionPalette()
    title = title or f"Context report: {result.request_id or result.strategy}"
    counter = result.counter.name if result.counter else "unknown counter"
    extra = result.model_extra or {}
    basis = bar_basis(result)
    used = (f"{basis.input_tokens:,} as the provider recorded them (the bar is drawn to them; our estimate "
            f"{basis.ours:,}, drift {basis.drift:+,}, an estimate: no public tokenizer)" if basis.provider
            else f"{result.input_tokens:,}")
    facts = [("strategy", result.strategy), ("counter", counter),
             ("input tokens", f"{used} of an allowance of {result.input_budget:,} "
                              f"({result.input_budget - basis.input_tokens:,} left)"),
             ("context limit", f"{result.context_limit:,} = allowance + output reserve {result.max_new_tokens:,} "
                               f"+ margin {result.margin:,}")]
    for key in ("source_format", "model", "provider_input_tokens", "count_drift", "finish_reason", "trace_id",
                "span_id", "context_limit_source", "count_basis"):
        if extra.get(key) is not None:
            facts.append((key.replace("_", " "), extra[key]))
    rows = []
    for e in result.trace:
        where = ", ".join(str(i) for i in e.message_indices)
        rows.append(f'<tr class="{esc(e.decision)}"><td>{esc(e.section)}</td><td>{esc(e.id)}</td>'
                    f'<td>{esc(e.decision)}</td><td class="n">{e.tokens}</td><td>{esc(where)}</td>'
                    f'<td>{esc(e.reason)}</td></tr>')
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>{esc(title)}</title><style>{_STYLE}</style></head><body>",
           f"<h1>{esc(title)}</h1>",
           "<dl>" + "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in facts) + "</dl>",
           "<h2>Budget</h2>", '<h3 class="bar">Fit to input: what was sent and what was not</h3>',
           budget_svg(result, view="fit", palette=palette),
           '<h3 class="bar">Whole window: 0 to the context limit</h3>', budget_svg(result, palette=palette),
           _legend(result, palette),
           "<h2>Composition</h2>", composition_table(result, palette),
           "<h2>Items</h2><table><tr><th>section</th><th>item</th><th>decision</th><th>tokens</th>"
           "<th>messages</th><th>reason</th></tr>" + "".join(rows) + "</table>",
           "<h2>Audit findings</h2>"]
    if findings is None:
        out.append("<p>The audit was not run for this report.</p>")
    elif not findings:
        out.append("<p>No findings.</p>")
    else:
        out.append("<table><tr><th>severity</th><th>rule</th><th>where</th><th>finding</th></tr>" + "".join(
            f'<tr><td class="{esc(f.severity)}">{esc(f.severity)}</td><td>{esc(f.rule)}</td>'
            f"<td>{esc(f.location())}</td><td>{esc(f.message)}</td></tr>" for f in findings) + "</table>")
    out.append("<h2>Messages</h2>")
    for i, m in enumerate(messages(result, redact) if messages is not None else result.messages):
        calls = "".join(f"<pre>call {esc(c.id)}: {esc(c.name)}({esc(arguments(c))})</pre>" for c in m.tool_calls)
        answered = f" (result of {esc(m.tool_call_id)})" if m.tool_call_id else ""
        body = f"<pre>{esc(m.content)}</pre>" if m.content is not None else ""
        out.append(f"<h3>{i}: {esc(m.role)}{answered}</h3>{body}{calls}")
    out.append("</body></html>\n")
    return "\n".join(out)

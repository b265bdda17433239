"""oprofile listings as a paper prints them (Yoshioka 2005's "Top 5" tables).

oprofile prints, for each symbol, its samples and its share of all samples in percent with
four decimals; the listings show only the top five symbols, never the total. The total is
still pinned down by the rounding: ``samples / total * 100`` must round to the printed
percentage, so every row gives an interval of possible totals and a consistent listing has
a total inside all of them.

    >>> from emu import oprofile
    >>> oprofile.implied_total(37017, 63.4603)              # doctest: +ELLIPSIS
    (58330.91..., 58331.00...)
    >>> lo, hi = oprofile.listing_total("l3_misses", "original")

``top5_figure(metric)`` draws the listing before and after the patch side by side.
"""
from __future__ import annotations

import math

from ...present import data
from ...present.plot import COLORS, style

PERCENT_DECIMALS = 4        # oprofile's "%" columns, e.g. 15.2083

#: metric -> (dataset, samples column, percent column, what one sample counts)
METRICS = {
    "cycles": ("yoshioka2005_top5_cycles", "samples", "percent",
               "GLOBAL_POWER_EVENTS samples (100000 cycles each)"),
    "references": ("yoshioka2005_top5_memory", "references_samples", "references_percent",
                   "BSQ_CACHE_REFERENCE 0x3f samples (3000 bus-unit cache references each)"),
    "l3_misses": ("yoshioka2005_top5_memory", "l3_misses_samples", "l3_misses_percent",
                  "BSQ_CACHE_REFERENCE 0x200 samples (3000 read L3 misses each)"),
}
KERNELS = ("original", "optimized")
#: the copy routine of each kernel: where the patch moved the time
COPY_ROUTINE = {"original": "__copy_from_user_ll", "optimized": "_mmx_memcpy_nt"}


def _metric(metric):
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}: choose one of {', '.join(METRICS)}")
    return METRICS[metric]


def implied_total(samples, percent, decimals=PERCENT_DECIMALS):
    """(lowest, highest) total of which ``samples`` is ``percent`` per cent, when the
    percentage was rounded to ``decimals`` places (the bounds are open by half a unit)."""
    if isinstance(samples, bool) or not float(samples).is_integer() or samples <= 0:
        raise ValueError(f"samples must be a positive whole number, not {samples!r}")
    half = 0.5 * 10.0 ** -decimals
    if not (isinstance(percent, (int, float)) and math.isfinite(percent)) \
            or not half < percent <= 100:
        raise ValueError(f"percent must be a printed share above {half} and at most 100, "
                         f"not {percent!r}")
    return samples * 100 / (percent + half), samples * 100 / (percent - half)


def listing(metric, kernel):
    """The rows of one printed listing (one kernel's top five for ``metric``), by rank."""
    name, _, _, _ = _metric(metric)
    if kernel not in KERNELS:
        raise ValueError(f"unknown kernel {kernel!r}: choose one of {', '.join(KERNELS)}")
    df = data.load(name)
    return df[df["kernel"] == kernel].sort_values("rank").reset_index(drop=True)


def listing_total(metric, kernel, decimals=PERCENT_DECIMALS):
    """(lowest, highest) total samples that every row of the listing agrees with.

    Raises ``ValueError`` naming the rows if no total fits them all (a mistyped number)."""
    _, samples, percent, _ = _metric(metric)
    rows = listing(metric, kernel)
    lo, hi, low_row, high_row = 0.0, math.inf, None, None
    for row in rows.itertuples(index=False):
        a, b = implied_total(getattr(row, samples), getattr(row, percent), decimals)
        if a > lo:
            lo, low_row = a, row.symbol
        if b < hi:
            hi, high_row = b, row.symbol
    if lo > hi:
        raise ValueError(f"{metric}, {kernel}: no total fits every row: {low_row} needs at "
                         f"least {lo:.1f}, {high_row} at most {hi:.1f}")
    return lo, hi


def top5_figure(metric="cycles", value="percent"):
    """The listing before and after the patch, side by side: horizontal bars of each
    symbol's share (``value="percent"``) or samples (``value="samples"``), the copy
    routine in the kernel's colour, the other symbols grey, the provenance as subtitle."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots


    name, samples_col, percent_col, unit = _metric(metric)
    if value not in ("percent", "samples"):
        raise ValueError(f"value must be 'percent' or 'samples', not {value!r}")
    column = percent_col if value == "percent" else samples_col
    titles = {"original": "before the patch (__copy_from_user_ll)",
              "optimized": "after the patch (_mmx_memcpy_nt)"}
    fig = make_subplots(rows=1, cols=2, subplot_titles=[titles[k] for k in KERNELS],
                        shared_xaxes=True, horizontal_spacing=0.25)
    top = 0
    for col, kernel in enumerate(KERNELS, 1):
        rows = listing(metric, kernel)
        colors = [COLORS[kernel] if s == COPY_ROUTINE[kernel] else COLORS["published"]
                  for s in rows["symbol"]]
        fig.add_trace(go.Bar(
            x=rows[column], y=rows["symbol"], orientation="h", marker_color=colors,
            name=kernel, showlegend=False,
            text=[f"{v:.4f}%" if value == "percent" else f"{v:,}" for v in rows[column]],
            textposition="auto",
            customdata=list(zip(rows[samples_col], rows[percent_col])),
            hovertemplate="%{y}<br>%{customdata[0]:,} samples, %{customdata[1]:.4f}%"
                          "<extra></extra>"), row=1, col=col)
        fig.update_yaxes(autorange="reversed", row=1, col=col)
        top = max(top, float(rows[column].max()))
    fig.update_xaxes(range=[0, top * 1.1])
    what = "share of all samples (%)" if value == "percent" else "samples"
    # one line per listing: the caption is long, and the panel titles sit under it
    source = data.provenance(data.load(name)).replace("; ", ";<br>")
    style(fig, title=f"oprofile top 5: {unit}", x=what, source=source, height=440)
    fig.update_layout(margin_t=140)
    return fig

"""Writing results: JSON, markdown tables and PNG plots (matplotlib, Agg backend), and 95% t-intervals."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


def t_interval(values: Sequence[float], confidence: float = 0.95) -> dict[str, float | int | None]:
    """Mean and two-sided Student-t confidence interval of ``values`` (independent samples, e.g. one per seed).

    Returns ``{"mean", "lo", "hi", "half", "n"}``; with fewer than 2 values the interval is None.
    """
    vals = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    n = len(vals)
    if n == 0:
        return {"mean": None, "lo": None, "hi": None, "half": None, "n": 0}
    mean = sum(vals) / n
    if n < 2:
        return {"mean": mean, "lo": None, "hi": None, "half": None, "n": n}
    from scipy import stats

    sd = math.sqrt(sum((v - mean) ** 2 for v in vals) / (n - 1))
    half = float(stats.t.ppf(0.5 + confidence / 2, n - 1)) * sd / math.sqrt(n)
    return {"mean": mean, "lo": mean - half, "hi": mean + half, "half": half, "n": n}


def fmt(value: Any, digits: int = 3) -> str:
    """A table cell: numbers rounded, None as an en dash."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "–"
        return f"{value:.{digits}f}"
    if isinstance(value, dict) and "mean" in value:
        if value.get("half") is None:
            return fmt(value["mean"], digits)
        return f"{value['mean']:.{digits}f} ± {value['half']:.{digits}f}"
    return str(value)


def markdown_table(rows: Sequence[dict[str, Any]], columns: Sequence[tuple[str, str]], digits: int = 3) -> str:
    """A GitHub markdown table; ``columns`` are ``(key, header)`` pairs."""
    head = "| " + " | ".join(h for _, h in columns) + " |"
    rule = "|" + "|".join("---" for _ in columns) + "|"
    body = ["| " + " | ".join(fmt(r.get(k), digits) for k, _ in columns) + " |" for r in rows]
    return "\n".join([head, rule, *body])


def write_json(path: Path, data: Any) -> None:
    """Write ``data`` as indented JSON (keys in insertion order)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")


def bar_chart(path: Path, labels: Sequence[str], series: Mapping[str, Sequence[float | None]], *, title: str,
              ylabel: str, errors: Mapping[str, Sequence[float | None]] | None = None) -> None:
    """Grouped bar chart: one group per label, one bar per series; optional error bars (half-widths)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path.parent.mkdir(parents=True, exist_ok=True)
    n = max(1, len(series))
    width = 0.8 / n
    fig, ax = plt.subplots(figsize=(min(14.0, max(6.0, 0.3 * len(labels) * n + 2.0)), 4.5))
    for k, (name, values) in enumerate(series.items()):
        xs = [i + (k - (n - 1) / 2) * width for i in range(len(labels))]
        ys = [v if v is not None else 0.0 for v in values]
        err = None
        if errors and name in errors:
            err = [e if e is not None else 0.0 for e in errors[name]]
        ax.bar(xs, ys, width=width, label=name, yerr=err, capsize=2 if err else 0)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=20, ha="right")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if len(series) > 1:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)

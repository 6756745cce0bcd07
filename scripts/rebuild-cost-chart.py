#!/usr/bin/env python3
"""Draw docs/img/rebuild-cost.png from the reports of rebuild-cost runs.

    scripts/rebuild-cost-chart.py OUT.png REPORT.json:LABEL [REPORT.json:LABEL ...]

Each REPORT is the --report of `tui --headless --scenario rebuild-cost`. The
chart is the dashboard's (time to caught_up against the history the topic
held, the history on a log scale, one series per strategy), one line style per
report; the figures go to stdout as the table of docs/performance.md.
Needs matplotlib (python3 -m venv V && V/bin/pip install matplotlib).
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

STRATEGIES = [("replay", "o", "tab:orange"), ("snapshot", "s", "tab:green"), ("changelog", "^", "tab:blue")]
STYLES = ["-", "--", ":"]


def measures(path):
    """{(method, history): (millis, records_read)} of the report's rebuilds,
    the latest of each; a rebuild that fell back counts as a replay."""
    with open(path) as f:
        report = json.load(f)
    current = next(p for p in report["processes"] if p["name"] == "consumer-current")
    out = {}
    for r in current.get("rebuilds") or []:
        if r["millis"] is None or not r["history"]:
            continue
        method = "replay" if r["fell_back"] else r["strategy"]
        out[(method, r["history"])] = (r["millis"], r["records_read"])
    return out


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    out_png, runs = argv[1], [a.rsplit(":", 1) for a in argv[2:]]
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=110)
    print("| history | broker | replay | snapshot | changelog |")
    print("|---:|---|---:|---:|---:|")
    for i, (path, label) in enumerate(runs):
        m = measures(path)
        for name, marker, colour in STRATEGIES:
            pts = sorted((h, ms) for (method, h), (ms, _) in m.items() if method == name)
            if pts:
                ax.plot([h for h, _ in pts], [ms for _, ms in pts], STYLES[i % len(STYLES)], marker=marker,
                        color=colour, label=f"{name} ({label})")
        for h in sorted({h for (_, h) in m}):
            cells = []
            for name, _, _ in STRATEGIES:
                if (name, h) in m:
                    ms, read = m[(name, h)]
                    cells.append(f"{ms:,} ms, {read:,} read")
                else:
                    cells.append("—")
            print(f"| {h:,} | {label} | " + " | ".join(cells) + " |")
    ax.set_xscale("log")
    ax.set_xlabel("messages in the topic (history)")
    ax.set_ylabel("start to caught_up (ms)")
    ax.set_title("consumer-current's rebuild: time against history")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out_png)


if __name__ == "__main__":
    main(sys.argv)

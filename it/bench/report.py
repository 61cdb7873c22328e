#!/usr/bin/env python3
"""Summarise bench-failover results: Markdown table (with kraftwerk/Java and
kraftwerk/ZooKeeper ratios from the same run) and a PNG plot of failover time vs partitions.

usage: report.py RESULTS.csv OUT_DIR [--machine TEXT] [--elapsed TEXT]
writes OUT_DIR/table.md and OUT_DIR/failover.png; prints the table.
The CSV is the long form written by `kraftwerk-it bench-failover`
(run_id,system,version,partitions,mode,rep,metric,value,unit).
"""
import csv
import statistics
import sys
from collections import defaultdict

# Columns in this order; the -kv1 systems (kraft.version 1, voter set in the log) and the -tls
# systems (controller listener on SSL, mutual TLS) only when the run has them.
ALL_SYSTEMS = ["kraftwerk", "kraftwerk-kv1", "kraftwerk-tls", "java", "java-kv1", "java-tls", "zookeeper"]
OPTIONAL = {"kraftwerk-kv1", "java-kv1", "kraftwerk-tls", "java-tls"}
SYSTEMS = list(ALL_SYSTEMS)
LABEL = {
    "kraftwerk": "kraftwerk",
    "kraftwerk-kv1": "kraftwerk kraft.version 1",
    "java": "Java controller",
    "java-kv1": "Java kraft.version 1",
    "kraftwerk-tls": "kraftwerk TLS",
    "java-tls": "Java TLS",
    "zookeeper": "ZooKeeper mode",
}

# (row label, metric, mode filter or None, aggregate, unit)
ROWS = [
    ("controlled failover (SIGTERM → CreateTopics ok)", "failover_controlled_ms", None, "median", "ms"),
    ("uncontrolled failover (SIGKILL → CreateTopics ok)", "failover_uncontrolled_ms", None, "median", "ms"),
    ("restart catch-up, snapshot present", "catchup_after_kill_ms", "snapshot", "median", "ms"),
    ("restart catch-up, replay from offset 0", "catchup_after_kill_ms", "replay", "median", "ms"),
    ("snapshot size", "snapshot_bytes", "snapshot", "max", "KiB"),
    ("snapshot write time", "snapshot_write_ms", "snapshot", "max", "ms"),
    ("controller peak RSS (VmHWM)", "controller_rss_bytes", None, "max", "MiB"),
    ("ZooKeeper server peak RSS (VmHWM)", "zookeeper_rss_bytes", None, "max", "MiB"),
    ("building the metadata (CreateTopics)", "create_all_ms", None, "median", "ms"),
]


def load(path):
    data = defaultdict(list)  # (system, partitions, metric, mode) -> values
    versions = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            key = (r["system"], int(r["partitions"]), r["metric"], r["mode"])
            data[key].append(float(r["value"]))
            versions[r["system"]] = r["version"]
    return data, versions


def values(data, system, n, metric, mode):
    out = []
    for (s, p, m, md), v in data.items():
        if s == system and p == n and m == metric and (mode is None or md == mode):
            out.extend(v)
    return out


def agg(vals, how):
    if not vals:
        return None
    return max(vals) if how == "max" else statistics.median(vals)


def fmt(v, unit, vals=None):
    if v is None:
        return "–"
    if unit == "KiB":
        v = v / 1024
    elif unit == "MiB":
        v = v / (1024 * 1024)
    s = f"{v:,.0f}" if v >= 10 else f"{v:.1f}"
    if vals and len(vals) > 1 and unit == "ms":
        lo, hi = min(vals), max(vals)
        s += f" ({lo:,.0f}–{hi:,.0f})"
    return s


def ratio(a, b):
    if a is None or b is None or b == 0:
        return "–"
    return f"{a / b:.2f}"


def table(data, versions):
    sizes = sorted({p for (_, p, _, _) in data})
    lines = []
    kv1 = "kraftwerk-kv1" in SYSTEMS
    head = ["partitions", "figure"] + [LABEL[s] for s in SYSTEMS] + ["kraftwerk/Java", "kraftwerk/ZooKeeper"]
    if kv1:
        head.append("kraftwerk kv1/kv0")
    tls = [s for s in ("kraftwerk", "java") if f"{s}-tls" in SYSTEMS]
    head += [f"{LABEL[s + '-tls']}/plaintext" for s in tls]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "|".join(["---:" if i == 0 else ("---" if i == 1 else "---:") for i in range(len(head))]) + "|")
    for n in sizes:
        for label, metric, mode, how, unit in ROWS:
            cells, aggs = [], {}
            for s in SYSTEMS:
                vals = values(data, s, n, metric, mode)
                aggs[s] = agg(vals, how)
                cells.append(fmt(aggs[s], unit, vals if how == "median" else None))
            if all(a is None for a in aggs.values()):
                continue
            line = (
                f"| {n:,} | {label} ({unit}) | "
                + " | ".join(cells)
                + f" | {ratio(aggs.get('kraftwerk'), aggs.get('java'))} | {ratio(aggs.get('kraftwerk'), aggs.get('zookeeper'))} |"
            )
            if kv1:
                line += f" {ratio(aggs.get('kraftwerk-kv1'), aggs.get('kraftwerk'))} |"
            for s in tls:
                line += f" {ratio(aggs.get(s + '-tls'), aggs.get(s))} |"
            lines.append(line)
    vers = ", ".join(f"{LABEL[s]} {versions[s]}" for s in SYSTEMS if s in versions)
    loads = [v for (s, p, m, md), vs in data.items() if m == "load_avg_1m_at_start" for v in vs]
    if loads:
        vers += f". 1-minute load average at the start of the runs: {min(loads):.1f}–{max(loads):.1f}"
    return "\n".join(lines), vers


def plot(data, out):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5), sharey=True)
    styles = {
        "kraftwerk": ("tab:red", "o"),
        "kraftwerk-kv1": ("tab:orange", "D"),
        "java": ("tab:blue", "s"),
        "java-kv1": ("tab:cyan", "v"),
        "kraftwerk-tls": ("tab:purple", "P"),
        "java-tls": ("tab:gray", "X"),
        "zookeeper": ("tab:green", "^"),
    }
    for ax, (metric, title) in zip(
        axes,
        [("failover_controlled_ms", "controlled (SIGTERM)"), ("failover_uncontrolled_ms", "uncontrolled (SIGKILL)")],
    ):
        for s in SYSTEMS:
            pts = []
            for n in sorted({p for (sy, p, m, _) in data if sy == s and m == metric}):
                v = values(data, s, n, metric, None)
                if v:
                    pts.append((n, statistics.median(v), min(v), max(v)))
            if not pts:
                continue
            xs = [p[0] for p in pts]
            ys = [p[1] / 1000 for p in pts]
            lo = [(p[1] - p[2]) / 1000 for p in pts]
            hi = [(p[3] - p[1]) / 1000 for p in pts]
            c, m = styles[s]
            ax.errorbar(xs, ys, yerr=[lo, hi], color=c, marker=m, capsize=3, label=LABEL[s])
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"failover, {title}")
        ax.set_xlabel("partitions")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("signal → first successful CreateTopics (s)\nmedian, bars: min–max")
    axes[1].legend()
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    path, out_dir = sys.argv[1], sys.argv[2]
    extra = sys.argv[3:]
    machine = extra[extra.index("--machine") + 1] if "--machine" in extra else ""
    elapsed = extra[extra.index("--elapsed") + 1] if "--elapsed" in extra else ""
    data, versions = load(path)
    present = {s for (s, _, _, _) in data}
    SYSTEMS[:] = [s for s in ALL_SYSTEMS if s not in OPTIONAL or s in present]
    t, vers = table(data, versions)
    text = t + "\n\n" + f"Versions: {vers}." + (f" Machine: {machine}." if machine else "") + (
        f" Benchmark wall time: {elapsed}." if elapsed else ""
    ) + "\n"
    with open(f"{out_dir}/table.md", "w") as f:
        f.write(text)
    print(text)
    try:
        plot(data, f"{out_dir}/failover.png")
        print(f"plot: {out_dir}/failover.png")
    except ImportError as e:
        print(f"no plot (matplotlib missing: {e})", file=sys.stderr)


if __name__ == "__main__":
    main()

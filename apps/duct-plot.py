#!/usr/bin/python3
"""duct-plot: duct-bench results as a picture.

Reads the output of one or several duct-bench runs (files, or standard
input when none or "-" is given; every collective, several rank counts)
and writes a PNG: busbw (or, with --time, the time per call) against the
message size on log axes, one panel per collective. Each run draws duct
out-of-place (solid), duct in-place (dashed) and the column duct-bench
measured beside it (dotted black: the MPI library on host buffers, the
host-staged path on device buffers). Where duct out-of-place is slower
than that column, the point is marked in red with the ratio (its time /
duct's time, below 1). The title and the foot of the picture carry the
machine line of each run (ranks, nodes, buffers, device), its date and
its command, as duct-bench printed them.

  duct-plot r.txt -o r.png
  duct-plot 2ranks.txt 4ranks.txt --bound 25 -o allreduce.png
  duct-plot *.txt --bound allreduce=0.375 --bound bcast=0.25 -o cluster.png
  mpirun -np 2 duct-bench | duct-plot -o r.png

Lines written before a run's "# duct-bench" header describe it: "# label:
TEXT" is added to its legend entries (e.g. "MPS"), "# reference: TEXT"
names its third column (bench_cluster.sh --raw writes "Open MPI coll/han"
for its second run). Runs of the same collective, ranks, buffers and label
are drawn each in its own colour, named by their reference; runs that
also share the reference (a sweep and one more size) make one series.

Needs matplotlib (Debian: python3-matplotlib, for /usr/bin/python3).
Exit status: 0 written; 2 the input has no data it can plot, or a row is
cut short (the message names the file and line).
"""

import argparse
import math
import re
import sys
import textwrap

# duct-bench's result rows: size count type redop root, then (time algbw
# busbw #wrong) for duct out-of-place, duct in-place and the reference
# column, then the speed-up (reference time / duct time).
ROW_FIELDS = 18
HEADER = re.compile(r"^# duct-bench (\S+)(?: \(([^)]*)\))?: (\w+), (\d+) ranks on (\d+) node\(s\), (.+?) buffers, (\S+) (\S+),")
GROUPS = re.compile(r"^#\s+duct out-of-place\s+duct in-place\s+(.+?)\s*$")

PANEL_W, PANEL_H, HEAD_H, LINE_H, DPI = 5.5, 4.0, 0.7, 0.12, 100


class InputError(Exception):
    pass


class Run:
    def __init__(self, where, m):
        self.where = where
        self.version, self.build = m.group(1), m.group(2) or ""
        self.coll, self.ranks, self.nodes = m.group(3), int(m.group(4)), int(m.group(5))
        self.buffers, self.dtype, self.op = m.group(6), m.group(7), m.group(8)
        self.run_line = ""  # "# run: DATE on HOST: COMMAND"
        self.device = ""
        self.reference = "reference"
        self.reference_named = False
        self.overlap = False
        self.tag = ""  # "# label:" text
        self.rows = []  # (size, t_oop, bus_oop, t_ip, bus_ip, t_ref, bus_ref)

    def machine(self):
        s = f"{self.ranks} ranks on {self.nodes} node(s), {self.buffers} buffers"
        if self.device:
            s += f" ({self.device})"
        return s

    def label(self):
        return f"{self.ranks} ranks" + (f", {self.nodes} nodes" if self.nodes > 1 else "") + \
            (f", {self.tag}" if self.tag else "")


def number(tok):
    return None if tok in ("-", "N/A") else float(tok)


def parse(text, name):
    runs, pending = [], {}
    run = None
    lines = text.splitlines()
    for i, line in enumerate(lines, 1):
        where = f"{name}:{i}"
        if line.startswith("#"):
            m = HEADER.match(line)
            if m:
                run = Run(where, m)
                if "reference" in pending:
                    run.reference, run.reference_named = pending["reference"], True
                run.tag = pending.get("label", "")
                pending = {}
                runs.append(run)
                continue
            for key in ("reference", "label"):
                if line.startswith(f"# {key}:"):
                    pending[key] = line.split(":", 1)[1].strip()
            if line.startswith(("# reference:", "# label:")):
                continue
            if run is None:
                continue
            if line.startswith("# run:"):
                run.run_line = line[len("# run:"):].strip()
            elif line.startswith("# device:"):
                run.device = line.split(":", 1)[1].strip()
            elif line.startswith("# overlap mode"):
                run.overlap = True
            else:
                g = GROUPS.match(line)
                if g and not run.reference_named:
                    run.reference = g.group(1)
            continue
        f = line.split()
        if not f or not f[0].isdigit() or run is None:
            continue
        if run.overlap:
            continue
        if len(f) != ROW_FIELDS:
            raise InputError(f"{where}: a result row with {len(f)} fields, expected {ROW_FIELDS} (truncated?): {line.strip()!r}")
        try:
            size = int(f[0])
            vals = [number(f[k]) for k in (5, 7, 9, 11, 13, 15)]
        except ValueError:
            raise InputError(f"{where}: a result row that is not numbers where duct-bench writes them: {line.strip()!r}")
        run.rows.append((size, *vals))
    return runs


def size_label(b):
    for unit, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if b >= scale and b % scale == 0:
            return f"{b // scale}{unit}"
    return f"{int(b)}"


def main(argv=None):
    ap = argparse.ArgumentParser(prog="duct-plot", description="duct-bench results as a PNG: busbw or time against size.")
    ap.add_argument("inputs", nargs="*", help="duct-bench output files (none or -: standard input)")
    ap.add_argument("-o", "--output", default="duct-plot.png", help="PNG to write (default duct-plot.png)")
    ap.add_argument("--time", action="store_true", help="plot the time per call (us) instead of busbw (GB/s)")
    ap.add_argument("--bound", action="append", default=[], metavar="[COLL=]GBPS",
                    help="draw a physical limit (busbw, GB/s) as a line: in every panel, or in COLL's (repeatable)")
    ap.add_argument("--bound-label", default="bound", help="legend text of --bound (default: bound)")
    ap.add_argument("--title", default="", help="a first line of the title")
    a = ap.parse_args(argv)

    bounds = {}
    for b in a.bound:
        coll, _, value = b.rpartition("=")
        try:
            bounds[coll or None] = float(value)
        except ValueError:
            print(f"duct-plot: --bound {b}: expected GBPS or COLLECTIVE=GBPS (a number of GB/s)", file=sys.stderr)
            return 2

    runs = []
    for name in a.inputs or ["-"]:
        try:
            text = sys.stdin.read() if name == "-" else open(name, encoding="utf-8", errors="replace").read()
        except OSError as e:
            print(f"duct-plot: {name}: {e.strerror}", file=sys.stderr)
            return 2
        label = "<stdin>" if name == "-" else name
        try:
            got = parse(text, label)
        except InputError as e:
            print(f"duct-plot: {e}", file=sys.stderr)
            return 2
        if not any(r.rows for r in got):
            what = "an overlap-mode (-O) run, which is not plotted" if any(r.overlap for r in got) else \
                "no result rows after a '# duct-bench ...' header line" if got else "no '# duct-bench ...' header line"
            print(f"duct-plot: {label}: nothing to plot: {what}", file=sys.stderr)
            return 2
        runs += [r for r in got if r.rows]

    # Runs of one configuration and reference (a size sweep and its largest
    # size, run separately) make one series.
    merged = {}
    for r in runs:
        key = (r.coll, r.ranks, r.nodes, r.buffers, r.tag, r.reference)
        if key in merged:
            merged[key].rows += r.rows
            if r.run_line and r.run_line not in merged[key].run_line:
                merged[key].run_line += " | " + r.run_line
        else:
            merged[key] = r
    runs = list(merged.values())
    for r in runs:
        r.rows.sort(key=lambda row: row[0])

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.lines import Line2D
        from matplotlib.ticker import FuncFormatter
    except ImportError:
        print("duct-plot: needs matplotlib (Debian: apt-get install python3-matplotlib; run with /usr/bin/python3)", file=sys.stderr)
        return 2

    colls = []
    for r in runs:
        if r.coll not in colls:
            colls.append(r.coll)
    ncols = min(3, len(colls))
    nrows = math.ceil(len(colls) / ncols)
    w = round(ncols * PANEL_W * DPI)
    # The foot: each run's date, host and command (wrapped to the width).
    notes = []
    for r in runs:
        n = f"{r.coll}, {r.label()}: {r.run_line or '(no run line: duct-bench before 2026-11-23)'}"
        for part in textwrap.wrap(n, width=max(40, int(w / 5.2)), subsequent_indent="    "):
            if part not in notes:
                notes.append(part)
    # The head: what ran where, grouped by nodes, buffers and device.
    groups = {}
    for r in runs:
        g = (r.nodes, r.buffers, r.device)
        groups.setdefault(g, [])
        if r.ranks not in groups[g]:
            groups[g].append(r.ranks)
    machines = [f"{', '.join(map(str, sorted(rk)))} ranks on {n} node(s), {b} buffers" + (f" ({d})" if d else "")
                for (n, b, d), rk in groups.items()]
    width = max(40, int(w / 6.8))
    head = "\n".join(textwrap.wrap(a.title, width=width) + textwrap.wrap("duct-bench: " + "; ".join(machines), width=width))
    head_h = HEAD_H + 0.16 * (head.count("\n"))
    foot_h = LINE_H * (len(notes) + 1)
    fig_h = nrows * PANEL_H + head_h + foot_h
    h = round(fig_h * DPI)  # whole pixels (savefig truncates)
    fig = plt.figure(figsize=((w + 0.25) / DPI, (h + 0.25) / DPI), dpi=DPI)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    ylabel = "time per call (us)" if a.time else "busbw (GB/s)"
    # Line styles say which column; colours say which run.
    styles = {"duct": ("-", "o"), "duct in-place": ("--", "s"), "reference": (":", "x")}

    for ci, coll in enumerate(colls):
        ax = fig.add_subplot(nrows, ncols, ci + 1)
        mine = [r for r in runs if r.coll == coll]
        if coll == "barrier":  # no size: one time per run, as bars
            names, times, cols = [], [], []
            for ri, r in enumerate(mine):
                row = r.rows[0]
                for t, name, c in ((row[1], f"duct, {r.label()}", colors[ri % len(colors)]),
                                   (row[5], f"{r.reference}, {r.label()}", "black")):
                    if t:
                        names.append(name)
                        times.append(t)
                        cols.append(c)
            ax.barh(range(len(times)), times, color=cols, height=0.6, alpha=0.85)
            for i, (name, t) in enumerate(zip(names, times)):  # the names inside the bars: no margin to fit
                ax.text(max(times) * 0.02, i, f"{name}: {t:.2f} us", va="center", fontsize=7, color="white",
                        fontweight="bold")
            ax.set_yticks([])
            ax.invert_yaxis()
            ax.set_xlabel("time per call (us)", fontsize=8)
            ax.set_title("barrier", fontsize=10)
            ax.tick_params(labelsize=7)
            ax.grid(True, axis="x", alpha=0.3)
            continue
        handles, refs = [], {}  # reference name -> colours drawn in
        # busbw from the time (duct-bench prints it rounded to 1 MB/s): algbw
        # times the collective's factor for the run's ranks, as duct-bench
        # and nccl-tests define it.
        def pick(r, row, k):
            t = row[1 + 2 * k]
            if a.time or not t:
                return t
            n = r.ranks
            factor = 2 * (n - 1) / n if r.coll == "allreduce" else 1.0 if r.coll in ("bcast", "reduce") else (n - 1) / n
            return row[0] / (t * 1e3) * factor

        keys = [(r.ranks, r.nodes, r.buffers, r.tag) for r in mine]
        single = len(mine) == 1
        for ri, r in enumerate(mine):
            color = colors[ri % len(colors)]
            # Runs of one set-up beside different references (bench_cluster.sh:
            # the MPI library's defaults, then coll/han) are told apart by it.
            label = r.label() + (f" (run beside {r.reference})" if keys.count(keys[ri]) > 1 else "")
            handles.append(Line2D([], [], color=color, lw=3, label=label))
            for k, name in ((0, "duct"), (1, "duct in-place")):
                pts = [(row[0], pick(r, row, k)) for row in r.rows if pick(r, row, k)]
                if pts:
                    ls, mk = styles[name]
                    ax.plot(*zip(*pts), ls=ls, marker=mk, color=color, ms=3.5, lw=1.4)
            # duct out-of-place slower than the reference column: red, with the ratio
            for row in r.rows:
                t, tr, y = row[1], row[5], pick(r, row, 0)
                if t and tr and tr < t and y:
                    ax.plot([row[0]], [y], "o", color="red", ms=5, zorder=5)
                    ax.annotate(f"{tr / t:.2f}x", (row[0], y), textcoords="offset points", xytext=(3, -10),
                                fontsize=7, color="red")
            pts = [(row[0], pick(r, row, 2)) for row in r.rows if pick(r, row, 2)]
            if pts:
                ls, mk = styles["reference"]
                # One run: the reference in black; several: in the run's colour, lighter.
                ax.plot(*zip(*pts), ls=ls, marker=mk, color="black" if single and ri == 0 else color,
                        alpha=1.0 if single and ri == 0 else 0.6, ms=4, lw=1.4)
                refs.setdefault(r.reference, set()).add("black" if single and ri == 0 else color)
        for name in ("duct", "duct in-place"):
            ls, mk = styles[name]
            handles.append(Line2D([], [], color="gray", ls=ls, marker=mk, ms=4, label=name))
        for ref, cs in refs.items():
            ls, mk = styles["reference"]
            handles.append(Line2D([], [], color=next(iter(cs)) if len(cs) == 1 else "gray", ls=ls, marker=mk, ms=4,
                                  label=ref))
        bound = bounds.get(coll, bounds.get(None))
        if bound and not a.time:
            ax.axhline(bound, color="gray", lw=1, ls="-.")
            handles.append(Line2D([], [], color="gray", lw=1, ls="-.", label=f"{a.bound_label} ({bound:g} GB/s)"))
        if any(row[1] and row[5] and row[5] < row[1] for r in mine for row in r.rows):
            handles.append(Line2D([], [], color="red", ls="", marker="o", ms=5, label="duct slower (ratio)"))
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: size_label(int(v)) if v >= 1 else ""))
        ax.set_title(f"{coll} ({mine[0].dtype}{'' if mine[0].op == '-' else ' ' + mine[0].op})", fontsize=10)
        ax.set_xlabel("size per rank (bytes)", fontsize=8)
        ax.set_ylabel(ylabel, fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(True, which="major", alpha=0.3)
        # busbw rises to the right (its lower right is empty), time too (its upper left is)
        ax.legend(handles=handles, fontsize=6, loc="lower right" if not a.time else "upper left", framealpha=0.85)

    fig.suptitle(head, fontsize=9, y=1 - 0.06 / fig_h)
    for i, n in enumerate(notes):
        fig.text(0.01, (foot_h - LINE_H * (i + 1)) / fig_h, n, fontsize=6, family="monospace", va="bottom")
    fig.subplots_adjust(left=0.6 / (ncols * PANEL_W), right=1 - 0.15 / (ncols * PANEL_W),
                        top=1 - head_h / fig_h, bottom=(foot_h + 0.45) / fig_h, hspace=0.5, wspace=0.28)
    try:
        fig.savefig(a.output, dpi=DPI)
    except OSError as e:
        print(f"duct-plot: {a.output}: {e.strerror}", file=sys.stderr)
        return 2
    print(f"duct-plot: wrote {a.output} ({w}x{h} px, {len(colls)} panel(s): {', '.join(colls)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

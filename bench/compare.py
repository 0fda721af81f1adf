"""Compare two benchmark results written by bench/run.py.

    python bench/compare.py OLD.json NEW.json [--timing] [--all]

Prints the commits, changed platform parameters, target status changes, rows added or removed,
and for every row present in both the figures that changed (old -> new, relative change).
Generation times are wall-clock noise and only compared with ``--timing``. Exit status 0.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

FIELDS = ("tiles", "l1_bytes", "traffic_ratio", "predicted_cycles", "simulated_cycles", "roofline_cycles",
          "sim_vs_roofline", "prediction_error_pct", "bound",
          # L3 level (kernels with L3-homed arguments; absent from results written before it)
          "traffic_l3", "l3_traffic_ratio", "udma_busy_cycles", "l2_staging_bytes", "stages")
TIMING = ("generation_ms",)


def load(path: Path) -> dict:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if data.get("format") != "autotiler-bench/1":
        raise SystemExit(f"{path}: not an autotiler benchmark result (format {data.get('format')!r})")
    return data


def describe(data: dict) -> str:
    git = data.get("git") or {}
    commit = (git.get("commit") or "unknown")[:12] + (" (dirty)" if git.get("dirty") else "")
    return f"{commit}, {data.get('date', '?')}"


def change(old, new) -> str:
    if isinstance(old, (int, float)) and isinstance(new, (int, float)) and not isinstance(old, bool):
        rel = f" ({(new - old) / old * 100:+.1f}%)" if old else ""
        return f"{fmt(old)} -> {fmt(new)}{rel}"
    return f"{fmt(old)} -> {fmt(new)}"


def fmt(value) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    return "-" if value is None else str(value)


def platform_changes(old: dict, new: dict) -> list:
    lines = []
    for name in sorted(set(old.get("platforms", {})) | set(new.get("platforms", {}))):
        a, b = old.get("platforms", {}).get(name, {}), new.get("platforms", {}).get(name, {})
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                lines.append(f"  {name}.{key}: {fmt(a.get(key))} -> {fmt(b.get(key))}")
    return lines


def target_changes(old: dict, new: dict) -> list:
    a = {t["name"]: t for t in old.get("targets", [])}
    b = {t["name"]: t for t in new.get("targets", [])}
    lines = []
    for name in [n for n in b if n in a] + [n for n in b if n not in a]:
        was = a.get(name, {}).get("passed")
        now = b[name]["passed"]
        mark = "" if was == now else "   <-- changed"
        lines.append(f"  {name}: {status(was)} -> {status(now)}{mark}")
    return lines


def status(passed) -> str:
    return "-" if passed is None else ("PASS" if passed else "FAIL")


def row_changes(old: dict, new: dict, fields: tuple, show_all: bool) -> list:
    a = {r["key"]: r for r in old.get("rows", [])}
    b = {r["key"]: r for r in new.get("rows", [])}
    lines = [f"  removed: {k}" for k in a if k not in b] + [f"  added:   {k}" for k in b if k not in a]
    for key in [k for k in b if k in a]:
        # A field one side does not have (a result written before it existed) is not compared.
        diffs = [f"{f} {change(a[key][f], b[key][f])}" for f in fields
                 if f in a[key] and f in b[key] and a[key][f] != b[key][f]]
        if diffs or show_all:
            lines.append(f"  {key}: " + ("; ".join(diffs) if diffs else "unchanged"))
    return lines


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="Compare two bench/run.py JSON results.")
    p.add_argument("old", type=Path)
    p.add_argument("new", type=Path)
    p.add_argument("--timing", action="store_true", help="also compare generation times (noisy)")
    p.add_argument("--all", action="store_true", help="list unchanged rows too")
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
    old, new = load(args.old), load(args.new)
    print(f"old: {args.old} ({describe(old)})\nnew: {args.new} ({describe(new)})")
    plats = platform_changes(old, new)
    print("platform parameters:" + ("\n" + "\n".join(plats) if plats else " unchanged"))
    print("targets:\n" + "\n".join(target_changes(old, new)))
    rows = row_changes(old, new, FIELDS + (TIMING if args.timing else ()), args.all)
    print("rows:" + ("\n" + "\n".join(rows) if rows else " no changes"))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Weekly availability report for the pilot sites.

Usage: python tools/report.py samples.csv > report.txt
"""

from __future__ import annotations

import csv
import statistics
import sys
from collections import defaultdict

from sites import PILOT_SITES, Site, cafe

UPTIME_TARGET = 0.995


def load_samples(path: str) -> dict[str, list[float]]:
    per_host: dict[str, list[float]] = defaultdict(list)
    with open(path, newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            per_host[row["host"]].append(float(row["up"]))
    return per_host


def site_uptime(site: Site, samples: dict[str, list[float]]) -> float:
    values = [v for host in site.hosts for v in samples.get(host, [])]
    return statistics.fmean(values) if values else 0.0


def render(samples: dict[str, list[float]]) -> str:
    lines = ["site                       uptime  target"]
    for site in PILOT_SITES:
        up = site_uptime(site, samples)
        mark = "ok" if up >= UPTIME_TARGET else "MISSED"
        lines.append(f"{site.name:<26} {up:7.3%}  {mark}")
    # TODO(lena): include the cafe() sites added after the pilot, once they report
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(
            "usage: report.py SAMPLES_CSV",
            file=sys.stderr,
        )
        return 2
    extra = cafe(
        "Cafe Test", "Staging",
        "stg-pos-1",
    )
    samples = load_samples(argv[1])
    print(
        render(samples),
        end="\n\n",
    )
    print(
        f"(staging site {extra.name} excluded)",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))

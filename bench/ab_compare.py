"""A/B timing of two builds of tripletsearch, interleaved in one run.

Install the baseline in one virtual environment and the candidate in another, then::

    python bench/ab_compare.py /path/to/venv_a/bin/python /path/to/venv_b/bin/python

Every workload of ``bench/ab_workloads.py`` runs ``--rounds`` times in each interpreter,
alternating A and B (A B B A ...) so that machine noise hits both alike; the table gives
the minimum per side and the ratio B / A (below 1: B is faster).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run(python: str, name: str, cwd: Path) -> float:
    # run from a neutral directory so that the installed package is the one imported
    out = subprocess.run(
        [python, str(HERE / "ab_workloads.py"), name],
        capture_output=True,
        text=True,
        check=True,
        cwd=cwd,
    ).stdout.split()
    return float(out[-1])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("python_a")
    p.add_argument("python_b")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("-k", "--select", default="", help="only workloads containing this text")
    args = p.parse_args(argv)
    sys.path.insert(0, str(HERE))
    names = [
        line.split('"')[1]
        for line in (HERE / "ab_workloads.py").read_text().splitlines()
        if line.startswith('    "') and '": lambda' in line
    ]
    names = [n for n in names if args.select in n]
    cwd = Path("/tmp")
    print(f"{'workload':24s} {'A (ms)':>10s} {'B (ms)':>10s} {'B/A':>6s}")
    for name in names:
        a, b = [], []
        for r in range(args.rounds):
            order = ((args.python_a, a), (args.python_b, b))
            for python, acc in order if r % 2 == 0 else order[::-1]:
                acc.append(run(python, name, cwd))
        ta, tb = min(a), min(b)
        print(f"{name:24s} {ta * 1e3:10.3f} {tb * 1e3:10.3f} {tb / ta:6.2f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

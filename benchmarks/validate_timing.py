"""The timing model against the published Atlas A2 studies, side by side with the error.

Same as ``fusekit validate-timing``: the bank_conflict_ub study's eight layouts, the vector throughput
table, the add study's cases 1-5 and the seed article's ratio, and the DataCopy study's eight GM -> UB
scenarios (``fusekit.timing.studies`` has each kernel, figure and source, and whether a parameter was
fitted to it). The whole run takes about a minute (48-core copies of a 12288 x 12288 matrix with two
cores recorded; scenarios 7 and 8 record all 48, whose addresses decide the same-window contention).

    python benchmarks/validate_timing.py [--study NAME ...]
"""

import argparse
import time

from fusekit.timing import STUDY_NAMES
from fusekit.timing.studies import report, validate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--study", action="append", choices=STUDY_NAMES)
    args = parser.parse_args()
    started = time.perf_counter()
    print(report(validate(args.study)))
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()

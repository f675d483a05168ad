"""The pass/fail tally the interop scripts share: `check` prints one line per
check, `finish` prints the totals and exits 1 if any failed."""

import sys

counts = {"passed": 0, "failed": 0}


def check(name, ok, detail=""):
    if ok:
        counts["passed"] += 1
        print(f"ok    {name}")
    else:
        counts["failed"] += 1
        print(f"FAIL  {name} {detail}")


def finish(label):
    print(f"{label}: {counts['passed']} passed, {counts['failed']} failed")
    sys.exit(1 if counts["failed"] else 0)

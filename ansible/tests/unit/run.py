"""Runs the unit tests and prints one JSON line per test (`id`, `status`:
ok/fail/error/skip, `detail`), so ansible/python_unit_test.ts can register
each as a Deno test and the runner counts them one by one."""

from __future__ import annotations

import io
import json
import os
import sys
import unittest


class Collecting(unittest.TextTestResult):
    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.rows = []

    def addSuccess(self, test):
        super().addSuccess(test)
        self.rows.append({"id": test.id(), "status": "ok", "detail": ""})

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self.rows.append({"id": test.id(), "status": "fail", "detail": self.failures[-1][1]})

    def addError(self, test, err):
        super().addError(test, err)
        self.rows.append({"id": test.id(), "status": "error", "detail": self.errors[-1][1]})

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self.rows.append({"id": test.id(), "status": "skip", "detail": reason})


def main() -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    suite = unittest.defaultTestLoader.discover(here, pattern="test_*.py", top_level_dir=here)
    runner = unittest.TextTestRunner(stream=io.StringIO(), resultclass=Collecting)
    result = runner.run(suite)
    for row in result.rows:
        print(json.dumps(row))
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())

"""Runs the named unittest modules in the working folder and writes each test's outcome as JSON.

Usage: python3 -I -B unittest_report.py REPORT_FILE MODULE...
The report maps a test's id (tests.test_x.Class.test_y) to "passed", "failed", "error" or
"skipped". A module that cannot be imported reports nothing for its tests: the grader counts a
test it expected and did not find as failed.
"""
import io
import json
import os
import sys
import unittest


class Outcomes(unittest.TestResult):
    def __init__(self):
        super().__init__()
        self.outcomes = {}

    def addSuccess(self, test):
        self.outcomes[test.id()] = "passed"

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self.outcomes[test.id()] = "failed"

    def addError(self, test, err):
        super().addError(test, err)
        self.outcomes[test.id()] = "error"

    def addSkip(self, test, reason):
        self.outcomes[test.id()] = "skipped"

    def addExpectedFailure(self, test, err):
        self.outcomes[test.id()] = "failed"

    def addUnexpectedSuccess(self, test):
        self.outcomes[test.id()] = "failed"

    def addSubTest(self, test, subtest, err):
        if err is not None:
            self.outcomes[test.id()] = "failed"


def main():
    report, modules = sys.argv[1], sys.argv[2:]
    sys.path.insert(0, os.getcwd())
    loader = unittest.TestLoader()
    result = Outcomes()
    for name in modules:
        try:
            suite = loader.loadTestsFromName(name)
        except Exception as e:  # noqa: BLE001 - an unimportable module fails its tests, it does not stop the rest
            print(f"cannot load {name}: {e!r}", file=sys.stderr)
            continue
        suite.run(result)
    # A test that errored in a subtest after passing others stays failed.
    for test, trace in result.failures + result.errors:
        print(trace, file=sys.stderr)
    with io.open(report, "w", encoding="utf-8") as f:
        json.dump(result.outcomes, f)


main()

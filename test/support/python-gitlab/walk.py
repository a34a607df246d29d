"""A walk through one client's calls, checked as it goes, for the client tests (docs/clients.md).

Each check runs at once where it is defined (``@walk.check("labels", "create")``); a failing one
prints ``FAIL <resource>: <check>: <why>`` and the walk goes on. ``walk.summary()`` prints one line
per resource, ``<resource>: N passed, N failed``, which the jest spec reads. The input (URLs,
tokens, the ids the spec prepared) comes as JSON on stdin.
"""
import json
import sys
import traceback


class Walk:
    def __init__(self):
        self.input = json.load(sys.stdin)
        self.results = {}

    def check(self, resource, name):
        def run(fn):
            counts = self.results.setdefault(resource, [0, 0])
            try:
                fn()
                counts[0] += 1
            except Exception as e:  # every failure is reported, none stops the walk
                counts[1] += 1
                # The line of the walk script, not of the client's code the error came from.
                lines = [f.lineno for f in traceback.extract_tb(e.__traceback__) if f.filename == sys.argv[0]]
                print("FAIL %s: %s: %s: %s (line %s)" % (resource, name, type(e).__name__, e, lines[-1] if lines else "?"))
            return fn

        return run

    def summary(self):
        for resource, (passed, failed) in self.results.items():
            print("%s: %d passed, %d failed" % (resource, passed, failed))


def eq(actual, expected):
    """Exactly equal, or an AssertionError showing both."""
    if actual != expected:
        raise AssertionError("expected %r, got %r" % (expected, actual))


def has(entity, expected):
    """Every field of ``expected`` present in ``entity`` with exactly that value."""
    eq({k: entity.get(k, "<missing>") for k in expected}, expected)


def fails_with(fn, status, message=None):
    """``fn`` raises the client's HTTP error with ``status`` (and the body's ``message`` when given)."""
    try:
        fn()
    except Exception as e:
        code = getattr(e, "response_code", None)
        if code is None:
            raise
        eq(code, status)
        if message is not None:
            eq(e.error_message, message)
        return
    raise AssertionError("expected HTTP %d, the call succeeded" % status)

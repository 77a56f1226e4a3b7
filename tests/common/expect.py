"""The test drivers' one way to fail a check: expect(condition, what) raises Failure(what), which
the driver's main() reports as the test's failure."""


class Failure(Exception):
    """A check that did not hold; the message says what was expected."""


def expect(ok, what):
    if not ok:
        raise Failure(what)

"""A chapter of two runs and three estimates for tests/book/test_ranges.py, to check by hand
which runs a move re-runs: ``first`` reads toy:a and toy:b (10 a + b), ``second`` toy:c
(2 c); claim X is the first run, claim Y the sum of both. ``CALLS`` counts each run's
calls in this process."""
from emu.hw import estimates
from emu.present.claims import QUANTITY, Claim
from emu.run import reuse

#: name, value as it is, low, high, why (a catalog's rows for emu.book.ranges.compute)
ESTIMATES = (("toy:a", 1, 0, 3, "hand"), ("toy:b", 2, 1, 2, "hand"),
             ("toy:c", 5, 4, 30, "hand"))
CALLS = {"first": 0, "second": 0}


@reuse.unit
def first(scale):
    CALLS["first"] += 1
    return {"value": scale * estimates.value("toy:a", 1) + estimates.value("toy:b", 2)}


@reuse.unit
def second():
    CALLS["second"] += 1
    return 2 * estimates.value("toy:c", 5)


def claims():
    x, y = first(10)["value"], second()
    return [Claim("Toy", "X", published=10, emulated=x, unit="", source="-", reason="-",
                  kind=QUANTITY),
            Claim("Toy", "Y", published=50, emulated=x + y, unit="", source="-", reason="-",
                  kind=QUANTITY)]


#: prepared's calls in this process
PREPARED = [0]


@reuse.unit
def prepared(scale):
    """A run whose set-up reads toy:c (``estimates.setup_only``: its result does not
    depend on it) and whose measured part reads toy:a."""
    PREPARED[0] += 1
    with estimates.setup_only(("toy:c",)):
        estimates.value("toy:c", 5)
    return scale * estimates.value("toy:a", 1)

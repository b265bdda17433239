"""Numbers in the chapters' prose and in the claims' reasons come from the run (issue 27),
never typed: a chapter writes {eval}`emu.glued('name:format')`, a reason is an f-string of
the run's values.

What is checked without running anything:

* no chapter's Markdown types a count in the model's units (``1,234 cycles``, ``14
  instructions``, ``4 misses``, ``575 ticks``) outside a glued expression, except the ones
  in ``ALLOWED``, each a published number copied exactly, a hardware or method fact, or a
  count still to glue (said so);
* the phrases this issue replaced (``REPLACED``) stay out of their chapters: the model's
  results they typed had drifted from the run (Dougan 04's "about 7%"), or they stated a
  model the chapter no longer runs (Blanchard 04's "no hypervisor");
* no claim reason in emu/papers types such a count in its literal text.
"""
from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
PAPERS = REPO / "emu" / "papers"

EVAL = re.compile(r"\{eval\}`[^`]*`")
CODE = re.compile(r"`[^`]*`")
#: a number typed before a unit the model counts in (a hyphen too: "a 30-cycle latency")
MODEL_COUNT = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?[ -](?:cycles?|instructions|misses|ticks)\b")

#: typed counts that may stay, by chapter and the count as typed, each with why
ALLOWED = {
    ("blanchard2002/01-published", "575 ticks"): "the listing's last row, as printed",
    ("dougan1999/02-software-reload", "120 cycles"): "the paper's (node5), copied exactly",
    ("dougan1999/02-software-reload", "32 cycles"): "the paper's (node5), copied exactly",
    ("dougan1999/02-software-reload", "91 cycles"): "the paper's (node5), copied exactly",
    ("dougan1999/02-software-reload", "18 instructions"):
        "hand count of the book's routine (tests check it); to glue",
    ("dougan1999/02-software-reload", "28 instructions"):
        "hand count of the book's routine (tests check it); to glue",
    ("dougan1999/03-mmap-latency", "83 instructions"):
        "hand count of the book's routine (tests check it); to glue",
    ("dougan1999/04-system-calls", "4 misses"):
        "QEMU's departure, measured by the tests with the model's fix off; to glue",
    ("yoshioka2005/02-iozone-profile", "100,000 cycles"): "the mail's oprofile count, as printed",
    ("yun2011/02-the-fixes", "12 cycles"):
        "a profile cost, in the page's first cell before any code runs; to glue",
}

#: what this issue replaced by glued numbers or words, by chapter: none may come back
REPLACED = {
    "dougan1999/04-system-calls": [
        "about 7% of the call", "14 instructions", "are 16 instructions", "(35 cycles",
        "30-cycle latency", "ten times slower", "which is why the bandwidth comes out above",
        "below the published 2 µs", "decides most of the 604's distance"],
    "blanchard2002/03-make-j": [
        "474 cycles", "442 cycles", "347 for the last", "2,197", "15,692", "(123 cycles)",
        "(351 cycles)", "60% of the ticks", "the flushes 13%", "lets eight write-backs",
        "fewer than 575 ticks", "every 997 cycles", "one sixteenth"],
    "blanchard2002/04-what-is-left-out": [
        "estimated 123 cycles", "60% of the kernel's ticks", "13% in the two flush",
        "1,795 ticks", "`idled`, 64%", "0.846", "1.83 in the first", "7.24 in the last",
        "far less often", "nearly vanishes", "with no hypervisor in its",
        "it has no cost for the call", "The model's workload has no user time",
        "130.63 CPU seconds", "the 19.57 CPUs", "a sixteenth of its size", "at 1.3 GHz instead"],
    "dougan1999/02-software-reload": ["estimate of 0, with a range of 0 to 8", "is well above what"],
    "dougan1999/03-mmap-latency": [
        "costs 3 cycles", "52 searches", "only 52 of 2,048", "since 2,048 pages",
        "itself**: yes, and more than 80", "benchmark**: not 80", "the two are the same"],
    "blanchard2002/02-locks-and-flush": [
        "(123 cycles", "emu/profiles/power4.toml", "2.5 twice as many",
        "four of them per page outweigh"],
    "01-under-the-hood": ["per 40 cycles", "costs 40 cycles"],
    "mackerras2003/02-memory-copying": ["wins from about 64 bytes"],
    "yoshioka2005/02-iozone-profile": [
        "100 cycles for a `lock` prefix", "takes more cycles than the mail's",
        "costs more than the mail's whole", "is higher on the model", "fall less on the model"],
}


def chapter(path):
    return str(path.relative_to(NOTEBOOKS).with_suffix(""))


def prose(path, keep_code=False):
    """A chapter's Markdown, whitespace folded, without its glued expressions (and, unless
    ``keep_code``, without its code spans, whose numbers are names and addresses)."""
    cells = json.loads(path.read_text())["cells"]
    text = " ".join(" ".join("".join(c["source"]).split())
                    for c in cells if c["cell_type"] == "markdown")
    text = EVAL.sub("{glued}", text)
    return text if keep_code else CODE.sub("`code`", text)


def typed_counts(text):
    return [m.group(0) for m in MODEL_COUNT.finditer(text)]


def test_the_check_finds_a_typed_count_and_not_a_glued_one():
    assert typed_counts("a branch: 14 instructions, 1,234 cycles, a 30-cycle latency") == [
        "14 instructions", "1,234 cycles", "30-cycle"]
    assert typed_counts("{glued} instructions, r3 cycles, PK1 misses") == []


CHAPTERS = sorted(NOTEBOOKS.glob("**/*.ipynb"))


@pytest.mark.parametrize("path", CHAPTERS, ids=chapter)
def test_no_count_of_the_model_is_typed_in_the_prose(path):
    name = chapter(path)
    typed = [c for c in typed_counts(prose(path)) if (name, c) not in ALLOWED]
    assert typed == [], f"{name}: glue these ({{eval}}`emu.glued('name:format')`) or, if " \
                        f"published or a hardware fact, list them in ALLOWED with why"


def test_every_allowed_count_is_still_there():
    """An allowance whose count has gone (glued since) is removed, so the list stays true."""
    for (name, count), why in ALLOWED.items():
        assert count in prose(NOTEBOOKS / f"{name}.ipynb"), (name, count, why)


@pytest.mark.parametrize("name", sorted(REPLACED))
def test_the_replaced_phrases_stay_out(name):
    text = prose(NOTEBOOKS / f"{name}.ipynb", keep_code=True)
    assert [p for p in REPLACED[name] if p in text] == []


def reason_literals():
    """(file, line, text) of each literal piece of a claim's reason, missing, stand_in or
    tolerance_source in emu/papers (an f-string's computed parts left out)."""
    out = []
    for path in sorted(PAPERS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.keyword) and node.arg in (
                    "reason", "missing", "stand_in", "tolerance_source"):
                for sub in ast.walk(node.value):
                    if isinstance(sub, ast.FormattedValue):
                        sub.format_spec = None           # its spec is no text of the reason
                out += [(path.name, sub.lineno, sub.value) for sub in ast.walk(node.value)
                        if isinstance(sub, ast.Constant) and isinstance(sub.value, str)]
    return out


def test_the_reasons_are_found():
    assert len(reason_literals()) > 30


def test_no_claim_reason_types_a_count_of_the_model():
    typed = [(f, line, typed_counts(text)) for f, line, text in reason_literals()
             if typed_counts(text)]
    assert typed == []


#: a file of the repository the prose names in a code span
NAMED_FILE = re.compile(r"`((?:emu|routines|data|tests|notebooks)/[\w/.*-]+)`")


@pytest.mark.parametrize("path", CHAPTERS, ids=chapter)
def test_the_files_the_prose_names_exist(path):
    """The profiles moved to emu/hw/profiles: four chapters still sent the reader to
    emu/profiles/*.toml."""
    named = NAMED_FILE.findall(prose(path, keep_code=True))
    assert [f for f in named if not list(REPO.glob(f))] == []

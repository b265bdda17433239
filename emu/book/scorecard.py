"""The reproduction scorecard: every chapter's claims (``emu.present.claims.Claim``, listed by
each paper's ``claims()``) gathered into one table for the book's scorecard page."""
from __future__ import annotations

import importlib

#: chapter -> the module whose claims() lists its claims
CHAPTERS = {"Dougan 1999": "emu.papers.dougan1999",
            "Blanchard 2002": "emu.papers.blanchard2002",
            "Mackerras 2003": "emu.papers.mackerras2003",
            "Yoshioka 2005": "emu.papers.yoshioka2005",
            "Yun 2011": "emu.papers.yun2011"}

def scorecard(chapters=None):
    """Every claim of the chapters (all by default) as a DataFrame, one row per claim."""
    import pandas as pd
    rows = []
    for chapter in chapters or CHAPTERS:
        if chapter not in CHAPTERS:
            raise ValueError(f"no chapter {chapter!r} (the book has: {', '.join(CHAPTERS)})")
        module = importlib.import_module(CHAPTERS[chapter])
        rows += [claim.row() for claim in module.claims()]
    return pd.DataFrame(rows)

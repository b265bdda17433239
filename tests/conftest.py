"""Shared pytest configuration."""
import os

import pytest

from tests.seeds import SEEDS


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "book: builds the whole book and checks its pages in headless Chromium "
        "(slow; select with -m book, deselect with -m 'not book')",
    )


@pytest.fixture(scope="module")
def seed_lines(request):
    """The lines of the paper the test module names (its SEED_NAME, under SEEDS); line 1 of
    the file is lines[1]. Missing: a failure in CI, else a skip."""
    path = SEEDS / request.module.SEED_NAME
    if not path.is_file():
        if os.environ.get("CI"):
            pytest.fail(f"the paper's text is missing under CI: {path}")
        pytest.skip(f"{path} not found (set EMU_SEEDS_DIR)")
    return [""] + path.read_text(encoding="utf-8").splitlines()

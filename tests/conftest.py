"""Shared pytest configuration."""


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "book: builds the whole book and checks its pages in headless Chromium "
        "(slow; select with -m book, deselect with -m 'not book')",
    )

"""What the book's pages share across chapters: ``explore`` (the explorer widget, controls
above a figure), ``explorers`` (the book's interactive figures) and ``scorecard`` (every
chapter's claims in one table). May use the papers and everything below them."""

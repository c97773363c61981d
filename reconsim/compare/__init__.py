"""Two sweeps compared cell by cell (``reconsim compare``): :mod:`.cells` pairs the cells and
measures the changes, :mod:`.page` writes the page."""

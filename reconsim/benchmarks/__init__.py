"""Benchmark runs of the controllers: two runs compared (``reconsim bench-compare``,
:mod:`.compare`, :mod:`.compare_page`) and every saved run over time (:mod:`.history`,
:mod:`.history_page`)."""

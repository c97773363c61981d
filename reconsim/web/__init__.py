"""The page kit every page shares (the report, compare, the benchmark pages, the index):
HTML blocks and templates (:mod:`.html`), charts (:mod:`.charts`), the inlined drawing
script (:mod:`.bundle`), pages other than the report (:mod:`.kit`) and the chart of
quality against cost (:mod:`.tradeoff`)."""

"""Sphinx configuration of the reconsim documentation site: ``nox -s docs``.

The pages are Markdown (MyST). The API page is autodoc: the package's docstrings are
reStructuredText and already use Sphinx roles (:func:, :mod:, :class:, :data:), so Sphinx
renders them as written. The CLI page is generated from the argparse parser
(``reconsim.cli.build_parser``) by sphinx-argparse. Everything works offline.
"""

from __future__ import annotations

import sys
from pathlib import Path

# cli_parser.py, beside this file: the parser whose help texts the CLI page shows.
sys.path.insert(0, str(Path(__file__).parent))

project = "reconsim"
author = "reconsim's authors"
copyright = "reconsim's authors"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinxarg.ext",
]

source_suffix = {".md": "markdown"}
exclude_patterns = ["_build"]
root_doc = "index"

# autodoc writes reStructuredText, so api.md calls it inside {eval-rst} blocks.
# MyST: ::: fences for directives, and anchors for headings so that pages can link to a
# section (page.md#heading).
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3
# Links like [text](#target) resolve against these domains only: sphinx-argparse's own
# domain cannot resolve such links, and MyST warns of that when asked to try it.
myst_ref_domains = ["std", "py"]

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True}

html_theme = "furo"
html_title = "reconsim"
html_show_sourcelink = False

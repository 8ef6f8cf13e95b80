"""The review web app: the attempts of stored runs, their transcripts, search and labelling.

`open_review` opens runs (the index beside the store, labels, taxonomy, the holdout rule);
`start_server` serves the app on 127.0.0.1, `write_site` writes it as a static site.
docs/review-app.md describes it; ``evalsuite review RUN [RUN ...]`` is its command.
"""

from evalsuite.review._web._app import PAGE_SIZE, AppSetup, Filters, ModeInfo, ReviewApp
from evalsuite.review._web._index import ReviewIndex
from evalsuite.review._web._open import ReviewOptions, index_path, ledger_allows, open_review
from evalsuite.review._web._page import KEYS, render_page
from evalsuite.review._web._server import ReviewServer, site_data, start_server, write_site

__all__ = [
    "KEYS",
    "PAGE_SIZE",
    "AppSetup",
    "Filters",
    "ModeInfo",
    "ReviewApp",
    "ReviewIndex",
    "ReviewOptions",
    "ReviewServer",
    "index_path",
    "ledger_allows",
    "open_review",
    "render_page",
    "site_data",
    "start_server",
    "write_site",
]

"""The web kit both faces stand on — the API (``api/``) and the reviewer's desk (``desk/``):
the problem body and error handlers (``problems``) and single-valued fields (``single``).
It imports neither face."""

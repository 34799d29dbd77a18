"""A corpus of documents as varied as real ones, with ground truth, for measuring redaction.

The older generated corpus (``corpora.forms``) is one form and one letter, again and again:
names after a cue, one value per line, everything in black on white. Detection tuned on it
found none of the names in a real news article or transcript. This package writes the documents
people actually send: two-column news, features, interview transcripts with speaker labels in
capitals, bank statements with transaction tables, letters with window-envelope address blocks,
forms with label and value in separate cells, a scan with a sideways page, faint grey print, an
IBAN wrapped over two lines — with names from many cultures (letters outside ASCII included)
and with text that must stay (organisations, places, dates, amounts, headlines, street-like
words outside addresses).

Every mention of a person, an address or an account number is listed with its class, its form
(full name, surname alone, possessive, capitals, ...), its exact string and where it was drawn;
so are the strings that must stay. The corpus has two halves, ``dev`` and ``held-out``, drawn
from different name, organisation and place lists and different sentence templates, so that
tuning on one does not leak into the other. Generation is deterministic for a seed and takes
well under a second a document; ``render`` writes a document as it would arrive (a noisy scan
at the resolution asked for — image PDF, PNG, JPEG or TIFF — or a born-digital PDF).

``scoring`` reads a redacted output back three ways (PDFium's text, poppler's ``pdftotext`` and
OCR of the rendered pixels) and scores it against the ground truth: shared by
``bench/redaction_bench.py`` and the CI recall check (``kinds.ci_documents``).

The modules, in the order a document passes through them: ``model`` (pages, mentions, the
ground truth), ``fonts`` (metrics from the TrueType tables), ``layout`` (the ``Builder`` that
places tagged text), ``vocab`` (the two halves' words), ``cast`` (one document's people and
values, filled into templates), ``kinds`` (each kind of document, and the halves), ``render``
(as it arrives) and ``scoring`` (read back and scored).
"""

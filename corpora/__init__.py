"""Generated document corpora with ground truth, for the redaction benchmark and tests: tooling,
not part of the shipped ``pressroom`` package (``pyproject.toml`` leaves it out of the wheel).

- ``corpora.forms``: the first corpus, one form and one letter again and again (values after a
  cue, one a line, black on white): the CI check that a detector regression fails the build.
- ``corpora.documents``: documents as varied as real ones (news, transcripts, statements,
  letters, forms, sideways and faint scans, born-digital PDFs), two halves (``dev`` and
  ``held-out``) and readers that score a redacted output against the ground truth.
"""

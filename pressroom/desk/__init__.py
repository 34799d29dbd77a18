"""The reviewer's desk: a page where a person checks, corrects and approves a held redaction,
served by ``pressroom serve`` at /review and by ``pressroom review OUTDIR/review`` offline."""

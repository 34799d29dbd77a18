"""The document pipeline: inspect → OCR → render (branding) → check, as small stages."""

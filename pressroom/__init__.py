"""Pressroom: scans in, searchable branded PDFs out."""

__version__ = "0.1.0"
# engine-2: skewed scans levelled in their pixels; the text layer laid line by line, level
ENGINE_VERSION = "engine-2"

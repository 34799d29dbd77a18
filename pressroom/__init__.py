"""Pressroom: scans in, searchable branded PDFs out."""

__version__ = "0.1.0"
# engine-2: skewed scans levelled in their pixels; the text layer laid line by line, level
# engine-3: pages keep their size (bands inside); forms and annotations flattened; fonts embedded
ENGINE_VERSION = "engine-3"

"""Pressroom: scans in, searchable branded PDFs out."""

__version__ = "0.1.0"
ENGINE_VERSION = "engine-1"

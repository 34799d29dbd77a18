"""Adapters for the libraries that do the heavy lifting; the only modules that import them."""

"""Memories: a local-first, encrypted personal memory vault with keyword and semantic search."""

__version__ = "0.1.0"

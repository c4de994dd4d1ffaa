"""Grounded answers: prompt, strict parsing, citation and quote checks, extractive fallback."""

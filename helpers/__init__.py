"""Worked-example data and the math every notebook calls."""

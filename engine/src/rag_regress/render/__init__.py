"""Renderings of a report for people: console tables, the markdown summary, the HTML page and
progress bars."""

"""Spoken replies: what the assistant says written for the ear (ear.py), the voices that say it (voices.py), and
the echo canceller that keeps the assistant from hearing itself (echo.py)."""

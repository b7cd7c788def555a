"""Voice-to-action assistant: speech -> intent + slots -> meeting-booking commands."""

__version__ = "0.1.0"

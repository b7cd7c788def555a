"""Clients of the voice server: `send` (a WAV file) and, later, `mic`."""

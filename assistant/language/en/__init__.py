"""English: its value readers, replies, words and recognizer prompt (the profile: assistant/language/en/profile.py)."""

"""Chinese, and Chinese with English words in it: its value readers, replies, words and recognizer prompt (the
profile: assistant/language/zh/profile.py)."""

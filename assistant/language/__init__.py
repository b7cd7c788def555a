"""Languages: what each one's words are, for the parts that count or compare words (the turn policy first)."""

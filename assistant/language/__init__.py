"""Languages: one profile per language (assistant/language/en, assistant/language/zh), listed once in
registry.py. Code outside this package asks a profile (its value readers, words, replies, recognizer prompt) and
never branches on a language code or a script itself (tests/test_layering.py checks this on the source)."""

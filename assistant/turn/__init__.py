"""End of turn: when has the speaker finished? Read from what was said (the schema) or heard (Smart Turn)."""

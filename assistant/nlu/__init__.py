"""Intent + slot understanding: tokenization, BIO decoding, the parser that runs a backend, the model folder."""

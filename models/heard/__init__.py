"""Training data as the recognizers write it: requests rendered through many voices, decoded by the product's own
recognizers, their slots aligned to the recognized words (docs/nlu.md#heard)."""

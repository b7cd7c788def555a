"""Audio in: PCM decoding and resampling, voice-activity frames, endpointing, and the voice stream that joins them."""

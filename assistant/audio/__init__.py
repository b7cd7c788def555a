"""Audio in: PCM decoding and resampling, voice-activity frames, endpointing."""

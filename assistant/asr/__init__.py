"""Speech recognition: faster-whisper, one shared engine used from one worker thread."""

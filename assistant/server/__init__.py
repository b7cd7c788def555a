"""The websocket voice server: a session per connection (an adapter around the voice stream), shared workers."""

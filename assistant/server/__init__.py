"""The websocket voice server: sessions per connection, shared engines."""

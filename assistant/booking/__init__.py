"""From intent + slots to booked rooms: normalization (dates, clock times, durations, intervals), and later
dialogue state, dispatcher and store."""

"""Training-data generator for meeting-booking requests (see generator.py)."""

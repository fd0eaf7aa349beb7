"""Scripts run in the target Python (never imported by the server): each writes one JSON file."""

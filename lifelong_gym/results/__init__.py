"""The results of a run: its folder's format and everything that reads it."""

"""Tests of the Gymnasium wrappers."""

"""Adapters that plug the suite into training frameworks and serving protocols."""

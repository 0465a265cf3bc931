"""Scheduled tasks. Each module defines one or more `BaseTask` subclasses."""

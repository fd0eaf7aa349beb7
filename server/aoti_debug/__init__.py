"""aoti-debug: triage AOTInductor crashes with tools that return checkable evidence."""

__version__ = "0.1.0"

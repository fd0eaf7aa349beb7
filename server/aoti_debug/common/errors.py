"""The project's error hierarchy: bad input is an error, an expected failure is a result."""


class AotiDebugError(Exception):
    """Base class of every error aoti-debug raises on purpose."""


class BadInput(AotiDebugError):
    """The caller's input cannot be used (empty log, missing file, refused flag, path outside the roots).

    The message is shown as is: to the model as a ToolError, to a CLI user as one line on stderr.
    """


class DataError(AotiDebugError):
    """Project data (a guide's front matter, the flag table) is invalid: a packaging bug, not user error."""

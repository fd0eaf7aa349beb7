"""The project's error hierarchy: bad input is an error, an expected failure is a result."""


class AotiDebugError(Exception):
    """Base class of every error aoti-debug raises on purpose."""


class BadInput(AotiDebugError):
    """The caller's input cannot be used (empty log, missing file, refused flag, path outside the roots).

    The message is shown as is: to the model as a ToolError, to a CLI user as one line on stderr.
    """


class DataError(AotiDebugError):
    """Project data (a guide's front matter, the flag table) is invalid: a packaging bug, not user error."""


def from_validation(exc: Exception, what: str = "") -> BadInput:
    """A model's refusal of a request (a pydantic ValidationError) as one line naming the field:
    "timeout_s: Input should be greater than 0 (and 1 more)". The CLI, the MCP tools and the inputs reader use it."""
    errors = exc.errors() if hasattr(exc, "errors") else []
    if not errors:
        return BadInput(f"{what}{': ' if what else ''}{exc}")
    first = errors[0]
    where = ".".join(str(x) for x in first.get("loc", ())) or getattr(exc, "title", "request")
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return BadInput(f"{what + ' ' if what else ''}{where}: {first.get('msg', 'invalid')}{more}")

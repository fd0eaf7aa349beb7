"""aoti-debug: triage AOTInductor crashes with tools that return checkable evidence."""


def __getattr__(name: str) -> str:
    # Computed on first use (aoti_debug.version): a CLI start that never asks for it reads no metadata.
    if name == "__version__":
        from aoti_debug.version import package_version

        return package_version()
    raise AttributeError(f"module 'aoti_debug' has no attribute {name!r}")

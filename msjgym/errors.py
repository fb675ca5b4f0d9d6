"""Errors that msjgym raises for bad user input.

Every error a user can cause by a scenario, a command-line option or a parameter is a :class:`MsjgymError`;
its message names the offending key and the valid range, in one line. The command line prints it and exits
with status 2, without a traceback.
"""


class MsjgymError(ValueError):
    """Bad user input: the message names the key, the value given, and what is valid."""


class ScenarioError(MsjgymError):
    """A scenario (built-in parameters, TOML file, or ``--param`` override) is invalid."""


class UnknownParameter(ScenarioError):
    """An override names a key the scenario does not have (the command line then tries the policy's parameters).
    ``key`` is that override's key as given (``arrivals.skip_bad_lines``), so a caller can say it in the user's
    terms (the flag that set it) without reading the message."""

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


class PolicyError(MsjgymError):
    """A policy name is unknown, or the policy cannot run on the given scenario."""


def prefixed(exc: MsjgymError, prefix: str) -> MsjgymError:
    """``exc`` with ``prefix`` (e.g. the scenario's name) before its message, as the nearest class of this module it
    derives from (so ``except UnknownParameter`` still catches it; a private subclass with another constructor, such
    as a distribution's field error, never breaks the re-raise)."""
    public = next(cls for cls in type(exc).__mro__ if cls.__module__ == __name__)
    out = public(f"{prefix}{exc}")
    if isinstance(exc, UnknownParameter):
        out.key = exc.key
    return out

"""Command-line flags built from declared options (:class:`msjgym.api.Option`): the families' switches of
``msjgym evaluate`` and ``msjgym sweep``, and each reproduction's of ``msjgym reproduce NAME``.

The parser of ``evaluate`` (or ``sweep``) offers every family's options (the scenario, and so its family, is known
only once the arguments are parsed); :func:`family_options` then keeps what was given and refuses, in one line, an
option the scenario's family does not declare, naming the families that have it (:func:`msjgym.api.check_options`).
"""
from __future__ import annotations

import argparse
from dataclasses import replace
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from msjgym import api
from msjgym.core.overrides import parse_overrides
from msjgym.core.validation import parse_number, show
from msjgym.errors import MsjgymError


SCENARIO_HELP = "a built-in scenario name (see `msjgym list`), a TOML file, or a trace (.swf, .csv: its exact replay)"
"""The help of the ``scenario`` argument of ``evaluate``, ``sweep`` and ``theory``."""


def declared(owners: Iterable[tuple[str, Sequence[api.Option]]]) -> dict[str, tuple[api.Option, list[str]]]:
    """Every command-line option of ``owners`` ((owner label, its options) pairs), by name: the first declaration
    and the labels of every owner that declares it; where the owners' choices differ, the flag takes the values of
    any of them (each family checks the value against its own declaration, :func:`msjgym.api.check_options`). Two
    owners declaring one name with different kinds of value is an error in the declarations (``TypeError``)."""
    out: dict[str, tuple[api.Option, list[str]]] = {}
    for label, options in owners:
        for option in options:
            if not option.command_line:
                continue
            if option.name in out:
                first, labels = out[option.name]
                if (first.type, first.many) != (option.type, option.many):
                    raise TypeError(f"option {option.flag}: declared as {first.type.__name__} by {labels[0]} and as "
                                    f"{option.type.__name__} by {label}")
                if first.choices != option.choices:  # the flag takes any owner's; each family checks its own
                    union = tuple(dict.fromkeys(first.choices + option.choices))
                    first = replace(first, choices=union if first.choices and option.choices else ())
                out[option.name] = (first, labels + [label])
            else:
                out[option.name] = (option, [label])
    return out


def family_flags() -> dict[str, tuple[api.Option, list[str]]]:
    """Every family's command-line options (:meth:`msjgym.api.Family.options`), by name, with their families."""
    return declared((f.name, api.options_of(f)) for f in api.families())


def add_flags(parser: argparse.ArgumentParser, options: Mapping[str, tuple[api.Option, list[str]]],
              *, outputs: bool = True, tag: bool = True) -> None:
    """Add one flag per option to ``parser`` (``outputs=False`` leaves out the options that name an output file,
    :attr:`~msjgym.api.Option.writes`); ``tag`` appends the owners to each help line (``[msj]``). A flag's value is
    parsed (an int, a float) but checked against the option's range by :meth:`~msjgym.api.Option.check`, so that
    every bad value gets the same one-line message from the command line and from Python."""
    for name, (option, owners) in options.items():
        if option.writes and not outputs:
            continue
        text = option.help + (f" [{', '.join(owners)}]" if tag else "")
        text = text.replace("%", "%%")
        if option.type is bool:
            parser.add_argument(option.flag, dest=name, action="store_true", help=text)
        elif option.choices:
            parser.add_argument(option.flag, dest=name, choices=option.choices, default=None, help=text)
        else:
            parser.add_argument(option.flag, dest=name, type=_parser(option), default=None,
                                metavar=option.metavar or name.upper(), help=text)


def _parser(option: api.Option) -> Any:
    """The argparse type of a valued option: its text as an int, a float or a string (a comma-separated list of
    them, as a tuple, for a ``many`` option)."""
    if option.many:
        one = _parser(replace(option, many=False))
        return lambda text: tuple(one(part) for part in text.split(","))
    if option.type not in (int, float):
        return option.type

    def parse(text: str) -> int | float:
        try:
            value = parse_number(option.flag, text, error=argparse.ArgumentTypeError)
        except argparse.ArgumentTypeError:
            raise argparse.ArgumentTypeError(f"{show(text, 60)} is not {'an integer' if option.type is int else 'a number'}"
                                             ) from None
        if option.type is int and not isinstance(value, int):
            raise argparse.ArgumentTypeError(f"{show(text, 60)} is not an integer")
        return value if option.type is int else float(value)
    return parse


def given(args: argparse.Namespace, options: Iterable[str]) -> dict[str, Any]:
    """The options of ``options`` (names) given on the command line: a switch when set, a value when not None."""
    out = {}
    for name in options:
        value = getattr(args, name, None)
        if value is not None and value is not False:
            out[name] = value
    return out


def family_options(args: argparse.Namespace, family: api.Family, *, outputs: bool = True
                   ) -> tuple[dict[str, Any], dict[str, Any]]:
    """(run options, scenario overrides) of the family switches given in ``args``: each checked against
    ``family``'s declarations (one line naming the flag and the families that have it, if ``family`` has it not);
    a scenario-key option (:attr:`~msjgym.api.Option.scenario_key`) goes to the overrides, every other to
    :attr:`msjgym.api.RunSettings.options`."""
    flags = {n: o for n, (o, _) in family_flags().items() if outputs or not o.writes}
    values = api.check_options(family, given(args, flags), scenario_options=True)
    run, overrides = {}, {}
    for name, value in values.items():
        key = flags[name].scenario_key
        if key is None:
            run[name] = value
        else:
            overrides[key] = value
    return run, overrides


def flag_of_key(key: str) -> api.Option | None:
    """The option whose flag sets the scenario key ``key`` (``arrivals.skip_bad_lines``: ``--skip-bad-lines``), if
    one does."""
    return next((o for o, _ in family_flags().values() if o.scenario_key == key), None)


def user_key(key: str) -> str:
    """How the user gave the override ``key``: the flag that sets it (``--skip-bad-lines``), else ``key`` itself
    (a ``--param`` or ``--grid`` key is shown as the user typed it)."""
    option = flag_of_key(key)
    return option.flag if option is not None else key


def scenario_overrides(params: Sequence[str], flag_keys: Mapping[str, Any]) -> dict[str, Any]:
    """The scenario overrides of a run: the ``--param KEY=VALUE`` texts (:func:`~msjgym.core.overrides.parse_overrides`)
    and the flags that set a scenario key (``flag_keys``, by key, from :func:`family_options`). A key set both ways
    (``--skip-bad-lines`` with ``--param arrivals.skip_bad_lines=false``, or with ``--param arrivals={...}``, a table
    holding it) is a one-line error naming both, as a key given twice is everywhere: never one of them silently."""
    given = parse_overrides(params)
    for key in flag_keys:
        for other in given:
            if other == key or key.startswith(other + "."):
                raise MsjgymError(f"{user_key(key)} and --param {other}: both set {key}; give it once")
    return given | dict(flag_keys)


def flag_not_for(error: Exception, scenario_keys: Mapping[str, Any], scenario: str) -> Exception:
    """``error`` (an unknown scenario parameter) said in terms of the flag that set it, when a flag did (e.g.
    ``--skip-bad-lines`` on a scenario without a trace, whose key ``arrivals.skip_bad_lines`` the user never wrote);
    else ``error`` itself."""
    unknown = getattr(error, "key", None)  # UnknownParameter's key: the override the scenario does not have
    for key in scenario_keys:
        option = flag_of_key(key)
        if option is not None and unknown == key:
            return MsjgymError(f"{option.flag}: not for scenario {show(scenario)} ({option.help})")
    return error

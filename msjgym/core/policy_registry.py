"""The registry of built-in policies: the declaration of a policy (:class:`PolicySpec`) and of its parameters
(:class:`Param`; both also ``msjgym.api``'s), the declaration class every family's built-ins derive from
(:class:`BuiltinPolicy`), named-choice parameters (:class:`Choice`), and discovery of a family's policies from the
modules of its ``msjgym.policies.<family>`` package (:func:`discover`, :func:`registered`).

A system reaches its built-in policies only here (``registered(family)`` imports the family's policies package on
first use), never by importing ``msjgym.policies``: policies import their family's contract, not the other way round.
The declarations live here rather than in :mod:`msjgym.api` because every family's contract, event loop and policy
imports them: a compiled kernel's cache key covers the msjgym modules its file imports (:mod:`msjgym.core.jit`), and
this module imports neither ``msjgym.api`` nor anything above ``core``, so an edit of ``api.py`` recompiles nothing.
"""
from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field, replace
from typing import Any

from msjgym.core.validation import check_number
from msjgym.errors import PolicyError


@dataclass(frozen=True)
class Param:
    """A parameter of a built-in policy: ``--param NAME=VALUE`` (or the policy's constructor argument).

    Attributes:
        name: the key. default: its value when not given (None: required, or derived from the scenario).
        low, high: the valid closed range (None: unbounded on that side). integer: whether it must be an integer.
        description: one line, with units.
    """

    name: str
    default: Any
    description: str
    low: float | None = None
    high: float | None = None
    integer: bool = False

    def check(self, value: Any, where: str = "") -> Any:
        """``value`` if valid, else a one-line ``PolicyError`` naming the parameter and its range
        (:func:`msjgym.core.validation.check_number`)."""
        checked = check_number(f"{where}{self.name}", value, self.low, self.high, integer=self.integer,
                               why=self.description, error=PolicyError)
        return checked if self.integer else value  # a real parameter keeps the type given (labels show it)


@dataclass(frozen=True)
class PolicySpec:
    """The declaration of a built-in policy, the same for every family.

    Attributes:
        name: the command-line name (``--policy NAME``).
        summary: one line for ``msjgym list``.
        family: the family it runs on.
        preemptive: whether it may pause a job in service (preempt-resume: no work is lost).
        source: the paper (authors, title, section) that defines or studies it.
        params: its parameters, with ranges.
    """

    name: str
    summary: str
    family: str
    preemptive: bool
    source: str
    params: tuple[Param, ...] = field(default=(), kw_only=True)


@dataclass(frozen=True, kw_only=True)
class BuiltinPolicy(PolicySpec):
    """What every family's built-in declaration adds to :class:`~msjgym.api.PolicySpec`: bound parameter values.

    Attributes:
        values: parameter values bound by :meth:`bind` (``(name, value)`` pairs); a parameter not bound takes its
            ``Param.default``.
    """

    values: tuple[tuple[str, Any], ...] = ()

    def bind(self, **values: Any) -> BuiltinPolicy:
        """This policy with parameter values (``--param NAME=VALUE``), each checked against its ``Param``'s range;
        a ``PolicyError`` names an unknown parameter or a value out of range."""
        known = {p.name: p for p in self.params}
        bound = dict(self.values)
        for key, value in values.items():
            if key not in known:
                valid = ", ".join(known) or "none"
                raise PolicyError(f"policy {self.name}: no parameter {key!r}; its parameters: {valid}")
            bound[key] = known[key].check(value, f"policy {self.name}: ")
        return replace(self, values=tuple((p.name, bound[p.name]) for p in self.params if p.name in bound))

    def value(self, name: str) -> Any:
        """The value of parameter ``name``: bound by :meth:`bind`, else its default."""
        for key, value in self.values:
            if key == name:
                return value
        for p in self.params:
            if p.name == name:
                return p.default
        raise PolicyError(f"policy {self.name}: no parameter {name!r}")

    def arguments(self) -> tuple[Any, ...]:
        """Every parameter's value, in the order of ``params`` (what the compiled kernel receives)."""
        return tuple(self.value(p.name) for p in self.params)

    @property
    def label(self) -> str:
        """The name, with the bound parameter values when there are any: ``smash(w=8)``."""
        if not self.values:
            return self.name
        return f"{self.name}({', '.join(f'{k}={v}' for k, v in self.values)})"


_REGISTRY: dict[str, dict[str, PolicySpec]] = {}


def registered(family: str) -> dict[str, PolicySpec]:
    """The built-in policies of ``family`` (its ``POLICIES``), importing its package ``msjgym.policies.<family>`` if
    needed. The family's modules (kernel-id lookups, agent forms) read it here rather than from their package, so no
    module of a family imports its own package."""
    if family not in _REGISTRY:
        importlib.import_module(f"msjgym.policies.{family.replace('-', '_')}")
    return _REGISTRY[family]


def discover(package: str, family: str) -> dict[str, PolicySpec]:
    """Every built-in policy declared in the modules of ``package``, by name, in discovery order.

    The modules of the package are imported in name order (modules whose name starts with ``_`` are skipped: they
    are generated or private); every module-level :class:`~msjgym.api.PolicySpec` instance of family ``family`` is
    registered once (an instance imported into a second module is the same policy). Two different declarations
    with one name are an error.
    """
    pkg = importlib.import_module(package)
    found: dict[str, PolicySpec] = {}
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name):
        if info.name.startswith("_") or info.ispkg:
            continue
        module = importlib.import_module(f"{package}.{info.name}")
        for value in vars(module).values():
            if not isinstance(value, PolicySpec) or value.family != family:
                continue
            other = found.get(value.name)
            if other is None:
                found[value.name] = value
            elif other is not value:
                raise PolicyError(f"two built-in {family} policies are called {value.name!r} "
                                  f"(one in {package}.{info.name})")
    _REGISTRY[family] = found
    return found


@dataclass(frozen=True)
class Choice(Param):
    """A parameter that takes one of a few named values (``choices``) rather than a number."""

    choices: tuple[str, ...] = ()

    def check(self, value: Any, where: str = "") -> Any:
        if value not in self.choices:
            raise PolicyError(f"{where}{self.name} = {value!r}: must be one of {', '.join(self.choices)} "
                              f"({self.description})")
        return value


__all__ = ["BuiltinPolicy", "Choice", "Param", "PolicySpec", "discover", "registered"]

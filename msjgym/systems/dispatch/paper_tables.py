"""Tables 1–4 of the bounded-queue load-balancer paper, transcribed, and their cavity column recomputed.

Source: Hellemans, Kielanski & Van Houdt, "Performance of Load Balancers with Bounded Maximum Queue Length in case of
Non-Exponential Job Sizes", §8, Tables 1 (push), 2 (water filling), 3 (pull), 4 (resource pooling).

Each of the 64 rows is one (policy, job-size law, λ, parameter, N) with the paper's simulated mean response time
E[R] (time units, mean job size 1), the half-width of its 95% confidence interval (20 runs of N·10⁴ arrivals from an
empty system, 10% warm-up), the paper's cavity value (column "∞") and relative error (%). :func:`cavity_column`
recomputes the "∞" value of every row with :mod:`msjgym.systems.dispatch.cavity`.

Settings the tables leave implicit (docs/modelling-choices.md, "Load balancing"): Table 3 (pull) uses δ₁ = 0,
δ₀ = δ/(1 − λ) — only idle servers report; Table 2 (water filling) uses batches of M = C·log₁₀ N tasks sampling
K = (δ/λ)M servers (an integer in every row); "Hyper-Erlang(k, ℓ) p" is Erlang(k) w.p. p and Erlang(ℓ) w.p. 1 − p,
both of mean 1; the hyperexponential (f, SCV) parametrisation is that of
:meth:`msjgym.core.distributions.HyperExponential.from_mean_scv`.

Run ``python -m msjgym.systems.dispatch.paper_tables`` to print the 16 cavity values, paper against computed.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from msjgym.systems.dispatch.params import pull_update_rates, water_filling_batch_size, water_filling_sample_size
from msjgym.systems.dispatch.cavity import CavityFixedPoint, cavity

TABLES = {1: "push", 2: "water-filling", 3: "pull", 4: "resource-pooling"}
"""Table number -> policy."""


@dataclass(frozen=True)
class TableRow:
    """One row of Tables 1–4 as printed (E[R] in units of the mean job size).

    Attributes:
        table: 1–4.
        policy: see :data:`TABLES`.
        label: the paper's distribution label.
        dist: the law's name for :func:`msjgym.systems.dispatch.distributions.paper_law`.
        lam: λ per server.
        param: δ (Tables 1–3: probe/update rate per server) or p (Table 4: pooled fraction).
        servers: N.
        batch_scale: C of M = C·log₁₀ N (Table 2 only).
        batch_size: M as printed (Table 2 only).
        sim: simulated E[R].
        ci: the half-width of the 95% CI of ``sim``.
        cavity: the "∞" column.
        rel_err: the "rel.err.%" column, |sim − ∞|/∞·100.
    """

    table: int
    policy: str
    label: str
    dist: str
    lam: float
    param: float
    servers: int
    sim: float
    ci: float
    cavity: float
    rel_err: float
    batch_scale: int | None = None
    batch_size: int | None = None

    @property
    def setting(self) -> tuple[int, str, float, float]:
        """(table, dist, λ, parameter): the rows of one setting differ only in N and share the cavity value."""
        return (self.table, self.dist, self.lam, self.param)

    def cavity_params(self) -> dict[str, float]:
        """Keyword parameters of :func:`msjgym.systems.dispatch.cavity.cavity` for this row."""
        if self.policy == "resource-pooling":
            return {"p": self.param}
        if self.policy == "pull":
            delta0, delta1 = pull_update_rates(self.lam, self.param, 0.0)
            return {"delta0": delta0, "delta1": delta1}
        return {"delta": self.param}

    def scenario_params(self) -> dict[str, Any]:
        """Parameters of the row's dispatch scenario: ``servers``, ``dist``, ``lam``, and ``delta`` (push, water
        filling), ``delta``, ``delta0``, ``delta1`` (pull), ``batch_size`` and ``sample_size`` (water filling:
        M and K = (δ/λ)M, checked to be integers), or ``p`` (resource pooling)."""
        out: dict[str, Any] = {"servers": self.servers, "dist": self.dist, "lam": self.lam}
        if self.policy == "resource-pooling":
            out["p"] = self.param
            return out
        out["delta"] = self.param
        if self.policy == "pull":
            out["delta0"], out["delta1"] = pull_update_rates(self.lam, self.param, 0.0)
        if self.policy == "water-filling":
            assert self.batch_scale is not None
            m = water_filling_batch_size(self.batch_scale, self.servers)
            out["batch_size"] = m
            out["sample_size"] = water_filling_sample_size(self.lam, self.param, m, self.servers)
        return out


_N = (100, 1000, 10000, 100000)

# (label, dist, λ, δ or p, ∞, [(sim, ci, rel.err.%) for N = 100, 1000, 10000, 100000], C or None)
_SETTINGS: dict[int, list[tuple]] = {
    1: [
        ("Exponential", "exp", 0.9, 0.3, 6.0081,
         [(5.8698, 2.11e-2, 2.3028), (6.0373, 6.70e-3, 0.4862), (6.0098, 1.39e-3, 0.0288), (6.0084, 6.30e-4, 0.0047)],
         None),
        ("Hyperexponential(2) f = 1/2, SCV = 15", "hyperexp(f=1/2, scv=15)", 0.85, 0.5, 4.5862,
         [(4.7074, 4.67e-2, 2.6416), (4.6229, 9.23e-3, 0.7996), (4.5877, 2.65e-3, 0.0314), (4.5867, 6.53e-4, 0.0106)],
         None),
        ("Erlang(6)", "erlang(k=6)", 0.8, 0.25, 4.2206,
         [(4.0865, 1.02e-2, 3.1766), (4.2557, 6.43e-3, 0.8316), (4.2258, 1.71e-3, 0.1251), (4.2210, 4.53e-4, 0.0106)],
         None),
        ("Hyper-Erlang(2,5) p = 0.25", "hypererlang(k=2, l=5, p=0.25)", 0.85, 0.15, 8.7304,
         [(7.9505, 1.77e-2, 8.9331), (8.4868, 7.58e-3, 2.7905), (8.6962, 1.06e-3, 0.3923), (8.7266, 2.36e-4, 0.0431)],
         None),
    ],
    2: [
        ("Exponential", "exp", 0.8, 0.4, 3.5136,
         [(3.8973, 4.43e-2, 10.9205), (3.5840, 1.49e-2, 2.0040), (3.5446, 3.95e-3, 0.8812),
          (3.5315, 1.68e-3, 0.5093)], 20),
        ("Hyperexponential(2) f = 1/2, SCV = 10", "hyperexp(f=1/2, scv=10)", 0.8, 0.4, 4.5947,
         [(5.5115, 1.09e-1, 19.9529), (4.7841, 3.52e-2, 4.1217), (4.6580, 9.20e-3, 1.3775),
          (4.6239, 2.61e-3, 0.6346)], 40),
        ("Erlang(3)", "erlang(k=3)", 0.75, 1.2, 1.4968,
         [(1.4877, 1.43e-2, 0.6059), (1.5511, 6.14e-3, 3.6306), (1.4975, 2.52e-3, 0.0502),
          (1.4963, 9.06e-4, 0.0298)], 30),
        ("Hyper-Erlang(3,5) p = 0.6", "hypererlang(k=3, l=5, p=0.6)", 0.8, 1.2, 1.5708,
         [(1.6386, 1.53e-2, 4.3178), (1.6993, 8.02e-3, 8.1847), (1.5986, 2.74e-3, 1.7696),
          (1.5756, 8.06e-4, 0.3098)], 30),
    ],
    3: [
        ("Exponential", "exp", 0.7, 0.2, 2.0816,
         [(2.0198, 3.70e-3, 2.9688), (2.0707, 1.28e-3, 0.5237), (2.0803, 3.78e-4, 0.0654), (2.0815, 9.90e-5, 0.0037)],
         None),
        ("Hyperexponential(2) f = 1/2, SCV = 20", "hyperexp(f=1/2, scv=20)", 0.9, 0.4, 1.8726,
         [(2.5316, 4.76e-2, 35.1893), (1.8590, 8.45e-3, 0.7271), (1.8540, 3.07e-3, 0.9965),
          (1.8711, 7.10e-4, 0.0836)], None),
        ("Erlang(3)", "erlang(k=3)", 0.75, 0.15, 3.0000,
         [(2.6126, 6.58e-3, 12.9117), (2.7894, 2.75e-3, 7.0205), (2.8719, 3.54e-3, 4.2689),
          (2.9198, 4.00e-3, 2.6733)], None),
        ("Hyper-Erlang(2,5) p = 0.75", "hypererlang(k=2, l=5, p=0.75)", 0.75, 0.5, 1.1839,
         [(1.2417, 1.99e-3, 4.8781), (1.1888, 4.91e-4, 0.4126), (1.1845, 1.54e-4, 0.0536), (1.1839, 6.97e-5, 0.0038)],
         None),
    ],
    4: [
        ("Exponential", "exp", 0.8, 0.3, 1.3958,
         [(1.4774, 5.42e-3, 5.8454), (1.4153, 1.27e-3, 1.4007), (1.3976, 5.90e-4, 0.1325), (1.3958, 2.35e-4, 0.0046)],
         None),
        ("Hyperexponential(2) f = 1/2, SCV = 5", "hyperexp(f=1/2, scv=5)", 0.7, 0.3, 1.0699,
         [(1.0469, 7.06e-3, 2.1500), (1.0726, 1.59e-3, 0.2493), (1.0702, 4.63e-4, 0.0252), (1.0700, 1.91e-4, 0.0094)],
         None),
        ("Erlang(7)", "erlang(k=7)", 0.9, 0.5, 1.2588,
         [(1.2995, 4.94e-3, 3.2315), (1.2607, 1.33e-3, 0.1566), (1.2589, 4.05e-4, 0.0112), (1.2587, 1.01e-4, 0.0035)],
         None),
        ("Hyper-Erlang(3,5) p = 0.6", "hypererlang(k=3, l=5, p=0.6)", 0.8, 0.1, 2.0320,
         [(2.0725, 4.47e-3, 1.9956), (2.0351, 1.66e-3, 0.1544), (2.0322, 3.88e-4, 0.0134), (2.0321, 1.51e-4, 0.0054)],
         None),
    ],
}

_PRINTED_M = {100: 2, 1000: 3, 10000: 4, 100000: 5}   # log10 N; Table 2 prints M = C·log10 N


def _rows() -> tuple[TableRow, ...]:
    rows = []
    for table, settings in _SETTINGS.items():
        for label, dist, lam, param, inf, sims, scale in settings:
            for n, (sim, ci, rel) in zip(_N, sims):
                rows.append(TableRow(table, TABLES[table], label, dist, lam, param, n, sim, ci, inf, rel, scale,
                                     None if scale is None else scale * _PRINTED_M[n]))
    return tuple(rows)


TABLE_ROWS: tuple[TableRow, ...] = _rows()
"""All 64 rows of Tables 1–4, in the paper's order."""


def settings(table: int | None = None) -> list[TableRow]:
    """One row per setting (the N = 100 row): the 16 settings with a cavity value, or the 4 of one table."""
    return [row for row in TABLE_ROWS if row.servers == _N[0] and (table is None or row.table == table)]


def rows_for(table: int, dist: str | None = None, servers: int | None = None) -> list[TableRow]:
    """The rows of one table, optionally only those of one law (its ``dist`` name) and/or one N."""
    if table not in TABLES:
        raise ValueError(f"table = {table!r}: must be one of 1, 2, 3, 4")
    return [row for row in TABLE_ROWS if row.table == table and (dist is None or row.dist == dist)
            and (servers is None or row.servers == servers)]


def cavity_fixed_point(row: TableRow) -> CavityFixedPoint:
    """The cavity fixed point of a row's setting (:func:`msjgym.systems.dispatch.cavity.cavity`)."""
    return cavity(row.policy, row.lam, row.dist, **row.cavity_params())


def cavity_column(rows: tuple[TableRow, ...] | list[TableRow] = TABLE_ROWS) -> list[tuple[TableRow, float]]:
    """(row, computed cavity E[R]) for every row, solving each distinct setting once."""
    cache: dict[tuple, float] = {}
    out = []
    for row in rows:
        if row.setting not in cache:
            cache[row.setting] = cavity_fixed_point(row).mean_response_time
        out.append((row, cache[row.setting]))
    return out


def format_cavity_column() -> str:
    """A markdown table of the 16 settings: paper's "∞", computed E[R], max queue length, unknown, convergence."""
    lines = ["| table | policy | distribution | λ | δ or p | paper ∞ | computed | 4 dp | max Q | unknown | residual |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in settings():
        fp = cavity_fixed_point(row)
        ok = "yes" if f"{fp.mean_response_time:.4f}" == f"{row.cavity:.4f}" else "NO"
        lines.append(f"| {row.table} | {row.policy} | {row.label} | {row.lam:g} | {row.param:g} | {row.cavity:.4f} | "
                     f"{fp.mean_response_time:.6f} | {ok} | {fp.max_queue_length} | {fp.unknown} = {fp.value:.6g} | "
                     f"{max(fp.residual, fp.balance_residual):.1e} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(format_cavity_column())

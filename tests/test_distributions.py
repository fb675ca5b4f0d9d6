"""Service-time distributions: closed-form moments, NumPy and kernel samplers, specs, errors, determinism."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate

from msjgym.core import sampling
from msjgym.core.distributions import (
    LAWS,
    BoundedPareto,
    Deterministic,
    Distribution,
    Empirical,
    Erlang,
    Exponential,
    HyperErlang,
    HyperExponential,
    LogNormal,
    PhaseType,
    Uniform,
    encode_all,
    from_spec,
)
from msjgym.core.jit import njit
from msjgym.core.rng import spawn_states
from msjgym.errors import ScenarioError

N_DRAWS = 200_000

# One representative of each law (several for the mixtures), used by the sampler and round-trip tests.
CASES: dict[str, Distribution] = {
    "exp": Exponential(rate=2.0),
    "erlang3": Erlang(k=3, rate=2.0),
    "erlang40": Erlang(k=40, rate=10.0),  # > 16 phases: the kernel's chunked product of uniforms
    "det": Deterministic(value=1.5),
    "uniform": Uniform(low=0.5, high=2.0),
    "h2": HyperExponential.from_mean_scv(1.0, 10.0, f=0.3),
    "h3": HyperExponential(rates=(5.0, 1.0, 0.2), probs=(0.5, 0.3, 0.2)),
    "hypererlang": HyperErlang(probs=(0.4, 0.6), k=(2, 5), rates=(4.0, 2.5)),
    "ph": PhaseType(alpha=(0.6, 0.4, 0.0), S=((-3.0, 1.0, 1.5), (0.5, -2.0, 0.5), (1.0, 0.0, -1.0))),
    "lognormal": from_spec({"dist": "lognormal", "mean": 2.0, "scv": 1.5}),
    "bpareto": BoundedPareto(alpha=1.5, low=0.5, high=50.0),
    "bpareto_a1": BoundedPareto(alpha=1.0, low=1.0, high=20.0),
    "empirical": Empirical(values=(0.0, 1.0, 1.0, 2.5, 7.0)),
}


@njit(cache=False)  # not cached: a cache keyed on this file alone would miss changes to the sampler
def _kernel_draws(kind, data, start, state, out):
    for i in range(out.size):
        out[i] = sampling.sample(kind, data, start, state, 0)


def kernel_draws(dist: Distribution, n: int, seed: int = 7) -> np.ndarray:
    """n draws of the compiled sampler (filled into a preallocated array: kernels do not allocate)."""
    kind, data = dist.encode()
    state, _ = spawn_states(seed, 1)
    out = np.empty(n)
    _kernel_draws(kind, np.asarray(data, dtype=np.float64), 0, state, out)
    return out


def assert_matches_moments(x: np.ndarray, dist: Distribution) -> None:
    """Sample mean of S and of S^2 within 4 standard errors of E[S] and E[S^2].

    |estimate - truth| < 4 sd / sqrt(n) is a 99.994 % normal confidence interval (two-sided), so a correct sampler
    fails with probability ~6e-5 per check (and the seeds are fixed). The 1e-12 relative slack covers sd = 0 (det).
    """
    n = len(x)
    for values, target in ((x, dist.mean), (x**2, dist.second_moment)):
        half_width = 4.0 * values.std(ddof=1) / math.sqrt(n)
        assert abs(values.mean() - target) <= half_width + 1e-12 * abs(target), (str(dist), values.mean(), target)


def h2_literal(mean: float, scv: float, f: float) -> tuple[float, float, float]:
    """(mu1, mu2, p1) exactly as docs/modelling-choices.md#lb-hyperexponential writes them (the (f, SCV)
    parametrisation of the hyperexponential in Hellemans, Kielanski & Van Houdt §8)."""
    root = math.sqrt((scv - 1) * (scv - 1 + 8 * f * (1 - f)))
    mu1 = (scv + (4 * f - 1) + root) / (2 * f * (scv + 1))
    mu2 = (scv + (4 * (1 - f) - 1) - root) / (2 * (1 - f) * (scv + 1))
    return mu1 / mean, mu2 / mean, f * mu1


# ---------------------------------------------------------------- closed-form moments

def test_exponential_moments():
    d = from_spec({"dist": "exp", "mean": 4.0})
    assert d.rate == 0.25
    assert (d.mean, d.second_moment, d.scv) == pytest.approx((4.0, 32.0, 1.0))


@pytest.mark.parametrize("k, rate", [(1, 1.0), (3, 2.0), (40, 10.0)])
def test_erlang_moments(k, rate):
    d = Erlang(k=k, rate=rate)
    assert d.mean == pytest.approx(k / rate)
    assert d.scv == pytest.approx(1.0 / k)
    assert d.second_moment == pytest.approx(k * (k + 1) / rate**2)
    assert from_spec({"dist": "erlang", "k": k, "mean": 2.0}) == Erlang(k=k, rate=k / 2.0)


def test_det_and_uniform_moments():
    d = from_spec({"dist": "deterministic", "mean": 3.0})
    assert (d.mean, d.second_moment, d.variance, d.scv) == (3.0, 9.0, 0.0, 0.0)
    u = Uniform(low=1.0, high=3.0)
    assert (u.mean, u.variance) == pytest.approx((2.0, 4.0 / 12.0))
    assert u.second_moment == pytest.approx(u.variance + 4.0)


@pytest.mark.parametrize("scv", [1.0, 1.0001, 2.0, 5.0, 10.0, 100.0])
@pytest.mark.parametrize("f", [0.05, 0.3, 0.5, 0.9])
@pytest.mark.parametrize("mean", [1.0, 2.5])
def test_h2_mean_scv_f(mean, scv, f):
    d = HyperExponential.from_mean_scv(mean, scv, f)
    assert d.mean == pytest.approx(mean, rel=1e-12)
    assert d.scv == pytest.approx(scv, rel=1e-10)
    work_fraction_1 = d.probs[0] / d.rates[0] / d.mean
    assert work_fraction_1 == pytest.approx(f, rel=1e-12)
    assert d.rates[0] >= d.rates[1]  # phase 1 = short jobs ("+" root)
    if scv > 1.0:  # the implementation's rationalised mu2 equals the printed formula
        assert (*d.rates, d.probs[0]) == pytest.approx(h2_literal(mean, scv, f), rel=1e-9)


def test_h2_scv_one_is_exponential():
    d = from_spec({"dist": "h2", "mean": 2.0, "scv": 1.0, "f": 0.3})
    assert d.rates == (0.5, 0.5)
    assert d.probs == pytest.approx((0.3, 0.7))
    assert d.scv == pytest.approx(1.0)


@pytest.mark.parametrize("scv", [1.0 + 1e-12, 1e3, 1e6])
@pytest.mark.parametrize("f", [1e-3, 0.5, 1 - 1e-3])
def test_h2_extreme_parameters_stay_valid(scv, f):
    d = HyperExponential.from_mean_scv(1.0, scv, f)
    assert d.mean == pytest.approx(1.0, rel=1e-9)
    assert d.scv == pytest.approx(scv, rel=1e-6)


@pytest.mark.parametrize("p, k, l", [(0.5, 1, 3), (0.2, 2, 10), (0.9, 4, 1)])
def test_hypererlang_mean_one_mixture(p, k, l):
    """The Hyper-Erlang of Hellemans, Kielanski & Van Houdt §8 as msjgym reads it
    (docs/modelling-choices.md#lb-hyper-erlang): Erl(k) w.p. p, Erl(l) w.p. 1-p, both of mean 1: SCV = p/k + (1-p)/l."""
    d = from_spec({"dist": "hypererlang", "probs": [p, 1 - p], "k": [k, l], "means": [1.0, 1.0]})
    assert d.mean == pytest.approx(1.0)
    assert d.scv == pytest.approx(p / k + (1 - p) / l)


def test_lognormal_moments():
    d = from_spec({"dist": "lognormal", "mean": 2.0, "scv": 1.5})
    assert (d.mean, d.scv) == pytest.approx((2.0, 1.5))
    e = LogNormal(mu=0.3, sigma=0.8)
    assert e.mean == pytest.approx(math.exp(0.3 + 0.32))
    assert e.second_moment == pytest.approx(math.exp(0.6 + 1.28))


@pytest.mark.parametrize("alpha", [0.5, 1.0, 1.0 + 1e-9, 1.5, 2.0, 2.0 - 1e-9, 3.0])
def test_bounded_pareto_moments(alpha):
    d = BoundedPareto(alpha=alpha, low=0.5, high=50.0)
    density = lambda x: alpha * 0.5**alpha * x ** (-alpha - 1) / (1 - (0.5 / 50.0) ** alpha)  # noqa: E731
    pts = [1.0, 5.0]
    assert integrate.quad(density, 0.5, 50.0, points=pts)[0] == pytest.approx(1.0)
    for j, moment in ((1, d.mean), (2, d.second_moment)):
        exact = integrate.quad(lambda x: x**j * density(x), 0.5, 50.0, points=pts, epsrel=1e-12)[0]
        assert moment == pytest.approx(exact, rel=1e-9)


def test_empirical_moments():
    values = [0.0, 1.0, 1.0, 2.5, 7.0]
    d = Empirical(values=values)
    assert d.mean == pytest.approx(np.mean(values))
    assert d.second_moment == pytest.approx(np.mean(np.square(values)))
    assert d.variance == pytest.approx(np.var(values))


# ---------------------------------------------------------------- phase-type

@pytest.mark.parametrize("name", ["exp", "erlang3", "erlang40", "h2", "h3", "hypererlang"])
def test_ph_representation_reproduces_moments(name):
    d = CASES[name]
    ph = d.phase_type()
    assert isinstance(ph, PhaseType)
    assert (ph.mean, ph.second_moment) == pytest.approx((d.mean, d.second_moment), rel=1e-10)


def test_erlang_ph_matrix_as_in_note():
    """Erlang(k) of mean 1: alpha = (1, 0, ..., 0), -k on the diagonal, +k on the superdiagonal."""
    k = 4
    ph = from_spec({"dist": "phase_type", "alpha": [1, 0, 0, 0],
                    "S": [[-k if i == j else k if j == i + 1 else 0 for j in range(k)] for i in range(k)]})
    assert ph == Erlang(k=k, rate=float(k)).phase_type()
    assert (ph.mean, ph.scv) == pytest.approx((1.0, 1.0 / k))


def test_ph_general_moments_by_hand():
    """Two phases with feedback, moments from (alpha, S) solved by hand."""
    ph = PhaseType(alpha=(1.0, 0.0), S=((-2.0, 1.0), (1.0, -3.0)))
    # -S^{-1} = [[3, 1], [1, 2]] / 5; m = alpha (-S)^{-1} 1 = 4/5; E[S^2] = 2 alpha S^{-2} 1 = 2 * (3*4 + 1*3)/25
    assert ph.mean == pytest.approx(0.8)
    assert ph.second_moment == pytest.approx(2 * 15 / 25)


def test_ph_kernel_matches_h2_representation():
    d = CASES["h2"].phase_type()
    assert_matches_moments(kernel_draws(d, N_DRAWS), CASES["h2"])


def test_ph_row_sum_rounding_tolerated():
    ph = from_spec({"dist": "ph", "alpha": [1, 0], "S": [[-0.3, 0.1 + 0.2], [0.0, -1.0]]})
    assert ph.mean == pytest.approx(1 / 0.3 + 1.0)


# ---------------------------------------------------------------- samplers

@pytest.mark.parametrize("name", sorted(CASES))
def test_numpy_sampler_matches_moments(name):
    d = CASES[name]
    x = d.sample(np.random.default_rng(12345), N_DRAWS)
    assert x.shape == (N_DRAWS,) and x.dtype == np.float64 and (x >= 0).all()
    assert_matches_moments(x, d)


@pytest.mark.parametrize("name", sorted(CASES))
def test_kernel_sampler_matches_moments(name):
    d = CASES[name]
    x = kernel_draws(d, N_DRAWS)
    assert (x >= 0).all()
    assert_matches_moments(x, d)


def test_bounded_pareto_kernel_stays_in_support():
    d = BoundedPareto(alpha=0.7, low=2.0, high=3.0)
    x = kernel_draws(d, 10_000)
    assert x.min() >= 2.0 and x.max() <= 3.0


def test_empirical_kernel_only_returns_values():
    d = CASES["empirical"]
    assert set(kernel_draws(d, 10_000)) == set(d.values)


def test_kernel_draws_are_deterministic_per_seed():
    for d in CASES.values():
        a, b = kernel_draws(d, 1000, seed=3), kernel_draws(d, 1000, seed=3)
        np.testing.assert_array_equal(a, b)
        if d.scv > 0:
            assert not np.array_equal(a, kernel_draws(d, 1000, seed=4))


def test_encode_all_layout_and_sampling():
    dists = list(CASES.values())
    kinds, starts, data = encode_all(dists)
    assert kinds.dtype == np.int64 and starts.dtype == np.int64 and data.dtype == np.float64
    for k, d in enumerate(dists):
        kind, block = d.encode()
        assert kinds[k] == kind
        np.testing.assert_array_equal(data[starts[k]:starts[k] + len(block)], block)
        s1, _ = spawn_states(11, 1)
        s2, _ = spawn_states(11, 1)
        packed, alone = np.empty(50), np.empty(50)
        _kernel_draws(kinds[k], data, starts[k], s1, packed)
        _kernel_draws(kind, block, 0, s2, alone)
        np.testing.assert_array_equal(packed, alone)
    empty = encode_all([])
    assert [len(a) for a in empty] == [0, 0, 0]


def test_kind_codes_distinct():
    codes = {d.encode()[0] for d in CASES.values()}
    assert codes == set(range(10))


# ---------------------------------------------------------------- specs

@pytest.mark.parametrize("name", sorted(CASES))
def test_spec_round_trip(name):
    d = CASES[name]
    spec = d.to_spec()
    assert spec["dist"] == d.name
    assert from_spec(spec) == d


@pytest.mark.parametrize("spec, expected", [
    ({"dist": "exponential", "rate": 1}, Exponential(rate=1.0)),
    ({"dist": "h2", "rates": [1, 2], "probs": [0.5, 0.5]}, HyperExponential(rates=(1.0, 2.0), probs=(0.5, 0.5))),
    ({"dist": "hyperexponential", "mean": 1, "scv": 10}, HyperExponential.from_mean_scv(1.0, 10.0, 0.5)),
    ({"dist": "bounded_pareto", "alpha": 2, "low": 1, "high": 10}, BoundedPareto(alpha=2.0, low=1.0, high=10.0)),
    ({"dist": "lognormal", "mu": 0, "sigma": 1}, LogNormal(mu=0.0, sigma=1.0)),
    ({"dist": "hypererlang", "probs": [1.0], "k": [2], "rates": [4.0]}, HyperErlang((1.0,), (2,), (4.0,))),
])
def test_aliases_and_parametrisations(spec, expected):
    assert from_spec(spec) == expected


def test_str_forms():
    assert str(Exponential(rate=1.0)) == "Exp(rate=1)"
    assert str(HyperExponential.from_mean_scv(1.0, 10.0, 0.5)) == "H2(mean=1, scv=10, f=0.5)"
    assert str(Erlang(k=2, rate=1.0)) == "Erlang(k=2, rate=1)"
    for d in CASES.values():
        assert "\n" not in str(d) and str(d)


def test_empirical_from_file(tmp_path):
    (tmp_path / "sizes.txt").write_text("# job sizes\n1.0\n\n  2.5 \n# more\n0\n")
    d = from_spec({"dist": "empirical", "file": "sizes.txt"}, base_dir=tmp_path)
    assert d == Empirical(values=(1.0, 2.5, 0.0))
    assert d.to_spec() == {"dist": "empirical", "values": [1.0, 2.5, 0.0]}
    assert from_spec({"dist": "empirical", "file": str(tmp_path / "sizes.txt")}) == d


@pytest.mark.parametrize("content, fragment", [
    ("1.0\nabc\n", "line 2"),
    ("1.0\n-2\n", "line 2"),
    ("1.0\nnan\n", "line 2"),
    ("# nothing\n\n", "no value > 0"),
    ("0\n0\n", "no value > 0"),
])
def test_empirical_file_errors(tmp_path, content, fragment):
    (tmp_path / "v.txt").write_text(content)
    with pytest.raises(ScenarioError) as info:
        from_spec({"dist": "empirical", "file": "v.txt"}, where="classes[0].service", base_dir=tmp_path)
    message = str(info.value)
    assert message.startswith("classes[0].service.file = 'v.txt': ") and fragment in message
    assert "\n" not in message


def test_empirical_missing_file(tmp_path):
    with pytest.raises(ScenarioError, match=r"^service\.file = 'nope\.txt': cannot read"):
        from_spec({"dist": "empirical", "file": "nope.txt"}, base_dir=tmp_path)


# ---------------------------------------------------------------- errors

BAD_SPECS = [
    # (spec, message head before the first ': ' with W standing for `where`, fragment of the rest)
    (3.0, "W = 3.0", "must be a table"),
    ({"rate": 1.0}, "W.dist", "missing; valid: exp, erlang"),
    ({"dist": "expo"}, "W.dist = 'expo'", "unknown distribution; valid: exp, erlang, det, uniform, hyperexp"),
    ({"dist": 1}, "W.dist = 1", "unknown distribution"),
    ({"dist": "exp", "rate": -1.0}, "W.rate = -1.0", "must be a finite number > 0"),
    ({"dist": "exp", "rate": 0}, "W.rate = 0", "> 0"),
    ({"dist": "exp", "rate": float("nan")}, "W.rate = nan", "finite"),
    ({"dist": "exp", "rate": float("inf")}, "W.rate = inf", "finite"),
    ({"dist": "exp", "rate": True}, "W.rate = True", "finite number"),
    ({"dist": "exp", "rate": "1"}, "W.rate = '1'", "finite number"),
    ({"dist": "exp", "mean": -2}, "W.mean = -2", "> 0"),
    ({"dist": "exp"}, "W", "give exactly one of 'rate' or 'mean'"),
    ({"dist": "exp", "rate": 1, "mean": 1}, "W", "give exactly one of 'rate' or 'mean'"),
    ({"dist": "exp", "foo": 1}, "W.foo", "unknown key for dist 'exp'; valid keys: rate, mean"),
    ({"dist": "erlang", "rate": 1}, "W.k", "missing; required for dist 'erlang'"),
    ({"dist": "erlang", "k": 0, "rate": 1}, "W.k = 0", "integer in [1, 1000]"),
    ({"dist": "erlang", "k": 2.0, "rate": 1}, "W.k = 2.0", "integer in [1, 1000]"),
    ({"dist": "erlang", "k": True, "rate": 1}, "W.k = True", "integer in [1, 1000]"),
    ({"dist": "erlang", "k": 2}, "W", "give exactly one of 'rate' or 'mean'"),
    ({"dist": "det", "value": 0.0}, "W.value = 0.0", "> 0"),
    ({"dist": "det", "value": 1, "mean": 1}, "W", "'value' or 'mean'"),
    ({"dist": "uniform", "low": -1, "high": 1}, "W.low = -1", ">= 0"),
    ({"dist": "uniform", "low": 2, "high": 2}, "W.high = 2", "> low (2)"),
    ({"dist": "uniform", "low": 0}, "W.high", "missing; required for dist 'uniform'"),
    ({"dist": "hyperexp", "mean": 1, "scv": 0.5}, "W.scv = 0.5", ">= 1"),
    ({"dist": "hyperexp", "mean": 1, "scv": 4, "f": 1.0}, "W.f = 1.0", "in (0, 1)"),
    ({"dist": "hyperexp", "mean": 1}, "W.scv", "missing; required with 'mean'"),
    ({"dist": "hyperexp", "rates": [1, 2], "probs": [0.5, 0.5], "f": 0.2}, "W.f = 0.2", "only valid with"),
    ({"dist": "hyperexp", "rates": [1, 2], "probs": [0.5, 0.5], "mean": 1, "scv": 2}, "W", "give either"),
    ({"dist": "hyperexp", "rates": [1, -2], "probs": [0.5, 0.5]}, "W.rates[1] = -2", "> 0"),
    ({"dist": "hyperexp", "rates": [1, 2], "probs": [0.5, 0.6]}, "W.probs", "must sum to 1"),
    ({"dist": "hyperexp", "rates": [1, 2], "probs": [1.0, 0.0]}, "W.probs[1] = 0.0", "in (0, 1]"),
    ({"dist": "hyperexp", "rates": [1, 2, 3], "probs": [0.5, 0.5]}, "W.probs", "as many entries as 'rates' (3)"),
    ({"dist": "hyperexp", "rates": 1.0, "probs": [1.0]}, "W.rates = 1.0", "non-empty list"),
    ({"dist": "hyperexp", "rates": [], "probs": []}, "W.rates = []", "non-empty list"),
    ({"dist": "hypererlang", "probs": [0.5, 0.5], "k": [1, 0], "rates": [1, 1]}, "W.k[1] = 0", "integer >= 1"),
    ({"dist": "hypererlang", "probs": [0.5, 0.5], "k": [1, 2], "means": [1]}, "W.means", "as many entries as 'k'"),
    ({"dist": "hypererlang", "probs": [1.0], "k": [1]}, "W", "'rates' or 'means'"),
    ({"dist": "hypererlang", "k": [1], "rates": [1]}, "W.probs", "missing"),
    ({"dist": "ph", "alpha": [0.5, 0.4], "S": [[-1, 0], [0, -1]]}, "W.alpha", "must sum to 1"),
    ({"dist": "ph", "alpha": [1.2, -0.2], "S": [[-1, 0], [0, -1]]}, "W.alpha[0] = 1.2", "in [0, 1]"),
    ({"dist": "ph", "alpha": [1, 0], "S": [[-1, 0]]}, "W.S", "square 2 x 2"),
    ({"dist": "ph", "alpha": [1, 0], "S": [[-1, 0], [0]]}, "W.S", "square 2 x 2"),
    ({"dist": "ph", "alpha": [1, 0], "S": [[1, 0], [0, -1]]}, "W.S[0][0] = 1", "< 0 (diagonal)"),
    ({"dist": "ph", "alpha": [1, 0], "S": [[-1, -0.5], [0, -1]]}, "W.S[0][1] = -0.5", ">= 0 (off-diagonal)"),
    ({"dist": "ph", "alpha": [1, 0], "S": [[-1, 2], [0, -1]]}, "W.S[0]", "row sum is 1"),
    ({"dist": "ph", "alpha": [1, 0], "S": [[-1, 1], [1, -1]]}, "W.S", "not reachable from phase 0"),
    ({"dist": "ph", "alpha": [1, 0], "S": [[-1, 0], [0, "x"]]}, "W.S[1][1] = 'x'", "finite number"),
    ({"dist": "ph", "alpha": [1]}, "W.S", "missing; required for dist 'ph'"),
    ({"dist": "lognormal", "mean": 1}, "W.scv", "missing; required with 'mean'"),
    ({"dist": "lognormal", "mean": 1, "scv": 0}, "W.scv = 0", "> 0"),
    ({"dist": "lognormal", "mu": 0, "sigma": -1}, "W.sigma = -1", "> 0"),
    ({"dist": "lognormal", "mean": 1, "sigma": 1}, "W", "give either 'mean' and 'scv', or 'mu' and 'sigma'"),
    ({"dist": "bpareto", "alpha": 0, "low": 1, "high": 2}, "W.alpha = 0", "> 0"),
    ({"dist": "bpareto", "alpha": 1, "low": 0, "high": 2}, "W.low = 0", "> 0"),
    ({"dist": "bpareto", "alpha": 1, "low": 3, "high": 2}, "W.high = 2", "> low (3)"),
    ({"dist": "empirical", "values": [0, 0]}, "W.values", "must not all be 0"),
    ({"dist": "empirical", "values": [1, -1]}, "W.values[1] = -1", ">= 0"),
    ({"dist": "empirical", "values": [1], "file": "x"}, "W", "'values' or 'file'"),
    ({"dist": "empirical", "file": 3}, "W.file = 3", "must be a path"),
]


@pytest.mark.parametrize("spec, path, fragment", BAD_SPECS, ids=[str(i) for i in range(len(BAD_SPECS))])
@pytest.mark.parametrize("where", ["service", "classes[1].service"])
def test_bad_spec_messages(spec, path, fragment, where):
    with pytest.raises(ScenarioError) as info:
        from_spec(spec, where=where)
    message = str(info.value)
    assert "\n" not in message
    head, rest = message.split(": ", 1)
    assert head == where + path[1:], message
    assert fragment in rest, message


def test_exact_messages_from_brief():
    cases = [
        ({"dist": "exp", "rate": -1.0}, "service", "service.rate = -1.0: must be a finite number > 0"),
        ({"dist": "expo"}, "classes[1].service",
         "classes[1].service.dist = 'expo': unknown distribution; valid: exp, erlang, det, uniform, hyperexp, "
         "hypererlang, ph, lognormal, bpareto, empirical"),
        ({"dist": "exp"}, "service", "service: give exactly one of 'rate' or 'mean'"),
        ({"dist": "exp", "rate": 1, "foo": 2}, "service",
         "service.foo: unknown key for dist 'exp'; valid keys: rate, mean"),
    ]
    for spec, where, message in cases:
        with pytest.raises(ScenarioError) as info:
            from_spec(spec, where=where)
        assert str(info.value) == message


def test_direct_construction_validates():
    with pytest.raises(ScenarioError, match=r"^Exponential\.rate = 0: must be a finite number > 0$"):
        Exponential(rate=0)
    with pytest.raises(ScenarioError, match=r"^PhaseType\.S: absorption is not reachable"):
        PhaseType(alpha=(0.5, 0.5), S=((-1.0, 1.0), (1.0, -1.0)))


def test_every_law_has_a_case_and_docstring():
    assert {type(d) for d in CASES.values()} == set(LAWS)
    for law in LAWS:
        assert law.__doc__ and "time unit" in law.__doc__.replace("units", "unit"), law.__name__

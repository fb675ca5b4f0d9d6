"""A width rule of your own for the loss systems, compiled into the loss event loop, with a parameter of its own.

    msjgym evaluate loss-small --policy examples/compiled_width_rule.py:at_least --param least=1
    msjgym evaluate loss-small --policy greedy                     # the built-in: the same numbers

``at_least`` takes every idle sampled server, m = min(l, d), as greedy does (Ghanbarian, Mukhopadhyay, Guillemin &
Mazumdar, "Large Loss Systems with Adaptive Multiserver Jobs", §2), but blocks a job that would get fewer than
``least`` servers: ``least = 1`` is the built-in ``greedy`` bit for bit, ``least = d`` behaves as ``fixed-width``.
It declares its law (P(block | state), P(width d | state)), so the PASTA and Stein residuals are measured as for a
built-in. ``random_width`` is the built-in ``random-width`` restated (a uniform width on 1..m, from the replication's
stream), without declaring its law.
"""
import msjgym.systems.loss.compiled as loss
from msjgym.core.jit import njit


@njit
def block_below_least(pmf, b, d):
    """P(block | state) = P(m < least): the sample shows fewer than `least` idle servers."""
    p = 0.0
    for j in range(min(loss.arg(pmf, b, 0), d + 1)):
        p += pmf[b, j]
    return p


@njit
def width_d_when_d_idle(pmf, b, d):
    """P(width d | state) = P(m = d) (least <= d)."""
    return pmf[b, d]


@loss.width_rule(params=(loss.Param("least", 1, "fewest servers a job accepts, in [1, d]", low=1, integer=True),),
                 block_probability=block_below_least, full_width_probability=width_d_when_d_idle)
def at_least(m, d, s, b, pmf):
    """Every idle sampled server (m = min(l, d)), or block when that is fewer than `least`."""
    return m if m >= loss.arg(pmf, b, 0) else 0


@loss.width_rule
def random_width(m, d, s, b, pmf):
    """A width uniform on 1..m (block when m = 0)."""
    if m == 0:
        return 0
    return 1 + loss.below(s, b, m)

"""A profile of future free servers kept in a balanced search tree (a treap), updated in O(log P) per interval.

Conservative backfilling (``conservative_backfilling.py``) plans every job as an interval [start, end) holding its
need. Each job slot j owns two tree nodes: 2j (its start, delta -need) and 2j + 1 (its end, delta +need), keyed by
(time, ends before starts at equal times, node). The free servers at time t are ``n + Σ delta`` over the nodes with
time <= t. Every node keeps, over its subtree in key order, the sum of the deltas and the minimum and maximum of the
running (prefix) sums, so that:

* inserting or removing an interval is O(log P) (P nodes; expected depth of a treap with random priorities);
* ``free_at(t)``, ``free_before(t)``: one descent, O(log P);
* ``first_below(t0, X)``, ``first_at_least(t0, X)``: the first node time after t0 at which the prefix sum falls below
  X (rises to at least X): one descent and one climb back along the search path, O(log P);
* ``earliest(m, d)``: the earliest time t >= now with at least m servers free over [t, t + d): one walk in key
  order that skips every subtree which cannot change the answer (all its prefix sums below m - n while a start is
  looked for, all at least m - n while a window is checked).

Layout, in the state's ``prof_f[b]`` (ints) and ``prof_t[b]`` (times), sized by
``msjgym.systems.msj.state.profile_size``: ``prof_f[b, 0:HEAD)`` scalars (``VALID``, ``ROOT``, the waiting list's
``FIRST``/``LAST``), ``[STACK, STACK + DEPTH)`` and ``[ACCS, ACCS + DEPTH)`` a search path, then ``FIELDS`` ints per
node from ``NODES``; ``prof_t[b, TIMES + node]`` each node's time, ``prof_t[b, 0:TIMES)`` float scalars (the hulls of
the increases of free servers, see ``conservative_backfilling``). Nothing is allocated; ``VALID = 0`` (a new or grown
state: zeros) makes the policy rebuild the tree from the jobs.
"""
from __future__ import annotations

from msjgym.core.jit import njit
from msjgym.systems.msj.state import INF, _U64, _splitmix

# ---------------------------------------------------------------- layout
VALID, ROOT, FIRST, LAST = 0, 1, 2, 3  # prof_f[b, .] scalars
DEPTH = 128  # search paths longer than this cannot occur for any realistic size (expected depth ~ 2 ln P)
STACK = 32
ACCS = STACK + DEPTH
TODO = ACCS + DEPTH  # the in-order walk of ``earliest``: up to two entries per level and three per expansion
NODES = TODO + 4 * DEPTH
FIELDS = 8
F_LEFT, F_RIGHT, F_PRIO, F_DELTA, F_SUM, F_MIN, F_MAX, F_IN = range(FIELDS)
TIMES = 8  # prof_t[b, 0:TIMES): float scalars; node times from TIMES
BIG = 1 << 62


def words(capacity: int) -> int:
    """Ints of ``prof_f`` the tree of ``capacity`` job slots needs (times: ``TIMES + 2·capacity`` floats)."""
    return NODES + FIELDS * 2 * capacity


@njit(inline="always")
def _at(x, k):
    return NODES + FIELDS * x + k


@njit(inline="always")
def _before(T, x, tx, y):
    """Key order: time, then ends (odd nodes) before starts (even nodes), then node (``T``: one system's times;
    ``tx``: node x's time)."""
    ty = T[TIMES + y]
    if tx != ty:
        return tx < ty
    ex = x & 1
    ey = y & 1
    if ex != ey:
        return ex > ey
    return x < y


@njit(inline="always")
def _pull(f, x):
    """Recompute node x's subtree aggregates from its children (``f``: one system's ints)."""
    left = f[_at(x, F_LEFT)]
    right = f[_at(x, F_RIGHT)]
    s = 0
    lo = BIG
    hi = -BIG
    if left >= 0:
        s = f[_at(left, F_SUM)]
        lo = f[_at(left, F_MIN)]
        hi = f[_at(left, F_MAX)]
    s += f[_at(x, F_DELTA)]
    lo = min(lo, s)
    hi = max(hi, s)
    if right >= 0:
        lo = min(lo, s + f[_at(right, F_MIN)])
        hi = max(hi, s + f[_at(right, F_MAX)])
        s += f[_at(right, F_SUM)]
    f[_at(x, F_SUM)] = s
    f[_at(x, F_MIN)] = lo
    f[_at(x, F_MAX)] = hi


@njit(inline="always")
def _priority(x):
    """A fixed pseudo-random priority per node (splitmix64's mixer), non-negative."""
    return int(_splitmix(_U64(x + 1)) >> _U64(2))


@njit(inline="always")
def _replace_child(f, parent, old, new):
    if parent < 0:
        f[ROOT] = new
    elif f[_at(parent, F_LEFT)] == old:
        f[_at(parent, F_LEFT)] = new
    else:
        f[_at(parent, F_RIGHT)] = new


@njit
def clear(st, b, capacity):
    """An empty tree for ``capacity`` job slots (every node out of it)."""
    f = st.prof_f[b]
    f[ROOT] = -1
    for x in range(2 * capacity):
        f[_at(x, F_IN)] = 0


@njit
def insert(st, b, x, t, delta):
    """Put node x (out of the tree) in at time t with ``delta`` free servers from t on."""
    f = st.prof_f[b]
    T = st.prof_t[b]
    T[TIMES + x] = t
    f[_at(x, F_LEFT)] = -1
    f[_at(x, F_RIGHT)] = -1
    f[_at(x, F_PRIO)] = _priority(x)
    f[_at(x, F_DELTA)] = delta
    f[_at(x, F_IN)] = 1
    _pull(f, x)
    y = f[ROOT]
    if y < 0:
        f[ROOT] = x
        return
    k = 0
    while True:
        f[STACK + k] = y
        k += 1
        side = F_LEFT if _before(T, x, t, y) else F_RIGHT
        child = f[_at(y, side)]
        if child < 0:
            f[_at(y, side)] = x
            break
        y = child
    prio = f[_at(x, F_PRIO)]
    while k > 0:  # rotate x up while its priority beats its parent's
        p = f[STACK + k - 1]
        if f[_at(p, F_PRIO)] >= prio:
            break
        if f[_at(p, F_LEFT)] == x:
            f[_at(p, F_LEFT)] = f[_at(x, F_RIGHT)]
            f[_at(x, F_RIGHT)] = p
        else:
            f[_at(p, F_RIGHT)] = f[_at(x, F_LEFT)]
            f[_at(x, F_LEFT)] = p
        _pull(f, p)
        _pull(f, x)
        _replace_child(f, f[STACK + k - 2] if k >= 2 else -1, p, x)
        k -= 1
    for i in range(k - 1, -1, -1):
        _pull(f, f[STACK + i])


@njit
def remove(st, b, x):
    """Take node x out of the tree (nothing if it is not in)."""
    f = st.prof_f[b]
    T = st.prof_t[b]
    if f[_at(x, F_IN)] == 0:
        return
    f[_at(x, F_IN)] = 0
    k = 0
    y = f[ROOT]
    tx = T[TIMES + x]
    while y != x:
        f[STACK + k] = y
        k += 1
        y = f[_at(y, F_LEFT)] if _before(T, x, tx, y) else f[_at(y, F_RIGHT)]
    while True:  # rotate x down until it has at most one child
        left = f[_at(x, F_LEFT)]
        right = f[_at(x, F_RIGHT)]
        if left < 0 or right < 0:
            break
        parent = f[STACK + k - 1] if k > 0 else -1
        if f[_at(left, F_PRIO)] > f[_at(right, F_PRIO)]:
            f[_at(x, F_LEFT)] = f[_at(left, F_RIGHT)]
            f[_at(left, F_RIGHT)] = x
            up = left
        else:
            f[_at(x, F_RIGHT)] = f[_at(right, F_LEFT)]
            f[_at(right, F_LEFT)] = x
            up = right
        _replace_child(f, parent, x, up)
        f[STACK + k] = up
        k += 1
    left = f[_at(x, F_LEFT)]
    child = left if left >= 0 else f[_at(x, F_RIGHT)]
    _replace_child(f, f[STACK + k - 1] if k > 0 else -1, x, child)
    for i in range(k - 1, -1, -1):
        _pull(f, f[STACK + i])


# ---------------------------------------------------------------- queries
@njit
def prefix(st, b, t, inclusive):
    """Σ delta over the nodes with time <= t (``inclusive``) or < t."""
    f = st.prof_f[b]
    T = st.prof_t[b]
    acc = 0
    y = f[ROOT]
    while y >= 0:
        ty = T[TIMES + y]
        if ty < t or (inclusive and ty == t):
            left = f[_at(y, F_LEFT)]
            if left >= 0:
                acc += f[_at(left, F_SUM)]
            acc += f[_at(y, F_DELTA)]
            y = f[_at(y, F_RIGHT)]
        else:
            y = f[_at(y, F_LEFT)]
    return acc


@njit(inline="always")
def _hit(v, x, below):
    return v < x if below else v >= x


@njit(inline="always")
def _subtree_hit(f, y, base, x, below):
    """Does some prefix sum inside subtree y (the sums before it being ``base``) fall below X (reach X)?"""
    if y < 0:
        return False
    if below:
        return base + f[_at(y, F_MIN)] < x
    return base + f[_at(y, F_MAX)] >= x


@njit
def _first(st, b, t0, x, below):
    """The time of the first node (in key order) with time > t0 whose prefix sum is < x (``below``) or >= x; inf if
    none."""
    f = st.prof_f[b]
    T = st.prof_t[b]
    acc = 0
    k = 0
    y = f[ROOT]
    while y >= 0:  # the search path of t0: nodes after t0 where it turns left, with the sums before their subtrees
        if T[TIMES + y] > t0:
            f[STACK + k] = y
            f[ACCS + k] = acc
            k += 1
            y = f[_at(y, F_LEFT)]
        else:
            left = f[_at(y, F_LEFT)]
            if left >= 0:
                acc += f[_at(left, F_SUM)]
            acc += f[_at(y, F_DELTA)]
            y = f[_at(y, F_RIGHT)]
    for i in range(k - 1, -1, -1):  # deepest first: key order
        z = f[STACK + i]
        left = f[_at(z, F_LEFT)]
        v = f[ACCS + i] + f[_at(z, F_DELTA)]
        if left >= 0:
            v += f[_at(left, F_SUM)]
        if _hit(v, x, below):
            return T[TIMES + z]
        y = f[_at(z, F_RIGHT)]
        if _subtree_hit(f, y, v, x, below):
            base = v
            while True:  # descend to the first hit inside y
                left = f[_at(y, F_LEFT)]
                if _subtree_hit(f, left, base, x, below):
                    y = left
                    continue
                if left >= 0:
                    base += f[_at(left, F_SUM)]
                base += f[_at(y, F_DELTA)]
                if _hit(base, x, below):
                    return T[TIMES + y]
                y = f[_at(y, F_RIGHT)]
    return INF


@njit
def first_below(st, b, t0, n, m):
    """The first time after t0 at which fewer than m of the n servers are free (inf: never). Exact when at least m
    are free at t0 (then the value after a group of equal times is below m wherever a node of it first is)."""
    return _first(st, b, t0, m - n, True)


@njit
def first_at_least(st, b, t0, n, m):
    """The first time after t0 at which at least m of the n servers are free (inf: never)."""
    while True:
        t = _first(st, b, t0, m - n, False)
        if t == INF or n + prefix(st, b, t, True) >= m:
            return t
        t0 = t  # a node inside a group of equal times reached m, the group's last did not: look further


@njit
def earliest(st, b, now, n, m, d, limit):
    """The earliest time t >= now with at least m servers free over [t, t + d) (the servers free after the last
    node are n - Σ, at least m once every planned interval has ended); inf if it is not below ``limit``. (The
    answer is now or a time at which free servers rise to m; ``now`` may be any time before which the caller knows
    no start fits, the search starting there.)

    One walk through the nodes after now in key order, skipping every subtree that cannot change what is being
    looked for (a subtree whose prefix sums all stay below m - n while looking for a start, or all stay at least
    m - n while checking a window), so its cost is O(log P) per change of state rather than per node. Equal times
    form a group whose last node gives the free servers from that time on; with ends before starts within a group, a
    node below m - n inside a window means its group ends below it."""
    f = st.prof_f[b]
    T = st.prof_t[b]
    thr = m - n
    v = prefix(st, b, now, True)
    start = now if v >= thr else -1.0
    pending = False
    cand = 0.0
    top = 0
    k = 0
    y = f[ROOT]
    while y >= 0:  # the search path of now: its left turns, shallow to deep, are the walk's first entries
        if T[TIMES + y] > now:
            f[STACK + k] = y
            k += 1
            y = f[_at(y, F_LEFT)]
        else:
            y = f[_at(y, F_RIGHT)]
    for i in range(k):
        z = f[STACK + i]
        f[TODO + top] = 2 * f[_at(z, F_RIGHT)]  # the subtree right of z (an even entry; -2: none)
        f[TODO + top + 1] = 2 * z + 1  # z itself (an odd entry)
        top += 2
    while top > 0:
        top -= 1
        e = f[TODO + top]
        if e < 0:
            continue
        y = e >> 1
        if e & 1 == 0:  # a whole subtree: skip it, or expand it into (right subtree, node, left subtree)
            if not pending and ((start >= 0.0 and v + f[_at(y, F_MIN)] >= thr)
                                or (start < 0.0 and v + f[_at(y, F_MAX)] < thr)):
                v += f[_at(y, F_SUM)]
                continue
            f[TODO + top] = 2 * f[_at(y, F_RIGHT)]
            f[TODO + top + 1] = 2 * y + 1
            f[TODO + top + 2] = 2 * f[_at(y, F_LEFT)]
            top += 3
            continue
        t = T[TIMES + y]
        if pending and t != cand:  # the group at cand has ended: did it reach m?
            pending = False
            if v >= thr:
                start = cand
        if start >= 0.0:
            if not start < limit:
                return INF
            if not t < start + d:
                return start
        elif not pending and not t < limit:
            return INF
        v += f[_at(y, F_DELTA)]
        if start >= 0.0:
            if v < thr:
                start = -1.0
        elif not pending and v >= thr:
            pending = True
            cand = t
    if pending and v >= thr:
        start = cand
    return start if start < limit else INF

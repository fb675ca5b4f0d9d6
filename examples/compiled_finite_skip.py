"""A rate rule of your own for the finite-skip systems, compiled into their event loop, with a parameter of its own.

    msjgym evaluate finite-skip-fig4a --policy examples/compiled_finite_skip.py:capped_fcfs --param cap=0
    msjgym evaluate finite-skip-fig4a --policy tp-fcfs              # the built-in: the same numbers

``capped_fcfs`` is FCFS for threshold parallelism (Grosof, Harchol-Balter & Scheller-Wolf, "The finite-skip method
for multiserver analysis", §6.2: in arrival order each job gets min(P, free servers) of the k) with a cap of its own:
no job gets more than ``cap`` servers. ``cap = 0`` (no cap) is the built-in ``tp-fcfs`` bit for bit; a cap below the
largest threshold leaves servers idle while elastic jobs wait (the loop measures that: not work-conserving).
"""
import msjgym.systems.finite_skip.compiled as fsk


@fsk.rule(system=fsk.THRESHOLD, preemptive=False,
          params=(fsk.Param("cap", 0, "most servers a job gets (0: no cap, its threshold P)", low=0, integer=True),))
def capped_fcfs(n, cls, prm, srv, speeds, k, levels, taken, rates, rng):
    """FCFS, each job in arrival order gets min(P, cap, free servers)."""
    cap = fsk.arg(speeds, k, 0)
    free = k
    for j in range(n):
        if free == 0:
            break
        q = min(prm[cls[j]], free)
        if cap > 0:
            q = min(q, cap)
        rates[j] = q / k
        free -= q

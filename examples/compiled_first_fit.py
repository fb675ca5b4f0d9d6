"""A multiserver-job policy of your own, compiled into msjgym's event loop: first-fit backfilling.

    msjgym evaluate one-and-n --policy examples/compiled_first_fit.py:first_fit

The function runs after every event (an arrival, or the completions at one instant) and starts waiting jobs by
calling ``msj.start``. It is compiled by numba on its own (about a second, the first time and after an edit of this
file; later runs load the cache) and plugged into msjgym's event loop, so it runs at the speed of a built-in policy.
The functions it may call are listed in ``msjgym.systems.msj.compiled``.
"""
import msjgym.systems.msj.compiled as msj


@msj.policy
def first_fit(s):
    """First fit: start any waiting job that fits, oldest first; skip the ones that do not."""
    while True:
        free = msj.free_servers(s)
        best, best_seq = -1, 0
        for c in range(msj.num_classes(s)):
            j = msj.first_waiting(s, c)
            if j < 0 or msj.need(s, c) > free:
                continue
            seq = msj.arrival_seq(s, j)
            if best < 0 or seq < best_seq:
                best, best_seq = c, seq
        if best < 0:
            return
        msj.start(s, best)


@msj.policy(preemptive=True)
def largest_need_first(s):
    """Preemptive most-servers-first: serve the jobs with the largest need, oldest first within a need."""
    for c in range(msj.num_classes(s)):  # start from nothing in service ...
        while msj.in_service(s, c) > 0:
            msj.preempt(s, c)
    while True:  # ... and fill the servers, largest need first
        best = -1
        for c in range(msj.num_classes(s)):
            j = msj.first_waiting(s, c)
            if j < 0 or msj.need(s, c) > msj.free_servers(s):
                continue
            if best < 0 or msj.need(s, c) > msj.need(s, best) or (
                    msj.need(s, c) == msj.need(s, best)
                    and msj.arrival_seq(s, j) < msj.arrival_seq(s, msj.first_waiting(s, best))):
                best = c
        if best < 0:
            return
        msj.start(s, best)

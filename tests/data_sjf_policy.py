"""A compiled policy of the user's for tests/test_requested_times.py: shortest requested time first, no backfilling
(it reads each job's ``estimate``, a trace's requested time)."""
import msjgym.systems.msj.compiled as msj


@msj.policy
def sjf_requested(s):
    """Start the waiting job with the smallest estimate (ties: the older) while it fits; stop at the first that
    does not."""
    while True:
        best, best_est, best_seq = -1, 0.0, 0
        for c in range(msj.num_classes(s)):
            j = msj.first_waiting(s, c)
            while j >= 0:
                e, q = msj.estimate(s, j), msj.arrival_seq(s, j)
                if best < 0 or e < best_est or (e == best_est and q < best_seq):
                    best, best_est, best_seq = j, e, q
                j = msj.next_job(s, j)
        if best < 0 or msj.need(s, msj.job_class(s, best)) > msj.free_servers(s):
            return
        msj.start_job(s, best)

"""Compiled MSJ policies for tests/test_compiled_policy.py: one that misbehaves in a way chosen by the number of
servers (one compiled loop covers every error), and one that numba cannot compile."""
import numpy as np

import msjgym.systems.msj.compiled as msj


@msj.policy
def misbehave(s):
    """Act as first-come first-served, except for the mistake the number of servers selects."""
    n = msj.servers(s)
    if n == 7:
        msj.start(s, msj.num_classes(s))  # a class that does not exist
    elif n == 8 and msj.jobs_in_system(s) > 0:
        for c in range(msj.num_classes(s)):
            if msj.waiting(s, c) == 0:
                msj.start(s, c)  # nothing of that class waits
    elif n == 9 and msj.jobs_in_system(s) > 3:
        for c in range(msj.num_classes(s)):
            while msj.waiting(s, c) > 0:
                msj.start(s, c)  # over-allocation: start everything
    elif n == 11 and msj.jobs_in_system(s) > 0:
        for c in range(msj.num_classes(s)):
            if msj.in_service(s, c) > 0:
                msj.preempt(s, c)  # declared non-preemptive
    elif n == 12:
        msj.next_job(s, -5)  # a job that does not exist
    for c in range(msj.num_classes(s)):
        while msj.waiting(s, c) > 0 and msj.need(s, c) <= msj.free_servers(s):
            msj.start(s, c)


@msj.policy
def allocates(s):
    """Not compilable as a policy: it allocates an array."""
    x = np.zeros(msj.num_classes(s))
    if x.sum() > 0:
        msj.start(s, 0)

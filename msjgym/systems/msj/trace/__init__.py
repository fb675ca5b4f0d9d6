"""Workload traces of the multiserver-job family: everything a trace replay does, in one place.

==================================================  =================================================================
module                                              what it holds
==================================================  =================================================================
:mod:`~msjgym.systems.msj.trace.files`              the ``Trace`` record; reading SWF and CSV files (what is skipped,
                                                    the machine's size, requested times); killing at requested times
:mod:`~msjgym.systems.msj.trace.lublin`             the Lublin–Feitelson workload model: synthetic traces, no file
:mod:`~msjgym.systems.msj.trace.user_estimates`     users' runtime estimates (Tsafrir, Etsion & Feitelson)
:mod:`~msjgym.systems.msj.trace.generators`         a synthetic trace's generator (another draw of its model, scaled
                                                    and estimated alike), picklable for sweep's worker processes
:mod:`~msjgym.systems.msj.trace.windows`            a replay's length, the windows of a trace (``--windows``) and
                                                    each replication's scenario
:mod:`~msjgym.systems.msj.trace.arrivals`           the compiled side: the next trace job to arrive (the event loop),
                                                    an episode's window (the environment's decision path)
:mod:`~msjgym.systems.msj.trace.replay`             a replay's exact metrics: bounded slowdown, makespan, utilization,
                                                    per-size bands; the replay's run-time checks
==================================================  =================================================================

A scenario replays a trace with ``arrivals = {trace = FILE, ...}`` or ``{model = "lublin-feitelson", ...}``
(parsed by :mod:`msjgym.systems.msj.scenarios`); docs/modelling-choices.md explains the choices (trace replay,
requested times, trace windows, user estimates).
"""

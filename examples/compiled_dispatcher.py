"""A dispatcher of your own, compiled into the dispatch event loop, with a parameter of its own.

    msjgym evaluate lb-dispatch --policy examples/compiled_dispatcher.py:my_jsq_d --param sample=3
    msjgym evaluate lb-dispatch --policy jsq-d --param d=3          # the built-in: the same numbers

``my_jsq_d`` is the built-in ``jsq-d`` (the shortest of ``sample`` servers sampled without replacement; Hellemans,
Kielanski & Van Houdt §2) written against ``msjgym.systems.dispatch.compiled``: it draws the same random numbers, so a
run gives the built-in's results bit for bit. ``below_threshold`` is a rule of its own: the first sampled server with
fewer than ``threshold`` jobs, else the shortest of the sample.
"""
import msjgym.systems.dispatch.compiled as lb


@lb.dispatcher(params=(lb.Param("sample", 2, "servers sampled per arrival, in [1, servers]", low=1, integer=True),))
def my_jsq_d(st, pr, b, now):
    """The shortest of `sample` servers sampled at random (the first of the tied, in the sample's random order)."""
    d = lb.arg(pr, 0)
    lb.sample(st, pr, b, d)
    best = lb.sampled(st, 0)
    for k in range(1, d):
        i = lb.sampled(st, k)
        if lb.queue_length(st, i) < lb.queue_length(st, best):
            best = i
    return best


@lb.dispatcher(params=(lb.Param("sample", 2, "servers sampled per arrival", low=1, integer=True),
                       lb.Param("threshold", 2, "join the first sampled server with fewer jobs", low=1,
                                integer=True)))
def below_threshold(st, pr, b, now):
    """The first of `sample` sampled servers with fewer than `threshold` jobs, else the shortest of them."""
    d = lb.arg(pr, 0)
    threshold = lb.arg(pr, 1)
    lb.sample(st, pr, b, d)
    best = lb.sampled(st, 0)
    for k in range(d):
        i = lb.sampled(st, k)
        if lb.queue_length(st, i) < threshold:
            return i
        if lb.queue_length(st, i) < lb.queue_length(st, best):
            best = i
    return best

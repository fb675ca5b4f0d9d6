"""A scheduler of your own, evaluated exactly like the built-in ones:

    msjgym evaluate one-and-n --policy examples/my_policy.py:PatientFirstFit --reps 10 --jobs 100000 --seed 1
    msjgym evaluate one-and-n --policy first-fit --reps 10 --jobs 100000 --seed 1     # compare

It reads the observation through its named view (``spec.view(observation)``: ``msjgym.systems.msj.observation``).
"""


class PatientFirstFit:
    """First-fit backfilling that stops backfilling once the oldest waiting job has waited more than ``patience``
    time units, so servers drain for it (a runtime-free cousin of EASY backfilling). Non-preemptive ("start" mode)."""

    def __init__(self, spec, patience: float = 5.0) -> None:
        if spec.mode_name != "start":
            raise ValueError(f"PatientFirstFit starts jobs: it needs mode 'start', not {spec.mode_name!r}")
        self.spec, self.patience = spec, patience

    def act(self, observation, action_mask) -> int:
        view = self.spec.view(observation)                   # free_servers, waiting, window_ages, ... (print(view))
        oldest = view.start_slot(0)                          # window slot 0 holds the oldest waiting job
        if action_mask[oldest]:
            return oldest                                    # it fits: start it
        if view.oldest_waiting_age > self.patience:
            return view.wait                                 # hold servers back until it fits
        allowed = [a for a in range(view.wait) if action_mask[a]]
        return allowed[0] if allowed else view.wait          # otherwise backfill the oldest job that fits

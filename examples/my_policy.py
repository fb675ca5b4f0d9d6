"""A scheduler of your own, evaluated exactly like the built-in ones:

    msjgym evaluate one-and-n --policy examples/my_policy.py:PatientFirstFit --reps 10 --jobs 100000 --seed 1
    msjgym evaluate one-and-n --policy first-fit --reps 10 --jobs 100000 --seed 1     # compare
"""


class PatientFirstFit:
    """First-fit backfilling that stops backfilling once the oldest waiting job has waited more than ``patience``
    time units, so servers drain for it (a runtime-free cousin of EASY backfilling). Non-preemptive ("start" mode)."""

    def __init__(self, spec, patience: float = 5.0) -> None:
        self.classes, self.window, self.patience = spec.scenario.model.num_classes, spec.window, patience

    def act(self, observation, action_mask) -> int:
        wait = self.window + self.classes                    # the last action: wait for the next event
        oldest_age = observation[1 + 3 * self.classes + 2]   # window slot 0 holds the oldest waiting job
        if action_mask[0]:
            return 0                                         # the oldest waiting job fits: start it
        if oldest_age > self.patience:
            return wait                                      # hold servers back until it fits
        allowed = [a for a in range(wait) if action_mask[a]]
        return allowed[0] if allowed else wait               # otherwise backfill the oldest job that fits

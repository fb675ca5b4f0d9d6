"""The msj system family, everything of it but its policies (``policies/msj/``): model, state, kernels, control
layer, agent path, environment (``env``), scenarios and traces, scorecard and the family's own theory (``theory``)."""

"""The loss system family: model, state, kernels, control layer, scenarios, scorecard."""

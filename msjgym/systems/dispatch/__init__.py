"""The dispatch system family: model, state, kernels, control layer, scenarios, scorecard."""

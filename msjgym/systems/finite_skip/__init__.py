"""The finite-skip system family: model, state, kernels, control layer, scenarios, scorecard."""

"""The msj system family: model, state, kernels, control layer, scenarios, scorecard."""

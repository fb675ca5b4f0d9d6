"""Systems: one module per system, each a model (parameters), a state layout and compiled transitions."""

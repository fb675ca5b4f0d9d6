"""The event engine's building blocks: compiled-kernel helpers, RNG streams, service distributions."""

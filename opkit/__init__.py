"""opkit: onboard a custom PyTorch operator onto Ascend NPUs — generate, lint, verify."""

__version__ = "0.1.0"

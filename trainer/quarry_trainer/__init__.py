"""Quarry's Python side: training adapters for TRL, verl and SkyRL, the tiny model, and ONNX export.

Engines are imported lazily by the modules that need them, so `import quarry_trainer` works with no extra installed.
"""

__version__ = "0.1.0"

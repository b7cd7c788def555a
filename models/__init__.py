"""Recipes that make model artifacts: training data, training, export, quantization, benchmarks."""

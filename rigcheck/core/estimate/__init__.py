"""The arithmetic behind rigcheck's estimates: model shapes, memory, speed, power and links.

Import from ``rigcheck.core.estimate.estimate`` for the public entry points.
"""

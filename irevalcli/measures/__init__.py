"""Measure declarations, one module per family.

``catalog`` imports every family (declaring a measure registers it) and fixes the
output order; ``names`` and ``aliases`` turn ``-m`` arguments into requests.
"""

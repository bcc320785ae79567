"""Measure declarations, one module per family.

Each family module declares its measures (``registry.measure``) and, next to each, the
names other libraries give it (``spellings.spelling``). ``catalog`` imports every family
(declaring registers) and fixes the output order; ``names`` and ``aliases`` turn ``-m``
arguments into requests.
"""

"""Measure declarations, one module per family.

Each family module declares its measures (``registry.measure``: a parameter shape and a
summary, objects of ``registry``) and, next to each, the names other libraries give it
(``spellings.spelling``). Three modules deal with names: ``spellings`` (the table of
other libraries' spellings), ``catalog`` (imports every family, declaring registers;
nicknames; the one ordering rule) and ``names`` (the one ``-m`` grammar, every spelling,
into requests). ``reference`` describes them all (``ireval measures``).
"""

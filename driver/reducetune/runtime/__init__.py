"""Job 2, use the best configuration from Python: ``reducer`` (``reduce`` and ``Reducer``),
``arrays`` (what a PyTorch, CuPy or CUDA array says of itself), ``fast_call`` (the lean
per-call path), ``eager`` (the axis call without the custom operator, when nothing traces
it), ``axis_fast`` (a repeated axis call, resolved once), ``calibrate`` (the bests timed as
applications call them).
"""

"""The one place that opens a results file or an Optuna storage.

``results`` (the C++ store, the Catalog's best and the exports), ``study_storage`` (Optuna's
storage: the results file, a journal file, PostgreSQL; the file locks), ``study_share`` (one
study run by several processes), ``study_merge`` (``db merge``'s Optuna part), ``paths``
(where files go when no path is given).
"""

"""Job 1, tune a new GPU: the search.

``run`` (a run of several workloads under one time limit, and ``tune``), ``loop`` (one
size's study), ``proposal`` (where the next point comes from), ``samplers`` (the strategies),
``warm_start`` (other GPUs' bests first), ``budget`` (when a size stops, how time is shared),
``config`` (what a run is asked, what each size gives back).

Named ``tuning`` rather than ``tune`` so that the public function ``reducetune.tune`` and a
subpackage never share one attribute of the package.
"""

"""Where a point's measurement comes from: ``gpu`` (a worker process on a GPU; both ends of its
pipe), ``replay`` (a recorded database), ``base`` (what every evaluator shares), and
``evaluation`` (served from the store when this context already measured it, else evaluated and
recorded).
"""

"""Research experiments (``reducetune experiment ...``)."""

"""Redaction: a policy of classes (``policy``), detectors that find people, addresses and
account numbers (``detect``), the plan of what to burn (``plan``), and the redaction variant of
the pipeline (``engine``: read and detect in ``scan``, burn in ``build``, the checks that fail
closed in ``readback`` and ``leaks``)."""

"""Redaction: a policy of classes (``policy``), detectors that find people, addresses and
account numbers (``detect``), the plan of what to burn (``plan``), the engine that rebuilds
pages without them (``engine``) and the checks that fail closed (``leaks``)."""

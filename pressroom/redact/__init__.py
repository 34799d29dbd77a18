"""Redaction: a policy of classes, detectors that find values, and (next) the engine that
rebuilds pages without them. Work in progress for issue 4: policy and account numbers first."""

"""The document pipeline, as small stages on one core: ``core`` (options, page placement,
finishing, check) shared by the plain variant (``plain``) and redaction (``redact.engine``);
``variants`` chooses between them; ``stages`` names every stage and times it."""

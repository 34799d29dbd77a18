"""The document pipeline, as small stages on one core: ``core`` (options, page placement,
finishing, check) shared by the plain variant (``plain``) and redaction (``redact.engine``).
The choice between the two is made above the pipeline (``pressroom.processing``); the stage
names and their timer are core values (``pressroom.stages``)."""

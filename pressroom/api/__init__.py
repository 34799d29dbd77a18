"""The HTTP API: accept uploads, show jobs, serve signed downloads. Async only here."""

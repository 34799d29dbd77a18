"""What a tenant name may be: one rule for keys, blob paths, the API and the CLI."""

from __future__ import annotations

import re

# tenant names become a path segment of every blob key: one segment, no surprises
TENANT_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")

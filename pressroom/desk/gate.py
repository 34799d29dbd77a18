"""Who may sign in at the desk, and whether a signed-in person still may: the service's API keys
(``KeyGate``), or the one printed link of an offline desk (``OneTimeGate``)."""

from __future__ import annotations

import hmac
import secrets
import threading
from typing import TYPE_CHECKING, Protocol

from pressroom.deskport import Viewer
from pressroom.keys import key_status

if TYPE_CHECKING:
    from pressroom.service import Services

MAX_KEY = 512  # longer than any key we make: refused before it is hashed


class Gate(Protocol):
    key_form: bool  # True: the sign-in page asks for a key; False: a printed link signs in

    def sign_in(self, key: str) -> Viewer | None:
        """The viewer this key (or link token) signs in, None when it signs in no one."""
        ...

    def open(self, viewer: Viewer, *, now: float, expires: float) -> str:
        """A session the server keeps for ``viewer``: its id, for the cookie."""
        ...

    def still(self, viewer: Viewer, sid: str) -> Viewer | None:
        """The viewer again while its session is held and the key it signed in with is live;
        None ends the session."""
        ...

    def end(self, sid: str) -> None:
        """Sign-out: the session ends on the server, for every copy of its cookie."""
        ...


class KeyGate:
    """The service's API keys: a tenant's key sees its tenant's held jobs, an operator's every
    tenant's. Every request asks the store again, so a revoked key's session ends at once."""

    key_form = True

    def __init__(self, services: Services) -> None:
        self.services = services

    def sign_in(self, key: str) -> Viewer | None:
        key = key.strip()
        if not key or len(key) > MAX_KEY:
            return None
        tenancy = self.services.store.tenancy
        owner = tenancy.key_info(key, now=self.services.clock())
        if owner is None:
            return None
        if owner.role == "operator":
            return Viewer(None, owner.key_id, "operator")
        # a tenant's key or its reviewer's: the tenant's held jobs, nothing else either way
        return Viewer(owner.tenant, owner.key_id, owner.role)

    def open(self, viewer: Viewer, *, now: float, expires: float) -> str:
        return self.services.store.tenancy.open_session(viewer.key_id, now=now, expires=expires)

    def end(self, sid: str) -> None:
        self.services.store.tenancy.end_session(sid, now=self.services.clock())

    def still(self, viewer: Viewer, sid: str) -> Viewer | None:
        if viewer.role not in ("tenant", "operator", "reviewer") or not sid:
            return None
        tenancy = self.services.store.tenancy
        if not tenancy.session_live(sid, viewer.key_id, now=self.services.clock()):
            return None
        row = tenancy.key(viewer.key_id)
        if row is None or key_status(row, now=self.services.clock()) != "live":
            return None
        if row["role"] != viewer.role:
            return None
        if viewer.role != "operator" and row["tenant"] != viewer.tenant:
            return None
        return viewer


class OneTimeGate:
    """The offline desk: no keys, one person. The link printed at start signs in once; the
    token is spent by its first use, so a copy of the link found later opens nothing."""

    key_form = False
    VIEWER = Viewer(None, "offline", "offline")

    def __init__(self, token: str) -> None:
        self._token = token
        self._spent = False
        self._lock = threading.Lock()
        self._sessions: set[str] = set()  # one process: the desk's sessions live here

    @property
    def spent(self) -> bool:
        return self._spent

    def sign_in(self, key: str) -> Viewer | None:
        with self._lock:
            if self._spent or not key or len(key) > MAX_KEY:
                return None
            if not hmac.compare_digest(key.encode(), self._token.encode()):
                return None
            self._spent = True
        return self.VIEWER

    def open(self, viewer: Viewer, *, now: float, expires: float) -> str:
        sid = secrets.token_urlsafe(32)
        with self._lock:
            self._sessions.add(sid)
        return sid

    def end(self, sid: str) -> None:
        with self._lock:
            self._sessions.discard(sid)

    def still(self, viewer: Viewer, sid: str) -> Viewer | None:
        with self._lock:
            live = sid in self._sessions
        return viewer if live and viewer == self.VIEWER else None

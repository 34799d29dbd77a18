"""Notifications: Standard Webhooks, delivered from an outbox by the workers."""

"""The job store, which is also the queue: states, leases, retries, timings."""

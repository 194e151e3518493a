"""The OCI sandbox: `sandbox` (its pool and containers), `host` (what it needs from the
host), `rootfs` (the root file system and toolset folders) and `state` (the run's state
on the host, and sweeping what a dead run left)."""

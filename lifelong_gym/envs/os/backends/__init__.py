"""Where the OS tasks' commands run: sandboxes of limited, disposable containers.

`sandbox` holds what every sandbox shares (limits, the warm pool, starting the shells);
`docker` runs the containers on a Docker engine, `oci/` with crun or runc and no daemon.
`shell` drives a bash session in a container, `reaper` ends the agent's processes,
`restricted_shell` starts a restricted agent's bash, and `toolset` (built by
`toolset_build`) is the judge's read-only copy of the image's programs.
"""

"""`lifelong-gym build-image os|mysql`: an environment's container image, built offline."""

from __future__ import annotations

import importlib

import click

IMAGE_BUILDERS = {"os": "lifelong_gym.envs.os.image", "mysql": "lifelong_gym.envs.db.image"}


@click.command("build-image")
@click.argument("environment", type=click.Choice(sorted(IMAGE_BUILDERS)))
@click.option("--name", help="Image name (default lifelong-gym/ENVIRONMENT:latest).")
@click.option("--suite", help="Debian suite (default bookworm).")
@click.option("--mirror", help="Debian mirror URL (default deb.debian.org).")
@click.option("--force", is_flag=True, help="Rebuild even if the image exists.")
@click.option("--rootfs", help="os only: build a root file system folder (sandbox='oci').")
def build_image(environment: str, force: bool, rootfs: str | None, **choices: str | None) -> None:
    """Build an environment's container image offline (debootstrap + docker import).

    ENVIRONMENT is `os` (the OS tasks' sandbox) or `mysql` (the server that
    `backend=mysql` without a url starts). `--rootfs DIR` builds the OS sandbox's root
    file system into DIR instead, with no Docker (for `sandbox="oci"`).
    """
    module = importlib.import_module(IMAGE_BUILDERS[environment])
    given = {key: value for key, value in choices.items() if value is not None}
    if rootfs is not None:
        if environment != "os" or "name" in given:
            raise click.UsageError("--rootfs goes with `os` and without --name")
        given["folder"] = rootfs
    build = module.build_rootfs if rootfs is not None else module.build_image
    click.echo(build(**given, force=force))

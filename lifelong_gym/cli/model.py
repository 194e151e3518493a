"""`lifelong-gym model SOURCE FOLDER`: a GGUF model saved once as a model folder."""

from __future__ import annotations

import click


@click.command()
@click.argument("source")
@click.argument("folder", type=click.Path(file_okay=False))
@click.option("--dtype", default="float32", show_default=True, help="Weights' dtype in FOLDER.")
def model(source: str, folder: str, dtype: str) -> None:
    """Save a GGUF model as a model folder, once: SOURCE is `smollm2` or a .gguf file.

    Loading a GGUF file takes minutes on a CPU; the folder loads in seconds wherever a model
    folder is taken (`--agent hf:FOLDER`, `TransformersPolicy(FOLDER)`, the examples).
    """
    from lifelong_gym.agents.models.gguf import (
        free_model_folder,
        packaged_or_gguf,
        save_model_folder,
    )

    gguf = packaged_or_gguf(source)
    free_model_folder(folder)
    click.echo(f"loading {gguf} (a few minutes on a CPU) ...", err=True)
    click.echo(f"saved {save_model_folder(gguf, folder, dtype)}")

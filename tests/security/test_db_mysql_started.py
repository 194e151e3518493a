"""The MySQL hostile-input suite of `test_db_mysql.py`, on the server `backend="mysql"` starts.

Every test of that module runs here again with `mysql_url` pointing at the shared MariaDB
container (under a lease held for the module), so the started server keeps every
guarantee of a server given by url.
"""

from __future__ import annotations

import pytest

from lifelong_gym.envs.db.backends.mysql_server import acquire_server
from lifelong_gym.envs.db.image import DEFAULT_IMAGE

from .test_db_mysql import *  # noqa: F403 - the suite's tests and fixtures, collected here


@pytest.fixture(scope="module")
def mysql_url(docker_engine):
    """The started server's URL, for as long as this module runs."""
    try:
        docker_engine.images.get(DEFAULT_IMAGE)
    except Exception:  # noqa: BLE001 - any failure means the image is not usable
        pytest.skip(f"image {DEFAULT_IMAGE} absent: run lifelong-gym build-image mysql")
    lease = acquire_server(DEFAULT_IMAGE, docker_engine)
    yield lease.url
    lease.release()

"""The MySQL hostile-input suite of `test_db_mysql.py`, on the server `backend="mysql"` starts.

Every test of that module runs here again with `mysql_url` pointing at the shared MariaDB
container (under a lease held for the module), so the started server keeps every
guarantee of a server given by url.
"""

from __future__ import annotations

import pytest

from lifelong_gym.envs.db.backends.mysql.server import acquire_server

from .test_db_mysql import *  # noqa: F403 - the suite's tests and fixtures, collected here


@pytest.fixture(scope="module")
def mysql_url(docker_engine, mysql_image):
    """The started server's URL, for as long as this module runs."""
    lease = acquire_server(mysql_image, docker_engine)
    yield lease.url
    lease.release()

"""The MySQL/MariaDB back-end: `backend` (a server at a URL, `url` parses it), `started`
(the server `backend="mysql"` without a url starts, shared by `server`), and `cleanup`
(ending what a back-end started)."""

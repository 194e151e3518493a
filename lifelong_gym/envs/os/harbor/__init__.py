"""Harbor's task folders: read as OS tasks (`tasks`), and written from them (`export`)."""

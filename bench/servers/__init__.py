"""Echo servers the end-to-end benchmark starts as subprocesses, one script per implementation."""

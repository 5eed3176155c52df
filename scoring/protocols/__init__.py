"""RoSE §5 protocol comparison of a dataset: reading its rating rounds, the report, the page and the API."""

"""Pages of the scoring app: dataset pages (home, detail, documents, import) and the dashboards."""

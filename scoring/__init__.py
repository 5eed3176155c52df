"""Results (the top layer): scoring runs, agreement, statistics, dashboards, dataset pages and exports."""

"""What leads read of stored runs: dashboards, leaderboard, charts, exports, pages and the results API."""

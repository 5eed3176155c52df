"""The pure numerical core: aggregation, agreement, bootstrap, correlations, power, worker quality.

Plain functions over numpy arrays. Nothing here imports Django or the rest of the project
(an import-linter contract checks it): the standard library, numpy, scipy and krippendorff only.
Definitions: shared/design/scoring.md.
"""

"""Arms: named combinations of pipeline stages run against a frozen manifest, and everything only they use
(experiment files, stages, seams, window placement, onset repair, combine, caching, workers, clusters)."""

"""The scorer: alignment, pt-BR normalization, every metric, scores that add up, the signature and statistics.

It never imports the pipeline, the evaluation of runs, the report or the protocol."""

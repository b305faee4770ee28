"""A run folder: its layout on disk and its typed record (run.json), shared by the pipeline that writes it
and everything that reads it (evaluation, protocol, adjudication)."""

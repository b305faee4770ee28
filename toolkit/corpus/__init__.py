"""The frozen corpus: the manifest that pins every audio and reference file by hash, its splits and strata."""

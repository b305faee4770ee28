"""pt-BR long-form ASR ablation toolkit."""

__version__ = "0.1.0"

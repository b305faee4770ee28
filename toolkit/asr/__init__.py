"""Recognition: model resolution, sequential and batched Whisper backends, and the recognizer registry."""

from toolkit.asr.models import ModelInfo, resolve_model
from toolkit.asr.registry import Recognizer, decoding_config_class, make_recognizer, relation

__all__ = ["ModelInfo", "Recognizer", "decoding_config_class", "make_recognizer", "relation", "resolve_model"]

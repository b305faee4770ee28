"""pt-BR text normalization for scoring: one frozen, versioned policy for both sides.

See protocol/normalization-policy.md for what each option does.
"""

from toolkit.normalize.normalizer import Normalizer, Token, load_negations
from toolkit.normalize.policy import POLICY_VERSION, NormalizationPolicy

__all__ = ["POLICY_VERSION", "NormalizationPolicy", "Normalizer", "Token", "load_negations"]

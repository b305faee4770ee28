"""pt-BR text normalization for scoring: one frozen, versioned policy for both sides.

See protocol/normalization-policy.md for what each option does.
"""

from toolkit.scorer.normalize.normalizer import Normalizer, load_negations
from toolkit.scorer.normalize.policy import POLICY_VERSION, POLICY_VERSIONS, NormalizationPolicy
from toolkit.scorer.normalize.token import Token

__all__ = ["POLICY_VERSION", "POLICY_VERSIONS", "NormalizationPolicy", "Normalizer", "Token", "load_negations"]

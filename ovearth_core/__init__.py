"""OVEarth Inspector's evaluator for OVEarth-Bench (open vocabulary, referring, reasoning).

>>> from ovearth_core import evaluate_open_vocab
>>> from ovearth_core.io import load_open_vocab_samples
"""

from .errors import OVEarthInputError
from .evaluate import evaluate_open_vocab, evaluate_reasoning, evaluate_referring, evaluate_samples

__all__ = [
    "OVEarthInputError",
    "evaluate_open_vocab",
    "evaluate_reasoning",
    "evaluate_referring",
    "evaluate_samples",
]
__version__ = "0.1.0"

"""OVEarth Inspector's evaluator for OVEarth-Bench (open vocabulary, referring, reasoning).

>>> from ovearth_core import evaluate_open_vocab
>>> from ovearth_core.io import load_open_vocab_samples
"""

from .errors import OVEarthInputError
from .evaluate import evaluate_open_vocab, evaluate_reasoning, evaluate_referring, evaluate_samples
from .gcpause import gc_paused
from .suite import evaluate_files

__all__ = [
    "OVEarthInputError",
    "evaluate_files",
    "evaluate_open_vocab",
    "evaluate_reasoning",
    "evaluate_referring",
    "evaluate_samples",
    "gc_paused",
]
__version__ = "0.1.0"

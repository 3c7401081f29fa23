"""The slice attributes and defaults of ``--slice-by`` (:mod:`.slices`), in a module that
imports nothing: ``python -m ovearth_core.analysis --help`` builds its parser from them
without loading numpy or the evaluator (issue 28)."""

from __future__ import annotations

ATTRIBUTES = ("category", "group", "polarity", "gt_size", "num_gt", "phrase_words",
              "image_size", "tag")
QUERY_FORM = "query_form"  # across the three tasks: :func:`.slices.query_form_table`
GSD = "gsd"
META_PREFIX = "meta:"
DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 0


def slice_arg(text: str) -> str:
    """argparse ``type=`` of ``--slice-by``: :func:`slice_attribute`, its message shown as
    the error (argparse shows only its own "invalid ... value" for a ``ValueError``)."""
    import argparse

    try:
        return slice_attribute(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def slice_attribute(text: str) -> str:
    """``text`` when it names an attribute (for argparse; ``ValueError`` otherwise)."""
    if text in (*ATTRIBUTES, QUERY_FORM, GSD) or (
            text.startswith(META_PREFIX) and len(text) > len(META_PREFIX)):
        return text
    raise ValueError(f"expected one of {', '.join((*ATTRIBUTES, QUERY_FORM, GSD))} or "
                     f"meta:KEY, got {text!r}")

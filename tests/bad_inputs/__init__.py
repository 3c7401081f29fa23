"""Bad-input corpus for the loader and CLI tests (see ``cases.py``)."""

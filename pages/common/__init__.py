"""Streamlit code shared by the app's pages (Streamlit's pages mode ignores this folder)."""

"""Image loading, overlay drawing and plotly figures for the inspection app (no Streamlit)."""

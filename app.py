"""codesearch-gym studio: the Streamlit entry point (routing and the sidebar only)."""

import streamlit as st

st.set_page_config(page_title="codesearch-gym studio", layout="wide")
st.title("codesearch-gym studio")
st.write("The studio pages arrive with the app issue.")

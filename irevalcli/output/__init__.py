"""Renderers and the atomic writer."""

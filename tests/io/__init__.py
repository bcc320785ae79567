"""Readers and the byte source (irevalcli.io)."""

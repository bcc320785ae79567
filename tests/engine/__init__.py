"""The engines: whole, streamed, out of core, Dask (irevalcli.engine)."""

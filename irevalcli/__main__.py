from .commands.main import entry

entry()

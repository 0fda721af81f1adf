"""Code generation: schedules printed as C (:mod:`.printer`), files and manifest (:mod:`.files`)."""

from .files import generate, manifest, write_files

__all__ = ["generate", "manifest", "write_files"]

"""Exceptions raised by the data layer.

All of them derive from :class:`DataError`, so callers can catch the whole family at once,
and each one also derives from the closest built-in exception, so generic handlers work too:

* :class:`DataIntegrityError` (``ValueError``): a file's sha256 (over its decompressed content)
  is not the pinned one, or the file cannot be read (e.g. a truncated gzip stream).
* :class:`DataFormatError` (``ValueError``): bytes that do not follow the publisher's format
  (a malformed LIBSVM line, an idx file with a wrong magic number or size...).
* :class:`DataUnavailableError` (``FileNotFoundError``): a file is absent from the data
  directory and no configured source (mirror, publisher) could provide it.
* :class:`UnknownDatasetError` (``KeyError``): a data set name that the registry does not know.
"""

from __future__ import annotations

__all__ = [
    "DataError",
    "DataFormatError",
    "DataIntegrityError",
    "DataUnavailableError",
    "UnknownDatasetError",
]


class DataError(Exception):
    """Base class of every error raised by :mod:`wsvm_span.data`."""


class DataIntegrityError(DataError, ValueError):
    """A data file is corrupt, truncated or has the wrong sha256."""


class DataFormatError(DataError, ValueError):
    """Bytes that do not follow the expected file format."""


class DataUnavailableError(DataError, FileNotFoundError):
    """A data file is missing and could not be fetched from any source."""


class UnknownDatasetError(DataError, KeyError):
    """The data set name is not in the registry."""

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0]) if self.args else ""

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
    """Base class of every error raised by :mod:`wsvm_span.data`.

    Examples
    --------
    >>> from wsvm_span.data import DataError, DataIntegrityError, DataUnavailableError, UnknownDatasetError
    >>> all(issubclass(e, DataError) for e in (DataIntegrityError, DataUnavailableError, UnknownDatasetError))
    True
    """


class DataIntegrityError(DataError, ValueError):
    """A data file is corrupt, truncated or has the wrong sha256 (also a ValueError).

    Examples
    --------
    >>> from wsvm_span.data import DataIntegrityError
    >>> issubclass(DataIntegrityError, ValueError)
    True
    """


class DataFormatError(DataError, ValueError):
    """Bytes that do not follow the expected file format (also a ValueError).

    Examples
    --------
    >>> from wsvm_span.data import DataFormatError
    >>> issubclass(DataFormatError, ValueError)
    True
    """


class DataUnavailableError(DataError, FileNotFoundError):
    """A data file is missing and could not be fetched from any source (also a FileNotFoundError).

    Examples
    --------
    >>> from wsvm_span.data import DataUnavailableError
    >>> issubclass(DataUnavailableError, FileNotFoundError)
    True
    """


class UnknownDatasetError(DataError, KeyError):
    """The data set name is not in the registry (also a KeyError); the message lists the valid names.

    Examples
    --------
    >>> from wsvm_span.data import UnknownDatasetError, load_dataset
    >>> try:
    ...     load_dataset("splize")
    ... except UnknownDatasetError as exc:
    ...     print(str(exc)[:40])
    unknown data set 'splize'; known: breast
    """

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0]) if self.args else ""

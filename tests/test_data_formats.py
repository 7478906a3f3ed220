"""Parser unit tests on tiny hand-written inputs (wsvm_span.data.formats)."""

from __future__ import annotations

import gzip
import struct

import numpy as np
import pytest

from wsvm_span.data import DataFormatError
from wsvm_span.data.formats import (
    parse_bank_csv,
    parse_ida_asc,
    parse_idx,
    parse_libsvm,
    parse_mnist_images,
    parse_mnist_labels,
    parse_parkinson_train,
    parse_table,
    read_bytes,
)


# ------------------------------------------------------------------------------ LIBSVM
# parse_libsvm reads through sklearn.datasets.load_svmlight_file; these hand-written files pin the
# semantics of the project's former parser (same arrays, same dtype/layout, a DataFormatError that
# names the source and the line), except that indices must ascend within a line, as LIBSVM requires.
def test_libsvm_crlf_no_final_newline_and_blank_lines():
    text = b"+1 1:0.5 3:2\r\n-1 2:1.5\r\n\r\n2 1:4e-1 3:-1"  # CRLF, blank line, no final newline
    X, y = parse_libsvm(text, n_features=4)
    np.testing.assert_array_equal(y, [1.0, -1.0, 2.0])
    expected = np.array([[0.5, 0, 2, 0], [0, 1.5, 0, 0], [0.4, 0, -1, 0]])
    np.testing.assert_array_equal(X, expected)
    assert X.dtype == np.float64 and X.flags.c_contiguous
    assert y.dtype == np.float64


def test_libsvm_lf_and_crlf_agree_and_gzip_is_transparent(tmp_path):
    lf = b"1 1:1 2:2\n-1 2:3\n"
    crlf = lf.replace(b"\n", b"\r\n")
    X1, y1 = parse_libsvm(lf)
    X2, y2 = parse_libsvm(crlf)
    X3, y3 = parse_libsvm(gzip.compress(crlf))
    # gzip is recognised by its magic bytes, not by the name
    (tmp_path / "plain.txt").write_bytes(gzip.compress(lf))
    X4, y4 = parse_libsvm(tmp_path / "plain.txt")
    for X, y in ((X2, y2), (X3, y3), (X4, y4)):
        np.testing.assert_array_equal(X, X1)
        np.testing.assert_array_equal(y, y1)
    assert X1.shape == (2, 2)  # n_features defaults to the largest index


def test_libsvm_row_without_features_and_comments():
    X, y = parse_libsvm(b"1 # nothing here\n-1 3:7 # comment\n", n_features=3)
    np.testing.assert_array_equal(X, [[0, 0, 0], [0, 0, 7]])
    np.testing.assert_array_equal(y, [1, -1])


def test_libsvm_zero_based_and_labels_as_written():
    X, y = parse_libsvm(b"2 0:1 2:-0.25\n1 1:3e2\n", zero_based=True)
    np.testing.assert_array_equal(X, [[1, 0, -0.25], [0, 300, 0]])
    np.testing.assert_array_equal(y, [2, 1])  # mushrooms-style labels are not recoded


@pytest.mark.parametrize(
    "text, line, match",
    [
        (b"1 2:3:4\n", 1, "could not convert"),  # two colons
        (b"1 2:1\n3:1\n", 2, "could not convert"),  # second line lacks its label
        (b"1 2:1 5\n", 1, "unpack"),  # stray number
        (b"1 0:1\n", 1, "Invalid index 0"),  # LIBSVM indices are 1-based
        (b"1 1.5:1\n", 1, "invalid literal"),
        (b"1 2:abc\n", 1, "could not convert"),
        (b"1 3:1 2:1\n", 1, "sorted and unique"),  # LIBSVM itself rejects descending indices
        (b"1 2:1\n1 2:1 2:5\n", 2, "sorted and unique"),  # a repeated index
        (b"1 99999999999:1\n", 1, "out of range"),
    ],
)
def test_libsvm_malformed(text, line, match):
    with pytest.raises(DataFormatError, match=match) as info:
        parse_libsvm(text)
    assert str(info.value).startswith(f"<bytes>: not LIBSVM text, line {line}: ")


def test_libsvm_sparse_is_the_same_matrix_as_csr():
    text = b"+1 1:0.5 3:2\n-1 2:1.5\n"
    X, y = parse_libsvm(text, n_features=5, sparse=True)
    dense, y_dense = parse_libsvm(text, n_features=5)
    assert X.format == "csr" and X.shape == (2, 5) and X.dtype == np.float64
    assert X.indices.dtype == X.indptr.dtype == np.int32  # what SVC's sparse libsvm accepts
    np.testing.assert_array_equal(X.toarray(), dense)
    np.testing.assert_array_equal(y, y_dense)


@pytest.mark.parametrize("text", [b"", b"# only a comment\n\n"])
def test_libsvm_without_samples_is_an_error(text):
    with pytest.raises(DataFormatError, match="<bytes>: no data lines"):
        parse_libsvm(text)


@pytest.mark.parametrize(
    "text, line",
    [(b"1 1:1\n-1 2:nan\n", 2), (b"1 1:inf\n", 1), (b"1 1:1\nnan 1:2\n", 2), (b"1 1:1e999\n", 1)],
)
def test_libsvm_non_finite_label_or_value(text, line):
    with pytest.raises(DataFormatError, match="not finite") as info:
        parse_libsvm(text)
    assert str(info.value).startswith(f"<bytes>: not LIBSVM text, line {line}: ")


def test_libsvm_index_beyond_n_features():
    with pytest.raises(DataFormatError, match="n_features was set to 3"):
        parse_libsvm(b"1 4:1\n", n_features=3)


def test_libsvm_truncated_file_names_the_file_and_the_line(tmp_path):
    """A text file cut in the middle of a token fails with the file's name and its last line."""
    good = b"".join(b"%d 1:0.5 2:0.25 3:1\n" % (1 if i % 2 else -1) for i in range(50))
    path = tmp_path / "cut.txt"
    path.write_bytes(good[: good.rindex(b":") + 1])  # "... 3:" without its value
    with pytest.raises(DataFormatError) as info:
        parse_libsvm(path, n_features=3)
    assert str(info.value).startswith(f"{path}: not LIBSVM text, line 50: '1 1:0.5 2:0.25 3:'")


# ------------------------------------------------------------------------------ IDA / UCI tables
def test_ida_asc():
    text = b"   1.0000000e+00  -2.5000000e-01\n   3.0000000e+00   4.0000000e+00\n"
    A = parse_ida_asc(text)
    np.testing.assert_array_equal(A, [[1.0, -0.25], [3.0, 4.0]])
    labels = parse_ida_asc(b"  -1.0000000e+00\r\n   1.0000000e+00")
    assert labels.shape == (2, 1)


def test_table_ragged_rows_raise():
    with pytest.raises(DataFormatError, match="expected 2"):
        parse_ida_asc(b"1 2\n3\n")


def test_table_tab_and_comma_with_missing_values():
    tab = parse_table(b"74\t85\t123\t1\r\n255\t255\t255\t2\r\n", delimiter="\t")
    np.testing.assert_array_equal(tab, [[74, 85, 123, 1], [255, 255, 255, 2]])
    csv = parse_table(b"1000025,5,1,?,2\n1002945,5,4,10,4", delimiter=",")
    assert csv.shape == (2, 5)
    assert np.isnan(csv[0, 3]) and csv[1, 3] == 10


def test_table_empty_field_raises():
    with pytest.raises(DataFormatError, match="empty field"):
        parse_table(b"1,2,3\n1,,3\n", delimiter=",")


# ------------------------------------------------------------------------------ idx
def _idx(type_code: int, dims: tuple[int, ...], payload: bytes) -> bytes:
    return bytes([0, 0, type_code, len(dims)]) + struct.pack(f">{len(dims)}I", *dims) + payload


def test_idx_images_and_labels():
    images = _idx(0x08, (2, 2, 3), bytes(range(12)))
    X = parse_mnist_images(images)
    assert X.shape == (2, 6) and X.dtype == np.uint8
    np.testing.assert_array_equal(X[1], [6, 7, 8, 9, 10, 11])
    y = parse_mnist_labels(gzip.compress(_idx(0x08, (3,), bytes([7, 2, 1]))))
    np.testing.assert_array_equal(y, [7, 2, 1])


def test_idx_big_endian_types_become_native():
    arr = parse_idx(_idx(0x0C, (2,), struct.pack(">2i", -5, 70000)))
    np.testing.assert_array_equal(arr, [-5, 70000])
    assert arr.dtype.isnative


@pytest.mark.parametrize(
    "data, parser, match",
    [
        (b"\x00\x00\x08\x04" + b"\x00" * 20, parse_mnist_images, "magic number 0x00000804"),
        (_idx(0x08, (3,), b"\x01\x02\x03"), parse_mnist_images, "expected 0x00000803"),
        (_idx(0x08, (1, 2, 2), b"\x00" * 4), parse_mnist_labels, "expected 0x00000801"),
        (b"\x01\x02\x08\x01\x00\x00\x00\x01\x00", parse_idx, "invalid magic"),
        (b"\x00\x00\x07\x01\x00\x00\x00\x01\x00", parse_idx, "invalid magic"),  # unknown type
        (_idx(0x08, (2, 2, 2), b"\x00" * 7), parse_mnist_images, "truncated"),
        (_idx(0x08, (2, 2, 2), b"\x00" * 9), parse_mnist_images, "trailing"),
        (b"\x00\x00", parse_idx, "too short"),
        (_idx(0x08, (2,), b"\x01\x0a"), parse_mnist_labels, "not a digit"),
    ],
)
def test_idx_rejects_bad_headers_and_sizes(data, parser, match):
    with pytest.raises(DataFormatError, match=match):
        parser(data)


def test_corrupt_gzip_is_a_format_error(tmp_path):
    good = gzip.compress(b"1 1:1\n" * 100)
    with pytest.raises(DataFormatError, match="gzip"):
        parse_libsvm(good[: len(good) // 2])
    path = tmp_path / "cut.txt.gz"
    path.write_bytes(good[: len(good) // 2])
    with pytest.raises(DataFormatError, match=f"{path}: corrupt or truncated gzip stream"):
        parse_libsvm(path)


# ------------------------------------------------------------------------------ Parkinson / bank
def test_parkinson_train_row():
    features = ",".join(str(i / 10) for i in range(26))
    text = f"3,{features},40,1\r\n21,{features},1,0".encode()
    out = parse_parkinson_train(text)
    np.testing.assert_array_equal(out["subject"], [3, 21])
    assert out["X"].shape == (2, 26) and out["X"][0, 25] == 2.5
    np.testing.assert_array_equal(out["updrs"], [40, 1])
    np.testing.assert_array_equal(out["cls"], [1, 0])
    with pytest.raises(DataFormatError, match="columns"):
        parse_parkinson_train(b"1,2,3\n")


def test_bank_csv_quoted_header_crlf():
    header = ";".join(f'"{c}"' for c in (
        "age", "job", "marital", "education", "default", "housing", "loan", "contact", "month",
        "day_of_week", "duration", "campaign", "pdays", "previous", "poutcome", "emp.var.rate",
        "cons.price.idx", "cons.conf.idx", "euribor3m", "nr.employed", "y"))  # fmt: skip
    row = '56;"housemaid";"married";"basic.4y";"no";"no";"no";"telephone";"may";"mon";261;1;999;0;' \
          '"nonexistent";1.1;93.994;-36.4;4.857;5191;"no"'
    df = parse_bank_csv((header + "\r\n" + row + "\r\n").encode())
    assert df.shape == (1, 21)
    assert df["duration"].iloc[0] == 261 and df["y"].iloc[0] == "no"
    assert df["cons.conf.idx"].iloc[0] == pytest.approx(-36.4)
    with pytest.raises(DataFormatError, match="missing columns"):
        parse_bank_csv(b'"a";"b"\r\n1;2\r\n')


def test_read_bytes_gunzips_by_magic(tmp_path):
    p = tmp_path / "plain_name.txt"  # no .gz suffix: detection is by content
    p.write_bytes(gzip.compress(b"hello"))
    assert read_bytes(p) == b"hello"

"""Every code the package emits, for a translation layer to cover.

The package never produces prose: errors and warnings are these codes plus
parameters. The tests check that each code raised or warned is listed here.
"""

from __future__ import annotations

# parse_dataset: the file as a whole, its encoding, then its rows and columns.
PARSE_ERRORS = (
    "too_large",  # params size, limit (bytes)
    "empty",
    "not_text",  # params kind: one of BINARY_KINDS
    "undecodable",  # params encoding (the one tried, or None)
    "bad_json",  # row, column (character position), params reason: one of JSON_REASONS
    "not_object",  # row, params type: one of JSON_TYPES
    "ragged_row",  # row, params expected, found, line
    "no_header",  # the first CSV row is numbers or blanks, not column names
    "no_columns",  # JSON Lines whose objects have no keys at all
    "no_rows",  # a header but no data row
    "duplicate_column",  # row, column, params name
    "empty_column_name",  # row, params position (1-based)
    "too_many_columns",  # row, params count, limit
    "too_many_rows",  # row, params limit
    "unclosed_quote",  # row, params line: a quoted CSV cell that never ends
    "bad_quote",  # row, params line: text right after a closing quote
    "cell_too_large",  # row, params line, limit (characters)
)

# build_cases
ROLE_ERRORS = (
    "no_input_column",
    "unknown_column",  # column
    "bad_role",  # column, params role
)

# dataset_files.human: the columns of a person's judgement, and their values
HUMAN_ERRORS = (
    "two_human_columns",  # column, params other, role
    "score_and_label",  # column: a human score and a human label both
    "note_alone",  # column: a human note without a human score or label
    "bad_scale",  # column, params lo, hi
    "too_few_classes",  # column, params count
    "too_many_classes",  # column, params count, limit
    "outside_scale",  # row, column, params value, lo, hi
    "unknown_label",  # row, column, params value, classes
)

# column_types: a declared type, and a value that does not fit it (build_cases,
# case_of_row, typed_value)
TYPE_ERRORS = (
    "bad_type",  # column, params type
    "not_a_number",  # row, column, params value (as the file has it, cut short)
    "not_json",  # row, column, params value
)

# split_by_ratio, split_by_column, sample_cases
SPLIT_ERRORS = (
    "bad_ratios",  # params train, validation, test, reason: one of RATIO_REASONS
    "unknown_column",  # column
    "unknown_split_value",  # row, column, params value, index
    "empty_split_value",  # row, column, params index
    "too_few_train_cases",  # params count, needed
)

WARNINGS = (
    "formula_like_cells",  # params count, cells: [{"row", "column"}, ...] (the first few)
    "encoding_guessed",  # params encoding: not UTF-8 nor marked by a BOM, so detected
)

ERROR_CODES = tuple(
    dict.fromkeys(PARSE_ERRORS + ROLE_ERRORS + HUMAN_ERRORS + TYPE_ERRORS + SPLIT_ERRORS)
)
CODES = ERROR_CODES + WARNINGS

# Parameter values that are codes too.
BINARY_KINDS = ("zip", "ole2", "pdf", "gzip", "parquet", "unknown")  # zip/ole2: likely Excel
JSON_REASONS = (
    "expecting_value",
    "expecting_property_name",
    "expecting_comma",
    "expecting_colon",
    "unterminated_string",
    "invalid_control_character",
    "invalid_escape",
    "extra_data",
    "non_standard_constant",  # NaN, Infinity, -Infinity
    "invalid_number",  # e.g. an integer with more digits than Python converts
    "too_deep",
    "syntax",
)
JSON_TYPES = ("array", "string", "number", "boolean", "null")
RATIO_REASONS = ("not_number", "negative", "train_zero", "sum_not_one")

PARAM_CODES: dict[str, dict[str, tuple[str, ...]]] = {
    "two_human_columns": {"role": ("human_score", "human_label", "human_note")},
    "not_text": {"kind": BINARY_KINDS},
    "bad_json": {"reason": JSON_REASONS},
    "not_object": {"type": JSON_TYPES},
    "bad_ratios": {"reason": RATIO_REASONS},
}

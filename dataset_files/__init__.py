"""Datasets for optimization runs: parse an upload, assign column roles and types, split.

Django-free. Everything reports codes and parameters only (DatasetError and
Table.warnings); a translation layer words them. CODES lists them all.
"""

from __future__ import annotations

from dataset_files.codes import CODES, ERROR_CODES, PARAM_CODES, WARNINGS
from dataset_files.column_types import COLUMN_TYPES, as_json_text, infer_types, typed_value
from dataset_files.errors import DatasetError
from dataset_files.formulas import is_formula_like, safe_cell
from dataset_files.human import HUMAN_ROLES, human_columns, human_of_row, human_settings
from dataset_files.parse import MAX_BYTES, MAX_COLUMNS, MAX_ROWS, detect_format, parse_dataset
from dataset_files.roles import ROLES, build_cases, case_of_row, role_columns
from dataset_files.splits import (
    SPLIT_VALUES,
    SPLITS,
    counts,
    sample_cases,
    split_by_column,
    split_by_ratio,
)
from dataset_files.table import Table

__all__ = [
    "CODES",
    "COLUMN_TYPES",
    "ERROR_CODES",
    "MAX_BYTES",
    "MAX_COLUMNS",
    "MAX_ROWS",
    "PARAM_CODES",
    "ROLES",
    "SPLITS",
    "SPLIT_VALUES",
    "WARNINGS",
    "DatasetError",
    "HUMAN_ROLES",
    "Table",
    "as_json_text",
    "build_cases",
    "case_of_row",
    "role_columns",
    "counts",
    "detect_format",
    "human_columns",
    "human_of_row",
    "human_settings",
    "infer_types",
    "is_formula_like",
    "parse_dataset",
    "safe_cell",
    "sample_cases",
    "split_by_column",
    "split_by_ratio",
    "typed_value",
]

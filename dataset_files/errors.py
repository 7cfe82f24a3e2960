"""The one exception the package raises for a dataset a user must fix."""

from __future__ import annotations


class DatasetError(ValueError):
    """A code and its parameters; a translation layer words them for the user.

    `row` is the row as the user finds it in the file: for CSV the spreadsheet
    row (the header is row 1), for JSON Lines the 1-based line number. `column`
    is a column name, or for bad_json the 1-based character position the JSON
    decoder stopped at.
    """

    def __init__(
        self,
        code: str,
        *,
        row: int | None = None,
        column: str | int | None = None,
        params: dict | None = None,
    ) -> None:
        super().__init__(code, row, column, params or {})
        self.code = code
        self.row = row
        self.column = column
        self.params = params or {}

    def as_dict(self) -> dict:
        """JSON-ready form, for storing the error next to an upload."""
        return {"code": self.code, "row": self.row, "column": self.column, "params": self.params}

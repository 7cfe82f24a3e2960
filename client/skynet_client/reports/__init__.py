"""What CI systems read of a check or an evaluation, beside the terminal's lines: a JUnit
XML file (junit), a Markdown job summary (summary) and GitHub's workflow annotations
(annotations). Each is built from the API's own documents, so each says what the page
says."""

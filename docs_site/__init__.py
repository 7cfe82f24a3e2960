"""The localized docs pages: Markdown from docs/, rendered and served.

May import the core only; never the web apps above it (see pyproject's import contracts).
"""

"""Tests for mcpfast.server.schema.docstrings: descriptions from Google, Sphinx and NumPy
docstrings, as `parse_docstring` returns them and as they land in a tool's schema."""

from mcpfast.server.schema import function_schema, parse_docstring


def props(sig):
    return sig.input_schema["properties"]


def test_google_docstring():
    def f(a: int, b: str = "", c: int = 0):
        """Summary line.

        Longer body
        over two lines.

        Args:
            a (int): First
                continued here.
            b: Second.

            c: Third after a blank line.

        Returns:
            Something.
        """

    sig = function_schema(f)
    assert sig.description == "Summary line.\n\nLonger body\nover two lines.\n\nReturns:\n    Something."
    assert props(sig)["a"]["description"] == "First continued here."
    assert props(sig)["b"]["description"] == "Second."
    assert props(sig)["c"]["description"] == "Third after a blank line."


def test_sphinx_docstring():
    def f(a: int, b: str = ""):
        """Do it.

        :param a: the a
            value.
        :type a: int
        :param str b: the b
        :returns: nothing
        """

    sig = function_schema(f)
    assert sig.description == "Do it.\n\n:returns: nothing"
    assert props(sig)["a"]["description"] == "the a value."
    assert props(sig)["b"]["description"] == "the b"


def test_numpy_docstring():
    def f(a: int, b: str = "", c: str = ""):
        """Do it.

        Parameters
        ----------
        a : int
            The a.
        b, c : str
            Shared.

        Returns
        -------
        int
            Result.
        """

    sig = function_schema(f)
    assert sig.description == "Do it.\n\nReturns\n-------\nint\n    Result."
    assert props(sig)["a"]["description"] == "The a."
    assert props(sig)["b"]["description"] == "Shared."
    assert props(sig)["c"]["description"] == "Shared."


def test_parse_docstring_edge_cases():
    assert parse_docstring(None) == ("", {})
    assert parse_docstring("") == ("", {})
    assert parse_docstring("Only a summary.") == ("Only a summary.", {})
    assert parse_docstring("Summary.\n\nArgs:\n    x: y\n") == ("Summary.", {"x": "y"})
    assert parse_docstring("S.\n\n    Args:\n        *args: rest\n        **kw: more\n    ") == (
        "S.",
        {"args": "rest", "kw": "more"},
    )
    # A parameter with no text gets no description.
    assert parse_docstring("S.\n\nArgs:\n    x:\n") == ("S.", {})


def test_missing_docstring_gives_empty_description():
    def f():
        pass

    sig = function_schema(f)
    assert sig.description == ""
    assert "description" not in sig.to_tool()

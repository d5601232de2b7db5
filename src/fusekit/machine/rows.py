"""What the rows of the machine's tables share: they stand where enum members stood (``Pipe.V``, ``Mem.UB`` in the
Trace), so they compare by identity, have a ``value`` (their name), and copy and pickle as themselves."""

from __future__ import annotations


class Row:
    """A table row; a subclass has a ``name`` field and a classmethod ``named(name)`` that finds the row."""

    @property
    def value(self) -> str:
        """The name, as the former enum member's value."""
        return self.name

    def __reduce__(self):
        return (type(self).named, (self.name,))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

"""The one error an import raises: it names the file, the line and the problem."""

from config.errors import ServiceError


class DatasetImportError(ServiceError):
    def __init__(self, problem: str, file: str | None = None, line: int | None = None):
        self.problem = problem
        self.file = file
        self.line = line
        super().__init__(str(self))

    def __str__(self):
        where = ""
        if self.file:
            where = self.file + (f", line {self.line}" if self.line else "") + ": "
        return where + self.problem


class DatasetExists(DatasetImportError):
    """A dataset of that name exists and replacing it was not asked for; each caller says how
    to ask (the page's Replace box, the command's --replace)."""

    def __init__(self, name: str):
        self.name = name
        super().__init__(f"a dataset named {name!r} exists")

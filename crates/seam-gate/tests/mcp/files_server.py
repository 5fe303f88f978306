"""A real MCP server (the official Python SDK) whose tools read files, with their paths where
a FastMCP tool puts them: in a pydantic model (`$ref`/`$defs`), an `Optional[str]` (`anyOf`), a
`uri`, and the values of a dict with patterned keys (`patternProperties`).

argv[1]: a file this server appends one line (the tool's name) to for every call it receives,
so a test can tell whether a call reached it.
"""

import pathlib
import sys
import urllib.parse
import urllib.request
from typing import Annotated, Optional

from pydantic import BaseModel, Field

from mcp.server.mcpserver import MCPServer

CALLS = pathlib.Path(sys.argv[1])

server = MCPServer("files")


def called(tool: str) -> None:
    with CALLS.open("a") as f:
        f.write(tool + "\n")


def read(path: str) -> str:
    return pathlib.Path(path).expanduser().read_text()


class ReadRequest(BaseModel):
    file_name: str
    max_lines: int = 100


@server.tool(description="Reads the file a request names.")
def read_model(req: ReadRequest) -> str:
    called("read_model")
    return "\n".join(read(req.file_name).splitlines()[: req.max_lines])


@server.tool(description="Reads a file, or says there is none.")
def read_optional(location: Optional[str] = None) -> str:
    called("read_optional")
    return read(location) if location else "(no file)"


@server.tool(description="Reads the file a file: URI names.")
def read_uri(uri: str) -> str:
    called("read_uri")
    parsed = urllib.parse.urlparse(uri)
    if parsed.scheme != "file":
        return f"(not a file: {parsed.scheme})"
    return read(urllib.request.url2pathname(parsed.path))


@server.tool(description="Reads each file of a map, by its label.")
def read_map(
    entries: dict[Annotated[str, Field(pattern=r"^[a-z]+$")], str],
) -> str:
    called("read_map")
    return "\n".join(f"{k}: {read(v)}" for k, v in sorted(entries.items()))


if __name__ == "__main__":
    server.run("stdio")

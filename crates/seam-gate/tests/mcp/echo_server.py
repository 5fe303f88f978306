"""A real MCP server (the official Python SDK) for seam's upstream tests.

argv[1]: a file holding the echo tool's description (a test rewrites it to change the
definition); argv[2]: a file this server appends one line to for every call it receives, so a
test can tell whether a call reached it.
"""

import pathlib
import sys

from mcp.server.mcpserver import MCPServer

DESCRIPTION = pathlib.Path(sys.argv[1]).read_text()
CALLS = pathlib.Path(sys.argv[2])

server = MCPServer("echo")


@server.tool(description=DESCRIPTION)
def echo(text: str) -> str:
    with CALLS.open("a") as f:
        f.write("echo\n")
    return text


if __name__ == "__main__":
    server.run("stdio")

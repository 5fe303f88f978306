"""A real MCP client (the official Python SDK) driving seam, for seam-cli's MCP tests.

usage: client.py stdio SEAM_BINARY CALLS_JSON     (runs `SEAM_BINARY mcp` as the server)
       client.py http URL TOKEN CALLS_JSON        (streamable HTTP, bearer token)

CALLS_JSON is a list of [tool, arguments]. Prints one JSON object: the tool names seam lists,
and for each call {"is_error", "text", "structured"}. The environment (HOME, SEAM_HOME, PATH)
is passed on to `seam mcp`.
"""

import asyncio
import json
import os
import sys

from mcp.client.session import ClientSession


async def drive(session, calls):
    await session.initialize()
    listed = await session.list_tools()
    out = {"tools": sorted(t.name for t in listed.tools), "calls": []}
    for tool, args in calls:
        res = await session.call_tool(tool, args)
        dumped = res.model_dump(by_alias=True, exclude_none=True)
        text = "\n".join(c.get("text", "") for c in dumped.get("content", []))
        out["calls"].append(
            {
                "tool": tool,
                "is_error": bool(dumped.get("isError", False)),
                "text": text,
                "structured": dumped.get("structuredContent"),
            }
        )
    return out


async def over_stdio(seam, calls):
    from mcp.client.stdio import StdioServerParameters, stdio_client

    env = {k: v for k, v in os.environ.items() if k in ("HOME", "SEAM_HOME", "PATH")}
    params = StdioServerParameters(command=seam, args=["mcp"], env=env, cwd=os.getcwd())
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            return await drive(session, calls)


async def over_http(url, token, calls, opener=None):
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    headers = {"Authorization": f"Bearer {token}"}
    if opener:
        # a session is a turn of its own: opening one takes the turn opener
        headers["seam-turn-opener"] = opener
    client = create_mcp_http_client(headers=headers)
    async with client:
        async with streamable_http_client(url, http_client=client) as streams:
            read, write = streams[0], streams[1]
            async with ClientSession(read, write) as session:
                return await drive(session, calls)


def main():
    mode = sys.argv[1]
    if mode == "stdio":
        result = asyncio.run(over_stdio(sys.argv[2], json.loads(sys.argv[3])))
    else:
        opener = sys.argv[5] if len(sys.argv) > 5 else None
        result = asyncio.run(over_http(sys.argv[2], sys.argv[3], json.loads(sys.argv[4]), opener))
    sys.stdout.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()

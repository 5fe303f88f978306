"""AgentDojo's tools as an MCP server over stdio (the official Python SDK), for seam's gate.

Serves one suite's tools over one environment: the suite's default one, or one with
injections placed (AgentDojo's own `load_and_inject_default_environment`), set up for a user
task (its `init_environment`). Each tool's input schema is the JSON Schema of AgentDojo's own
parameter model, with every object closed (`additionalProperties: false`). The environment's
state is written, as AgentDojo's own model dump, to the state file after every call and when
the server exits, so AgentDojo's `utility()` and `security()` can judge it. The state is a
pickle of the environment object: its JSON dump does not survive a round trip (AgentDojo's
calendar and inbox rebuild themselves from their initial lists when validated, dropping what a
call added), and the judge needs exactly what the calls left. With `--state FILE`, FILE.json
holds the JSON dump as well, to read. (To load the pickle, import
agentdojo.task_suite.load_suites first: unpickling a suite's environment on its own trips over
an import cycle in agentdojo.)

    python3 server.py --suite banking [--user-task user_task_0] [--injections FILE.json]
                      [--state FILE.pickle]
    python3 server.py --suite banking --runs DIR

With `--runs DIR` the server serves a series of runs without restarting (the replay's way,
since starting a gate and this server for each of ~1,000 runs costs minutes): before each
call it reads DIR/run.json ({"id", "user_task", "injections"}); when the id changed, it
builds that run's environment afresh. State goes to DIR/state-ID.pickle. This is a channel
between the replay and the server only: the gate and the model never see it.

It sets no MCP annotations: what each tool is, is the gate's config (agentdojo.toml).
"""

import argparse
import json
import pathlib
import pickle
import sys

import anyio
import mcp_types as types
from agentdojo.agent_pipeline.tool_execution import tool_result_to_str
from agentdojo.default_suites.v1.tools.types import CalendarEvent
from agentdojo.functions_runtime import FunctionsRuntime
from agentdojo.task_suite.load_suites import get_suite
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

BENCHMARK_VERSION = "v1.2.2"


def closed(schema):
    """The schema with every object closed, recursively (properties, items, $defs, combinators)."""
    if isinstance(schema, dict):
        out = {k: closed(v) for k, v in schema.items()}
        if out.get("type") == "object" or "properties" in out:
            if out.get("additionalProperties") not in (None, False):
                raise SystemExit(f"an open object in a schema: {json.dumps(schema)[:200]}")
            out["additionalProperties"] = False
            out.setdefault("properties", {})
        return out
    if isinstance(schema, list):
        return [closed(v) for v in schema]
    return schema


# send_email's `attachments` are `list[dict]` in AgentDojo's model: an open object, which a
# closed schema cannot take. Its docstring and code say what an attachment is: a file of the
# drive by id, or a calendar event (AgentDojo's own CalendarEvent model). That is the schema.
def attachment_schema():
    event = CalendarEvent.model_json_schema()
    defs = event.pop("$defs", {})
    event.pop("title", None)
    return defs, {
        "anyOf": [
            {
                "type": "object",
                "properties": {"type": {"const": "file"}, "file_id": {"type": "string"}},
                "required": ["type", "file_id"],
            },
            {
                "type": "object",
                "properties": {"type": {"const": "event"}, "event_details": event},
                "required": ["type", "event_details"],
            },
        ]
    }


def tool_schema(function):
    schema = function.parameters.model_json_schema()
    schema.pop("title", None)
    if function.name == "send_email":
        defs, attachment = attachment_schema()
        schema["properties"]["attachments"]["anyOf"][0]["items"] = attachment
        schema.setdefault("$defs", {}).update(defs)
    out = closed(schema)
    if '"additionalProperties": true' in json.dumps(out):
        raise SystemExit(f"{function.name}: an open object is left in its schema")
    return out


class Environments:
    """The environment calls run in: one fixed, or the current run's."""

    def __init__(self, suite, args):
        self.suite = suite
        self.args = args
        self.run_id = None
        self.loaded = {}
        self.env = None
        self.state = None
        if args.runs is None:
            injections = {}
            if args.injections:
                injections = json.loads(pathlib.Path(args.injections).read_text())
            self.env = self.build(args.user_task, injections)
            self.state = pathlib.Path(args.state) if args.state else None

    def build(self, user_task, injections):
        # Loading a suite's environment parses its YAML (half a second for workspace): each
        # set of injections is loaded once, and each run gets a deep copy.
        key = json.dumps(injections, sort_keys=True)
        if key not in self.loaded:
            self.loaded[key] = self.suite.load_and_inject_default_environment(injections)
        env = self.loaded[key].model_copy(deep=True)
        if user_task:
            env = self.suite.get_user_task_by_id(user_task).init_environment(env)
        return env

    def current(self):
        if self.args.runs is not None:
            runs = pathlib.Path(self.args.runs)
            run = json.loads((runs / "run.json").read_text())
            if run["id"] != self.run_id:
                self.run_id = run["id"]
                self.env = self.build(run.get("user_task"), run.get("injections") or {})
                self.state = runs / f"state-{self.run_id}.pickle"
        return self.env

    def save(self):
        if self.state is not None and self.env is not None:
            tmp = self.state.with_suffix(".tmp")
            tmp.write_bytes(pickle.dumps(self.env))
            tmp.replace(self.state)
            if self.args.runs is None:
                self.state.with_suffix(".json").write_text(self.env.model_dump_json(indent=1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--suite", required=True, choices=["workspace", "travel", "banking", "slack"])
    parser.add_argument("--user-task")
    parser.add_argument("--injections", help="a JSON file: injection vector -> text")
    parser.add_argument("--state", help="where the environment's state is written")
    parser.add_argument("--runs", help="a directory of runs (see the module's text)")
    args = parser.parse_args()

    suite = get_suite(BENCHMARK_VERSION, args.suite)
    runtime = FunctionsRuntime(suite.tools)
    functions = {f.name: f for f in suite.tools}
    tools = [
        types.Tool(
            name=f.name,
            description=f.description,
            input_schema=tool_schema(f),
        )
        for f in suite.tools
    ]
    envs = Environments(suite, args)

    async def list_tools(ctx, params):
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx, params):
        name = params.name
        if name not in functions:
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=f"no tool {name!r}")], is_error=True
            )
        env = envs.current()
        result, error = runtime.run_function(env, name, dict(params.arguments or {}), raise_on_error=False)
        envs.save()
        if error is not None:
            return types.CallToolResult(content=[types.TextContent(type="text", text=error)], is_error=True)
        return types.CallToolResult(content=[types.TextContent(type="text", text=tool_result_to_str(result))])

    server = Server("agentdojo", on_list_tools=list_tools, on_call_tool=call_tool)

    async def serve():
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    try:
        anyio.run(serve)
    finally:
        envs.save()


if __name__ == "__main__":
    sys.exit(main())

"""The MCP adapter: the only package that imports MCP. Registers the tools, the guide and run resources and the
prompt; the start cache of published schemas; bearer-token auth for HTTP. Imports the engines; none imports it."""

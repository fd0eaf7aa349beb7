"""aoti-debug install: registering the server with agent clients (Claude Code, Codex; JSON and TOML configs), and
the launch commands for local, SSH and scheduler hosts. Imports common/ only."""

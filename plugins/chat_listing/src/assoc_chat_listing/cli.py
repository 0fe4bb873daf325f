"""``assoc chat ...`` commands: export the stored raw responses behind a table, run the test server."""

from __future__ import annotations

import json

import click


@click.group(name="chat")
def chat_group() -> None:
    """Chat-model listings and ratings (chat_listing): raw responses, the offline test server."""


@chat_group.command(name="responses")
@click.option(
    "--table",
    "-t",
    "table_path",
    type=click.Path(exists=True, dir_okay=False),
    help="A chat_listing table (.csv/.parquet/.jsonl): export the responses behind its response_id column. "
    "Without it: every stored chat response.",
)
@click.option("--cache-dir", default=None, help="Cache root (default: $ASSOC_CACHE_DIR or the user cache directory).")
@click.option(
    "--out",
    required=True,
    help="JSON Lines file: one stored request and raw response per line.",
)
def responses_command(table_path: str | None, cache_dir: str | None, out: str) -> None:
    """Write the stored raw responses (what each model said, exactly) to a JSON Lines file."""
    import assoc
    from assoc import DataError, atomic_write, check_output_file

    from . import responses

    check_output_file(out, "--out")
    ids = None
    if table_path is not None:
        table = assoc.read_table(table_path)
        if "response_id" not in table.columns:
            raise DataError(f"{table_path} has no response_id column: is it a chat_listing table?")
        ids = [str(i) for i in table["response_id"].dropna().unique()]
    frame = responses(ids, cache_dir=cache_dir)
    if ids is not None and len(frame) < len(ids):
        missing = len(ids) - len(frame)
        click.echo(
            f"warning: {missing} response(s) of the table are not in the cache {cache_dir or '(default)'}", err=True
        )
    with atomic_write(out, "w", encoding="utf-8") as handle:
        for record in frame.to_dict(orient="records"):
            handle.write(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
    click.echo(f"{len(frame)} response(s) written to {out}", err=True)


@chat_group.command(name="test-server")
@click.option("--port", type=int, default=0, help="Port on 127.0.0.1 (default: a free one).")
@click.option("--delay", type=float, default=0.0, help="Seconds before each answer.")
def test_server_command(port: int, delay: float) -> None:
    """Run the offline OpenAI-compatible test server in the foreground (Ctrl-C stops it)."""
    import subprocess
    import sys

    # The core's server (assoc.testing.openai_server), run as its documented command: the plugin kit
    # is for tests, and plugin code imports only the plugin API (docs/plugin-api.md).
    command = [sys.executable, "-m", "assoc.testing.openai_server", "--port", str(port), "--delay", str(delay)]
    try:
        status = subprocess.call(command)
    except KeyboardInterrupt:  # the server got the same Ctrl-C and stops
        status = 0
    raise SystemExit(status)

"""python/examples/mcp_arm_session.py, the manual's transcript (docs/src/mcp.md), run as a user
would: against the daemon in hil on a virtual SO-101 (`fakesim-hil emulate`), over HTTPS with a token."""

import json
import os
import subprocess
import sys
from pathlib import Path

from pki import TOKEN, tls_options

EXAMPLE = Path(__file__).parents[2] / "examples" / "mcp_arm_session.py"


def test_the_example_session_drives_the_virtual_arm_and_the_table_layer_refuses_the_dive(daemon, virtual_arm, pki):
    started = daemon(*virtual_arm.follower_args, "--mode", "hil", "--mcp-listen", "127.0.0.1:0", *tls_options(pki))
    env = {**os.environ, "FAKESIM_HIL_TOKEN": TOKEN, "FAKESIM_HIL_TLS_CA": str(pki["ca"])}
    run = subprocess.run([sys.executable, str(EXAMPLE), started["mcp_url"]], env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("connected to fakesim-hil")
    calls = [line[3:].split(" ", 1)[0] for line in lines if line.startswith("-> ")]
    assert calls == ["list_tasks", "reset_task", "move", "move", "gripper", "stop_episode"]
    answers = [line[3:] for line in lines if line.startswith("<- ")]
    assert answers[1].endswith("+ 2 PNG images")
    sideways = json.loads(answers[2].removesuffix(" + 2 PNG images"))
    assert sideways["action"]["stop_reason"] == "reached"
    refused = json.loads(answers[3].removeprefix("tool error "))
    # The table layer, or the twin's preview when a jaw pad would reach the table first.
    assert (refused["error"], refused["layer"]) in (("below_table", "table"), ("preview_refused", "preview"))
    closed = json.loads(answers[4].removesuffix(" + 2 PNG images"))
    assert closed["action"]["stop_reason"] == "settled"
    assert json.loads(answers[5])["status"] == "stopped"

    # The session held the lease under its name while it drove the arm, and gave it back.
    process = started["process"]
    process.wait_for(r'lease acquired holder="MCP HTTP session 1 \(mcp\)"')
    process.wait_for(r'lease released holder="MCP HTTP session 1 \(mcp\)"')
    assert process.stop() == 0

"""Reads the JSON lines that `tilec bench` and `tilec-gpu-runner bench --json` write, for the table scripts.
Standard library only."""
import json
import sys


def read_rows(paths):
    """The rows of every file, in order; None (after a located message on stderr) if a line is not JSON."""
    rows = []
    for path in paths:
        with open(path) as f:
            for n, line in enumerate(f, 1):
                if line.strip():
                    try:
                        rows.append(json.loads(line))
                    except json.JSONDecodeError as e:
                        print(f"{path}:{n}: not a JSON line: {e}", file=sys.stderr)
                        return None
    return rows

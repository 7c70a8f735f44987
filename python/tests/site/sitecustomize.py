"""Run at the start of every LeRobot command the tests start: the SDK's wider reply window (see
slow_host.py in the directory above)."""

from slow_host import widen_reply_window

widen_reply_window()

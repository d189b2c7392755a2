#!/usr/bin/env python3
"""Time the console's first frame: launch the real binary in a pseudo-
terminal of 120x40 and wait until MARKER (text of a row the first page
shows) has been drawn. Answers the terminal's cursor-position query as a
terminal would (lipgloss asks it once at start). Prints milliseconds from
launch to the first byte and to the marker.

    .ci/firstframe.py ./retrysafe MARKER --db URL-or-FILE [--read-only] ...
"""
import fcntl, os, pty, select, signal, struct, sys, termios, time

exe, marker, args = sys.argv[1], sys.argv[2].encode(), sys.argv[3:]
t0 = time.monotonic()
pid, fd = pty.fork()
if pid == 0:
    os.environ["TERM"] = "xterm-256color"
    os.execv(exe, [exe] + args)
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
buf, first, found = b"", None, None
while time.monotonic() - t0 < 20:
    ready, _, _ = select.select([fd], [], [], 0.05)
    if not ready:
        continue
    try:
        data = os.read(fd, 65536)
    except OSError:
        break
    if first is None:
        first = time.monotonic() - t0
    buf += data
    if b"\x1b[6n" in data:
        os.write(fd, b"\x1b[1;1R")
    if marker in buf:
        found = time.monotonic() - t0
        break
os.kill(pid, signal.SIGKILL)
os.waitpid(pid, 0)
print("first_byte_ms=%.0f first_row_ms=%s" % ((first or -1) * 1000, "%.0f" % (found * 1000) if found else "not_found"))
sys.exit(0 if found else 1)

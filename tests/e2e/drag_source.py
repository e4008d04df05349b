#!/usr/bin/env python3
"""A GTK3 drag source for end-to-end tests: a window at (X, Y) whose button drags the given
files as text/uri-list, exactly as a file manager would. Run with the system Python
(python3-gi). Usage: drag_source.py X Y FILE..."""
import sys
import urllib.parse

import gi

gi.require_version("Gtk", "3.0")
gi.require_version("Gdk", "3.0")
from gi.repository import Gdk, Gtk  # noqa: E402

x, y, files = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
win = Gtk.Window(title="hsmc-e2e-drag-source")
win.set_default_size(240, 160)
win.move(x, y)
button = Gtk.Button(label="drag me")
button.drag_source_set(Gdk.ModifierType.BUTTON1_MASK, [], Gdk.DragAction.COPY)
button.drag_source_add_uri_targets()
button.connect("drag-data-get", lambda w, ctx, data, info, t: data.set_uris(["file://" + urllib.parse.quote(f) for f in files]))
win.add(button)
win.connect("destroy", Gtk.main_quit)
win.show_all()
print("ready", flush=True)
Gtk.main()

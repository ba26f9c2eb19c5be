"""What the user sees: the CLI (cli/, one module per command), the app (tui/, with its state in
tui/session.py), the report (report/) and one form's inspector sections (form_view). Views read
the stores and start the scenarios; nothing below imports them."""

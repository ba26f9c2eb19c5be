from deploytui.cli import main

raise SystemExit(main())

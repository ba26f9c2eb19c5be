from deploytui.views.cli.main import main

raise SystemExit(main())

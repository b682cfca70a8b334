from podtui.cli.main import main

raise SystemExit(main())

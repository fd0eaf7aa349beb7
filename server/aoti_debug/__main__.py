from aoti_debug.cli import main

raise SystemExit(main())

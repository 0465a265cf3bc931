from codesearch_core.cli import main

raise SystemExit(main())

"""Shared by every test folder. Test folders mirror `codesearch_core`'s packages (tests/tools/ for
codesearch_core/tools/, ...); the helpers beside this file (store_helpers, app_support, ...) are
importable from all of them because pytest puts this folder on sys.path for its conftest."""

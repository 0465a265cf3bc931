"""codesearch-gym studio core library: schemas, runner, grader, blueprints, engines, store, exports."""

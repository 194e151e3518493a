"""The results of a run: its folder's format, and everything that reads it.

The engine (`lifelong_gym.run`) writes a run's folder through this package, and the
readers here (`lifelong-gym report`, `compare`, the HTML pages) read it back with nothing
of the runner, the agents or the environments loaded. A run folder holds:

- `sessions.jsonl`: one line per finished session, the record of the run
  (`folder.RunDirectory` appends and resumes it; `folder.read_sessions` reads it);
- `state.json`: the callbacks' saved states, when a callback keeps state;
  `state.before-error.json`, `retry.json` and `sessions.retried.jsonl` hold what
  `--retry-errors` keeps and cuts (`folder`);
- `config.json`: what the run is, with the content hashes of its tasks and data files
  (`content`); `run_record.RunIdentity` reads it;
- `costs.jsonl`: one line per finished session, what it cost (`costs.SessionCost`), and
  `cost.json`, the sums (`cost_summary`);
- `probes.jsonl`: one line per probe episode (`probe_measures.ProbeRecord`);
- `metrics.json`, `learning_curve.png`, `statuses.png`, `per_skill.png`: what
  `report.report_run` and the runner's end write (`report`, `plots`), and `report.html`
  (`html_report`);
- `run.log`: the tracebacks of callbacks that raised (written by the engine).

`run_record.load_run` reads a whole folder into a `RunRecord` (sessions, metrics recomputed,
costs, identity), folders written by earlier versions included (`tests/data/run-made-by-0.1.0`).
"""

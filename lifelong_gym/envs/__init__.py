"""The three environments, laid out alike: who knows one knows where things are in all three.

Each of `db/`, `os/` and `kg/` holds:

- `env.py`: the Gymnasium environment (`LifelongDBEnv`, `LifelongOSEnv`, `LifelongKGEnv`);
- `actions.py`: the environment's one parser of an agent's reply, and its observations;
- `prompt.py`: the opening prompt of a task;
- `tasks.py`: the task record, its loader and its converters from other formats;
- `skills.py`: the environment's skill taxonomy (`TAXONOMY`: its skills, their groups and
  prerequisites), the one list its task class carries and its generator draws from;
- `backends/`: where the agent's actions run (db: `sqlite/` embedded and `mysql/` a
  server; os: `docker` and `oci/` sandboxes, the shells in them; kg: the embedded
  Oxigraph store, `local` lookups, the `store_process` child, or a SPARQL endpoint);
- `generator/`: the seeded task generator (`lifelong-gym generate ENV`) and what only it
  uses (db: domains and query builders; os: `templates/`; kg: the synthetic graph and
  its phrases).

Beside these, each keeps the pieces only it has: db `answer.py`, `table_hash.py` and the
MySQL image (`image.py`); os `judge.py`, its image and `harbor/` (Harbor task folders in
and out); kg the logical forms (`sexpr.py`), their SPARQL (`sparql.py`) and the binding
of a task set to its graph (`graph_binding.py`).
"""

"""The sessions database: schema versions, migrations, pruning, and several processes on one."""

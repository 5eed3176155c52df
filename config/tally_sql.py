"""SQL of the append-only tally tables (annotation.tallies, hits.tallies), PostgreSQL only.

A tally table holds rows (key columns..., count columns...): a key's count is the sum of its
rows. Statement-level triggers with transition tables (`new_rows`, `old_rows`) append the
change of each key per statement; `fold` merges each key's rows into one.
"""

REFERENCING = {
    "insert": "NEW TABLE AS new_rows",
    "update": "OLD TABLE AS old_rows NEW TABLE AS new_rows",
    "delete": "OLD TABLE AS old_rows",
}


def function_sql(name: str, insert: str, update: str, delete: str) -> str:
    """A trigger function running one of three statements by the operation that fired it (a
    statement names only the transition tables its operation has)."""
    return (
        f"CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$\nBEGIN\n"
        f"  IF TG_OP = 'INSERT' THEN {insert}\n  ELSIF TG_OP = 'UPDATE' THEN {update}\n  ELSE {delete}\n"
        "  END IF;\n  RETURN NULL;\nEND $$;"
    )


def triggers_sql(function: str, table: str, operations=tuple(REFERENCING)) -> list[str]:
    """(Re)create the statement-level triggers `<function>_<operation>` on `table`."""
    return [
        f"DROP TRIGGER IF EXISTS {function}_{op} ON {table};"
        f" CREATE TRIGGER {function}_{op} AFTER {op.upper()} ON {table}"
        f" REFERENCING {REFERENCING[op]} FOR EACH STATEMENT EXECUTE FUNCTION {function}();"
        for op in operations
    ]


def drop_sql(function: str, table: str) -> list[str]:
    return [
        *(f"DROP TRIGGER IF EXISTS {function}_{op} ON {table};" for op in REFERENCING),
        f"DROP FUNCTION IF EXISTS {function}();",
    ]


def fold(cursor, table: str, keys: list[str], counts: list[str]) -> int:
    """Merge each key's rows of a tally table into one row (dropped when every count sums to 0);
    returns the rows removed. Only deletes and inserts: writers meanwhile append as usual, and
    a row is removed by one fold only, so concurrent folds keep the sums."""
    key, on = ", ".join(keys), " AND ".join(f"t.{k} = k.{k}" for k in keys)
    sums, nonzero = ", ".join(f"sum({c})" for c in counts), " OR ".join(f"sum({c}) <> 0" for c in counts)
    cursor.execute(
        f"WITH keys AS (SELECT {key} FROM {table} GROUP BY {key} HAVING count(*) > 1),"
        f" gone AS (DELETE FROM {table} t USING keys k WHERE {on}"
        f" RETURNING {', '.join(f't.{c}' for c in keys + counts)}),"
        f" folded AS (INSERT INTO {table} ({', '.join(keys + counts)}) SELECT {key}, {sums} FROM gone"
        f" GROUP BY {key} HAVING {nonzero} RETURNING 1)"
        " SELECT (SELECT count(*) FROM gone) - (SELECT count(*) FROM folded)"
    )
    return cursor.fetchone()[0]

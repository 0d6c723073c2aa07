// The PostgreSQL benchmark: written in its own change (issue 27).
print("garage-bench-postgres: not written yet")

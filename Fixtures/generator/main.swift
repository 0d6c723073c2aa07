// Placeholder: the golden-fixture generator is being written (issue 5).
print("garage-fixtures: not written yet")

"""`make oracle`: the authors' own code as the oracle for ours (measurement only; docs/oracle.md)."""

"""mcpfast benchmark suite (pyperf); see bench/run.py and scripts/bench."""

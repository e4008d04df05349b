hsmc audit export --out trail.jsonl >/dev/null
